/**
 * /api/invocations: the invocation log, newest first, flushed before it is
 * read. An operator reads its servers' entries only: naming another server
 * is refused, naming none lists its own.
 */
import { McphostError } from '../errors.js';
import { sendJson } from '../http/index.js';
import { parseInput } from '../http/index.js';
import type { AdminContext } from './admin-context.js';
import { visibleServers, type AdminRouter } from './permissions.js';
import { InvocationsQuery } from './schemas.js';

export function addInvocationRoutes(router: AdminRouter, context: AdminContext): void {
  const { store } = context;

  router.add('GET', '/api/invocations', { permission: 'read' }, async ({ res, url, principal }) => {
    const query = parseInput(InvocationsQuery, Object.fromEntries(url.searchParams), 'query');
    const visible = visibleServers(principal);
    if (visible !== undefined && query.server !== undefined && !visible.includes(query.server)) {
      throw new McphostError('ERR_FORBIDDEN', `this account may not read server "${query.server}"`);
    }
    await context.flushInvocationLog();
    if (visible === undefined || query.server !== undefined) {
      sendJson(res, 200, { invocations: await store.listInvocations(query) });
      return;
    }
    // One page per server, merged newest first and cut to the limit.
    const pages = await Promise.all(
      visible.map((server) => store.listInvocations({ ...query, server })),
    );
    const invocations = pages
      .flat()
      .sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0))
      .slice(0, query.limit ?? 100);
    sendJson(res, 200, { invocations });
  });
}
