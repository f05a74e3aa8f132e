/**
 * The container budget counts the memory containers commit (the sum of their
 * limits, HostConfig.Memory as the engine has it), not a container count
 * times an assumed size: a server whose tools ask for large containers holds
 * at most its share of the memory, and the memory of all servers together
 * stays within POOL_MAX_MEMORY_MB. Real Docker engine, real runner image.
 */
import Dockerode from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolRuntime } from '../../control-plane/sandbox/invocation.js';
import type { SandboxManager } from '../../control-plane/sandbox/sandbox-manager.js';
import { dockerManager, hooks, runnerImage, runtime, uniquePlaneName } from './docker-helpers.js';

const MiB = 1024 * 1024;
const docker = new Dockerode();
const planes: string[] = [];
let image: string;
const closers: Array<() => Promise<unknown>> = [];

/** A manager with a plane of its own, so each test counts only its own containers. */
function manager(overrides: Parameters<typeof dockerManager>[2]): {
  sandbox: SandboxManager;
  planeName: string;
} {
  const planeName = uniquePlaneName('memory');
  planes.push(planeName);
  const created = dockerManager(image, planeName, overrides);
  closers.push(async () => {
    await created.sandbox.close();
    await created.driver.close();
  });
  return { sandbox: created.sandbox, planeName };
}

/** A tool of `server` in its shared pool, with containers of `memoryMb`. */
function tool(server: string, memoryMb: number, code: string): ToolRuntime {
  return runtime(`${server}/t`, code, {
    isolation: 'server',
    limits: { ...runtime('x', '').limits, memoryMb, timeoutMs: 20_000 },
  });
}

/** HostConfig.Memory of this file's running containers, in MiB, by server. */
async function committedMemory(planeName: string): Promise<Map<string, number>> {
  const containers = await docker.listContainers({
    filters: { label: [`mcphost.plane=${planeName}`] },
  });
  const byServer = new Map<string, number>();
  for (const container of containers) {
    const inspected = await docker
      .getContainer(container.Id)
      .inspect()
      .catch(() => undefined);
    if (!inspected?.State.Running) continue;
    const server = (container.Labels['mcphost.pool'] ?? '').split('@')[0]!;
    byServer.set(server, (byServer.get(server) ?? 0) + inspected.HostConfig.Memory! / MiB);
  }
  return byServer;
}

/** The host's ceilings of these tests: one container fits a budget of 1 GiB. */
const limitCeilings = { memoryMb: 512, timeoutMs: 60_000 };

const sum = (values: Iterable<number>) => [...values].reduce((a, b) => a + b, 0);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Samples the engine until `done` settles; returns the largest figures seen. */
async function peakWhile(
  planeName: string,
  done: Promise<unknown>,
): Promise<{ total: number; of: Map<string, number> }> {
  let finished = false;
  void done.finally(() => (finished = true));
  const peak = { total: 0, of: new Map<string, number>() };
  while (!finished) {
    const now = await committedMemory(planeName);
    peak.total = Math.max(peak.total, sum(now.values()));
    for (const [server, mb] of now) peak.of.set(server, Math.max(peak.of.get(server) ?? 0, mb));
    await sleep(100);
  }
  return peak;
}

beforeAll(async () => {
  image = await runnerImage();
});

afterAll(async () => {
  for (const close of closers.splice(0)) await close();
  const deadline = Date.now() + 15_000;
  const leftovers = async () =>
    (await docker.listContainers({ all: true, filters: { label: ['mcphost.plane'] } })).filter(
      (container) => planes.includes(container.Labels['mcphost.plane'] ?? ''),
    ).length;
  while ((await leftovers()) > 0 && Date.now() < deadline) await sleep(200);
  expect(await leftovers()).toBe(0);
});

describe('the container budget counts memory', () => {
  it('a server of 256 MiB containers holds at most half of a 1 GiB budget; another server is served', async () => {
    const { sandbox, planeName } = manager({
      defaults: { minWarm: 0, maxSize: 8, queueTimeoutMs: 60_000, limits: runtime('x', '').limits },
      caps: { maxSizePerPool: 8, maxTotal: 16, maxMemoryMb: 1024, serverShare: 0.5, limitCeilings },
    });
    const slow = 'await new Promise((r) => setTimeout(r, 1500)); return 1';
    const calls = Promise.all(
      Array.from({ length: 8 }, () => sandbox.invoke(tool('hungry', 256, slow), hooks())),
    );
    const quiet = (async () => {
      await sleep(1_000);
      return sandbox.invoke(tool('quiet', 128, 'return "pong"'), hooks());
    })();
    const peak = await peakWhile(planeName, Promise.all([calls, quiet]));
    expect((await calls).every((outcome) => outcome.ok)).toBe(true);
    expect(await quiet).toMatchObject({ ok: true, value: 'pong' });
    console.log(
      `[memory budget] peak committed: hungry ${peak.of.get('hungry')} MiB, all ${peak.total} MiB (budget 1024)`,
    );
    expect(peak.of.get('hungry')).toBeLessThanOrEqual(512);
    expect(peak.total).toBeLessThanOrEqual(1024);
    const budget = sandbox.budgetStats();
    expect(budget.memory).toMatchObject({ maxMb: 1024 });
    expect(budget.memory.usedMb).toBeLessThanOrEqual(1024);
  }, 90_000);

  it('three servers of 384 MiB containers never commit more than 1 GiB: the third evicts an idle one', async () => {
    const { sandbox, planeName } = manager({
      defaults: { minWarm: 1, maxSize: 2, queueTimeoutMs: 60_000, limits: runtime('x', '').limits },
      caps: { maxSizePerPool: 8, maxTotal: 16, maxMemoryMb: 1024, serverShare: 1, limitCeilings },
    });
    const work = (async () => {
      const outcomes = [];
      for (const server of ['one', 'two', 'three']) {
        outcomes.push(await sandbox.invoke(tool(server, 384, `return "${server}"`), hooks()));
      }
      return outcomes;
    })();
    const peak = await peakWhile(planeName, work);
    expect((await work).map((outcome) => outcome.value)).toEqual(['one', 'two', 'three']);
    console.log(`[memory budget] three servers: peak ${peak.total} MiB (budget 1024)`);
    expect(peak.total).toBeLessThanOrEqual(1024);
    // The third got its container by evicting an idle one of the others (the least
    // recently used is one's, unless a busy machine made a pool start a second).
    const stats = sandbox.serverStats();
    const evicted = stats
      .filter((entry) => entry.server === 'one' || entry.server === 'two')
      .reduce((sum, entry) => sum + entry.evictions.lastMinute, 0);
    expect(evicted, JSON.stringify(stats)).toBeGreaterThanOrEqual(1);
  }, 90_000);
});
