/**
 * /api/pools: the shared container budget, each server's share of it, every
 * pool, and resizing or draining a unit. A unit is a server (its shared
 * pools, whatever their container shape) or one tool that has containers of
 * its own (`isolation: "tool"`, a strict tool). A size is validated once and
 * completely — its shape (the schema the store keeps) and this control
 * plane's caps — before the store is even read, so a refused size changes
 * nothing. An operator sees its own servers' pools only (and no engine placement,
 * which names every server).
 */
import { McphostError } from '../errors.js';
import { sendJson } from '../http/index.js';
import type { RouteContext } from '../http/index.js';
import { poolUnitOf } from '../sandbox/index.js';
import { readJson, type AdminContext } from './admin-context.js';
import { PoolSettingsBody } from './schemas.js';
import { requireServer } from './server-routes.js';
import { snapshots } from './audit-snapshots.js';
import { visibleServers, type AdminRouter } from './permissions.js';

export function addPoolRoutes(router: AdminRouter, context: AdminContext): void {
  const { config, store } = context;
  const before = snapshots(context).pool;

  router.add('GET', '/api/pools', { permission: 'read' }, async ({ res, principal }) => {
    const visible = visibleServers(principal);
    const mine = (server: unknown) =>
      visible === undefined || (typeof server === 'string' && visible.includes(server));
    sendJson(res, 200, {
      budget: context.pools.budgetStats(),
      servers: context.pools.serverStats().filter((item) => mine(serverOf(item))),
      pools: context.pools.stats().filter((item) => mine(serverOf(item))),
      // Sizes an admin saved, by unit, whether or not a pool of the unit runs now
      // (the pools hold every stored size: no store read per poll of the dashboard).
      sizes: context.pools.sizes().filter((size) => mine(size.unit.split('/')[0])),
      ...(context.engines === undefined || visible !== undefined
        ? {}
        : { engines: context.engines() }),
      defaults: {
        minWarm: config.poolMinWarm,
        maxSize: config.poolMaxSize,
        maxSizeCap: config.poolMaxSizeCap,
        genericPoolSize: config.genericPoolSize,
        maxInvocationsPerContainer: config.poolMaxInvocations,
        heapRetireShare: config.poolHeapRetireShare,
        idleTtlMs: config.poolIdleTtlMs,
      },
    });
  });

  const resize = async (req: RouteContext['req'], sub: string, tool: string) => {
    const unit = poolUnitOf(sub, tool);
    // Complete before the store is touched: shape, minWarm ≤ maxSize, and the caps
    // (POOL_MAX_SIZE_CAP may exceed POOL_MAX_TOTAL). The store re-checks the shape at
    // its own boundary; applying the size re-checks the caps, which start-up relies on.
    const size = await readJson(
      req,
      config.maxBodyBytes,
      PoolSettingsBody,
      `pool settings of ${unit}`,
    );
    context.pools.checkPoolSize(unit, size);
    const server = await requireServer(context, sub);
    const saved = tool ? await store.getTool(sub, tool) : undefined;
    if (tool && !saved) {
      throw new McphostError('ERR_NOT_FOUND', `tool "${tool}" does not exist on server "${sub}"`);
    }
    const stored = await store.putPoolSettings(sub, tool, size);
    context.pools.configurePool(unit, size);
    const warnings: string[] = [];
    const ownPools = server.isolation === 'tool';
    if (tool && !ownPools && !saved?.strict) {
      warnings.push(
        `${unit} runs in the shared pools of ${sub} (isolation "server"): this size applies once the server uses isolation "tool" or the tool is strict; size the shared pools with PUT /api/pools/${sub}`,
      );
    }
    return { unit, ...stored, warnings };
  };

  const resizeRule = { permission: 'operate', audit: { action: 'pool.resize', before } } as const;
  const drainRule = { permission: 'operate', audit: { action: 'pool.drain' } } as const;
  router.add('PUT', '/api/pools/:sub', resizeRule, async ({ req, res, params }) => {
    sendJson(res, 200, await resize(req, params.sub!, ''));
  });

  router.add('PUT', '/api/pools/:sub/:tool', resizeRule, async ({ req, res, params }) => {
    sendJson(res, 200, await resize(req, params.sub!, params.tool!));
  });

  router.add('POST', '/api/pools/:sub/drain', drainRule, async ({ res, params }) => {
    await requireServer(context, params.sub!);
    await context.pools.drain(poolUnitOf(params.sub!));
    sendJson(res, 200, { drained: poolUnitOf(params.sub!) });
  });

  router.add('POST', '/api/pools/:sub/:tool/drain', drainRule, async ({ res, params }) => {
    await requireServer(context, params.sub!);
    const unit = poolUnitOf(params.sub!, params.tool!);
    await context.pools.drain(unit);
    sendJson(res, 200, { drained: unit });
  });
}

/** The server a pool or share statistic belongs to (absent for the generic pool). */
function serverOf(item: unknown): unknown {
  return (item as { server?: unknown } | null)?.server;
}
