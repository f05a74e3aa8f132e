/**
 * The warm-pool scheduler against the real Docker engine and runner image,
 * with small budgets: the isolation unit is the server, refills never evict,
 * an idle system starts nothing, one server cannot take another's last warm
 * container nor the whole budget, starts are bounded, and a container whose
 * heap stays high is retired.
 */
import Dockerode from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxDriver } from '../../control-plane/sandbox/driver.js';
import type { ToolRuntime } from '../../control-plane/sandbox/invocation.js';
import type { SandboxManager } from '../../control-plane/sandbox/sandbox-manager.js';
import { DockerSandbox } from '../../control-plane/sandbox/docker/docker-sandbox.js';
import { dockerManager, hooks, runnerImage, runtime, uniquePlaneName } from './docker-helpers.js';

const docker = new Dockerode();
const planeName = uniquePlaneName('scheduler');
let image: string;
const closers: Array<() => Promise<unknown>> = [];

function manager(overrides: Parameters<typeof dockerManager>[2] = {}): {
  sandbox: SandboxManager;
  driver: DockerSandbox;
} {
  const created = dockerManager(image, planeName, overrides);
  closers.push(async () => {
    await created.sandbox.close();
    await created.driver.close();
  });
  return created;
}

/** A tool of `server` that shares the server's containers (the default isolation). */
function serverTool(server: string, tool: string, code: string, extra: Partial<ToolRuntime> = {}) {
  return runtime(`${server}/${tool}`, code, { isolation: 'server', ...extra });
}

function serverFigures(sandbox: SandboxManager, server: string) {
  return sandbox.serverStats().find((entry) => entry.server === server);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  image = await runnerImage();
});

afterAll(async () => {
  for (const close of closers.splice(0)) await close();
  const deadline = Date.now() + 15_000;
  const leftovers = async () =>
    (await docker.listContainers({ all: true, filters: { label: [`mcphost.plane=${planeName}`] } }))
      .length;
  while ((await leftovers()) > 0 && Date.now() < deadline) await sleep(200);
  expect(await leftovers()).toBe(0);
});

describe('warm-pool scheduler on Docker', () => {
  it('one container serves the tools of one server; isolation "tool" separates them; servers never share', async () => {
    const { sandbox } = manager({
      defaults: { minWarm: 1, maxSize: 2, limits: runtime('x', '').limits },
    });
    const first = await sandbox.invoke(serverTool('alpha', 'one', 'return 1'), hooks());
    const second = await sandbox.invoke(serverTool('alpha', 'two', 'return 2'), hooks());
    const own = await sandbox.invoke(
      serverTool('alpha', 'three', 'return 3', { isolation: 'tool' }),
      hooks(),
    );
    const other = await sandbox.invoke(serverTool('beta', 'one', 'return 1'), hooks());
    expect([first.value, second.value, own.value, other.value]).toEqual([1, 2, 3, 1]);
    expect(second.instanceId).toBe(first.instanceId);
    expect(own.instanceId).not.toBe(first.instanceId);
    expect(other.instanceId).not.toBe(first.instanceId);
    expect(other.instanceId).not.toBe(own.instanceId);
    // Every container is labelled with its pool; no container carries two servers' pools.
    const labelled = await docker.listContainers({
      filters: { label: [`mcphost.plane=${planeName}`] },
    });
    const byId = new Map(labelled.map((c) => [c.Id, c.Labels['mcphost.pool'] ?? '']));
    expect(byId.get(first.instanceId!)).toMatch(/^alpha@/);
    expect(byId.get(own.instanceId!)).toMatch(/^alpha\/three@/);
    expect(byId.get(other.instanceId!)).toMatch(/^beta@/);
  });

  it("a tool's secrets are absent from another tool's context in the same container", async () => {
    const { sandbox } = manager({
      defaults: { minWarm: 1, maxSize: 1, limits: runtime('x', '').limits },
    });
    const writer = await sandbox.invoke(
      serverTool(
        'gamma',
        'writer',
        'globalThis.stash = env.API_KEY; Object.prototype.leak = env.API_KEY; return Object.keys(env)',
        { env: { API_KEY: 'sk-secret-of-writer' } },
      ),
      hooks(),
    );
    const reader = await sandbox.invoke(
      serverTool(
        'gamma',
        'reader',
        'return { keys: Object.keys(env), stash: typeof stash, leak: ({}).leak ?? null, global: JSON.stringify(Object.getOwnPropertyNames(globalThis)).includes("sk-secret") }',
      ),
      hooks(),
    );
    expect(writer.value).toEqual(['API_KEY']);
    expect(reader.instanceId).toBe(writer.instanceId);
    expect(reader.value).toEqual({ keys: [], stash: 'undefined', leak: null, global: false });
    expect(JSON.stringify(reader)).not.toContain('sk-secret-of-writer');
  });

  it('an idle system starts no container: the TTL never retires below minWarm', async () => {
    const { sandbox } = manager({
      defaults: { minWarm: 1, maxSize: 2, idleTtlMs: 200, limits: runtime('x', '').limits },
      generic: { size: 2 },
    });
    await sandbox.start();
    for (const server of ['idle-a', 'idle-b', 'idle-c']) {
      expect((await sandbox.invoke(serverTool(server, 'one', 'return 1'), hooks())).ok).toBe(true);
    }
    // Let refills and the generic pool settle, then watch several TTLs go by.
    await expect
      .poll(() => sandbox.budgetStats().starts.running + sandbox.budgetStats().starts.queued, {
        timeout: 10_000,
      })
      .toBe(0);
    await sleep(500);
    const startsBefore = sandbox.stats().reduce((sum, pool) => sum + pool.started, 0);
    const idsBefore = sandbox.stats().map((pool) => [pool.poolKey, pool.total]);
    await sleep(2_000); // ten TTLs, several sweeps
    expect(sandbox.stats().reduce((sum, pool) => sum + pool.started, 0)).toBe(startsBefore);
    expect(sandbox.stats().map((pool) => [pool.poolKey, pool.total])).toEqual(idsBefore);
    for (const server of ['idle-a', 'idle-b', 'idle-c']) {
      expect(serverFigures(sandbox, server)?.containers.total).toBe(1);
    }
  });

  it('background refills use free budget only and never evict', async () => {
    const { sandbox } = manager({
      defaults: { minWarm: 2, maxSize: 2, limits: runtime('x', '').limits },
      caps: { maxSizePerPool: 2, maxTotal: 3, serverShare: 1 },
    });
    expect((await sandbox.invoke(serverTool('refill-a', 'one', 'return 1'), hooks())).ok).toBe(
      true,
    );
    await expect.poll(() => serverFigures(sandbox, 'refill-a')?.containers.warm).toBe(2);
    expect((await sandbox.invoke(serverTool('refill-b', 'one', 'return 1'), hooks())).ok).toBe(
      true,
    );
    await sleep(1_000); // b's refill wants a second container; the budget (3) has no room
    expect(serverFigures(sandbox, 'refill-a')?.containers.total).toBe(2);
    expect(serverFigures(sandbox, 'refill-b')?.containers.total).toBe(1);
    expect(serverFigures(sandbox, 'refill-a')?.evictions.lastMinute).toBe(0);
    const pools = sandbox.stats();
    expect(pools.every((pool) => !pool.retired.evicted)).toBe(true);
  });

  it("one server's slow calls take neither another server's warm container nor the whole budget", async () => {
    // The case: POOL_MAX_TOTAL=8, one server's 12 slow calls, another server's warm tool.
    const { sandbox } = manager({
      defaults: {
        minWarm: 1,
        maxSize: 8,
        queueTimeoutMs: 30_000,
        limits: { ...runtime('x', '').limits, timeoutMs: 20_000 },
      },
      caps: { maxSizePerPool: 8, maxTotal: 8 },
    });
    const warm = await sandbox.invoke(serverTool('quiet', 'ping', 'return "pong"'), hooks());
    expect(warm.ok).toBe(true);
    const slow = Array.from({ length: 12 }, () =>
      sandbox.invoke(
        serverTool('busy', 'sleep', 'await new Promise((r) => setTimeout(r, 4000)); return 1'),
        hooks(),
      ),
    );
    await expect
      .poll(() => serverFigures(sandbox, 'busy')?.containers.busy ?? 0, { timeout: 15_000 })
      .toBe(4);
    const answered = await sandbox.invoke(serverTool('quiet', 'ping', 'return "pong"'), hooks());
    // Served by its own warm container, not one started for it.
    expect(answered).toMatchObject({ ok: true, value: 'pong', instanceId: warm.instanceId });
    // The busy server holds at most its ceiling (half the budget by default).
    expect(serverFigures(sandbox, 'busy')?.containers.total).toBeLessThanOrEqual(4);
    expect(serverFigures(sandbox, 'busy')?.share.ceiling).toBe(4);
    expect(serverFigures(sandbox, 'quiet')?.evictions.lastMinute).toBe(0);
    const outcomes = await Promise.all(slow);
    expect(outcomes.every((outcome) => outcome.ok)).toBe(true);
  }, 60_000);

  it('without a ceiling, a lease evicts only from servers above their fair share', async () => {
    const { sandbox } = manager({
      defaults: {
        minWarm: 1,
        maxSize: 4,
        queueTimeoutMs: 30_000,
        limits: { ...runtime('x', '').limits, timeoutMs: 20_000 },
      },
      caps: { maxSizePerPool: 4, maxTotal: 4, serverShare: 1 },
    });
    const warm = await sandbox.invoke(serverTool('holder', 'ping', 'return 1'), hooks());
    expect(warm.ok).toBe(true);
    // 'greedy' grows into the rest of the budget with slow calls.
    const slow = Array.from({ length: 6 }, () =>
      sandbox.invoke(
        serverTool('greedy', 'sleep', 'await new Promise((r) => setTimeout(r, 3000)); return 1'),
        hooks(),
      ),
    );
    await expect
      .poll(() => serverFigures(sandbox, 'greedy')?.containers.busy ?? 0, { timeout: 15_000 })
      .toBe(3);
    // holder (1 container, share 2) keeps its warm container; greedy (3, share 2) cannot evict it.
    expect(serverFigures(sandbox, 'holder')?.containers.total).toBe(1);
    const answered = await sandbox.invoke(serverTool('holder', 'ping', 'return 2'), hooks());
    expect(answered).toMatchObject({ ok: true, value: 2, instanceId: warm.instanceId });
    await Promise.all(slow);
    // Now greedy's idle containers are above its share: a third server's lease may evict one.
    const third = await sandbox.invoke(serverTool('third', 'ping', 'return 3'), hooks());
    expect(third).toMatchObject({ ok: true, value: 3 });
    expect(serverFigures(sandbox, 'greedy')?.evictions.lastMinute).toBe(1);
    expect(serverFigures(sandbox, 'holder')?.evictions.lastMinute).toBe(0);
  }, 60_000);

  it('starts at most startConcurrency containers at once, and all callers are served', async () => {
    let inFlight = 0;
    let most = 0;
    const { sandbox, driver } = manager({
      defaults: { minWarm: 0, maxSize: 1, limits: runtime('x', '').limits },
      startConcurrency: 1,
    });
    const start = driver.start.bind(driver);
    (driver as unknown as SandboxDriver).start = async (spec) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      try {
        return await start(spec);
      } finally {
        inFlight -= 1;
      }
    };
    const outcomes = await Promise.all(
      ['s1', 's2', 's3'].map((server) =>
        sandbox.invoke(serverTool(server, 'one', `return "${server}"`), hooks()),
      ),
    );
    expect(outcomes.map((outcome) => outcome.value)).toEqual(['s1', 's2', 's3']);
    expect(most).toBe(1);
  });

  it('retires a container whose heap stays above its share after three invocations', async () => {
    const { sandbox } = manager({
      defaults: { minWarm: 0, maxSize: 1, heapRetireShare: 0.2, limits: runtime('x', '').limits },
    });
    // ~32 MB of doubles on the V8 heap when the result is sent: above a fifth of the ~89 MB heap limit.
    const hog = serverTool('heapy', 'hog', 'const a = new Array(4e6).fill(1.5); return a.length');
    const ids = [];
    for (let index = 0; index < 3; index += 1) {
      const outcome = await sandbox.invoke(hog, hooks());
      expect(outcome.ok).toBe(true);
      ids.push(outcome.instanceId);
    }
    expect(new Set(ids).size).toBe(1);
    const pool = sandbox.stats().find((entry) => entry.server === 'heapy');
    expect(pool?.retired).toEqual({ heap: 1 });
  });
});
