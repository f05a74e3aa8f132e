/** /api/invocations: the invocation log, newest first, flushed before it is read. */
import { sendJson } from '../http/index.js';
import type { Router } from '../http/index.js';
import { parseInput } from '../http/index.js';
import type { AdminContext } from './admin-context.js';
import { InvocationsQuery } from './schemas.js';

export function addInvocationRoutes(router: Router, context: AdminContext): void {
  const { store } = context;

  router.add('GET', '/api/invocations', async ({ res, url }) => {
    const query = parseInput(InvocationsQuery, Object.fromEntries(url.searchParams), 'query');
    await context.flushInvocationLog();
    sendJson(res, 200, { invocations: await store.listInvocations(query) });
  });
}
