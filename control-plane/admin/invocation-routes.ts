/**
 * /api/invocations: the invocation log, newest first, flushed before it is
 * read, with `refused`: the calls refused before any code ran, which the log
 * counts per server, code and time bucket instead of keeping a row each,
 * summed per server and code over the buckets kept
 * (INVOCATION_REFUSAL_RETENTION_HOURS; not split by tool or kind).
 * /api/invocations/refusals lists those counts bucket by bucket.
 * An operator reads its servers' entries only: naming another server is
 * refused, naming none lists its own.
 */
import { McphostError } from '../errors.js';
import { sendJson } from '../http/index.js';
import { parseInput } from '../http/index.js';
import type { AdminContext } from './admin-context.js';
import { visibleServers, type AdminRouter, type Principal } from './permissions.js';
import { InvocationsQuery, RefusalsQuery } from './schemas.js';

export function addInvocationRoutes(router: AdminRouter, context: AdminContext): void {
  const { store } = context;

  router.add('GET', '/api/invocations', { permission: 'read' }, async ({ res, url, principal }) => {
    const query = parseInput(InvocationsQuery, Object.fromEntries(url.searchParams), 'query');
    const servers = serversToRead(principal, query.server);
    await context.flushInvocationLog();
    const refused = await store.sumRefusals({ servers });
    if (servers === undefined || query.server !== undefined) {
      sendJson(res, 200, { invocations: await store.listInvocations(query), refused });
      return;
    }
    // One page per server, merged newest first and cut to the limit.
    const pages = await Promise.all(
      servers.map((server) => store.listInvocations({ ...query, server })),
    );
    const invocations = pages
      .flat()
      .sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0))
      .slice(0, query.limit ?? 100);
    sendJson(res, 200, { invocations, refused });
  });

  router.add(
    'GET',
    '/api/invocations/refusals',
    { permission: 'read' },
    async ({ res, url, principal }) => {
      const query = parseInput(RefusalsQuery, Object.fromEntries(url.searchParams), 'query');
      const servers = serversToRead(principal, query.server);
      await context.flushInvocationLog();
      const refusals = await store.listRefusals({
        servers,
        since: query.since,
        limit: query.limit,
      });
      sendJson(res, 200, {
        bucketSeconds: context.config.invocationRefusalBucketSeconds,
        refusals,
      });
    },
  );
}

/**
 * The servers whose entries `principal` reads: the one named, else an
 * operator's own, else (undefined) all. ERR_FORBIDDEN names a server the
 * operator may not read.
 */
function serversToRead(
  principal: Principal | undefined,
  server: string | undefined,
): string[] | undefined {
  const visible = visibleServers(principal);
  if (visible !== undefined && server !== undefined && !visible.includes(server)) {
    throw new McphostError('ERR_FORBIDDEN', `this account may not read server "${server}"`);
  }
  return server !== undefined ? [server] : visible === undefined ? undefined : [...visible];
}
