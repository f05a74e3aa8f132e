/**
 * SandboxManager against the real Docker engine with the real harness and
 * runner image: concurrency, queueing, strict mode, retirement, limits,
 * brokered calls, cancellation and reaping of a killed control plane's leftovers.
 */
import Dockerode from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerSandbox } from '../../control-plane/sandbox/docker/docker-sandbox.js';
import { SandboxManager } from '../../control-plane/sandbox/sandbox-manager.js';
import {
  TEST_LIMITS,
  dockerManager,
  hooks,
  runnerImage,
  runtime,
  uniquePlaneName,
} from './docker-helpers.js';
import {
  DEFAULT_CAP_EXTRAS,
  DEFAULT_POOL_DEFAULTS,
  DEFAULT_START_CONCURRENCY,
} from '../support/config-defaults.js';

const docker = new Dockerode();
const planeName = uniquePlaneName('pools');
let image: string;
const closers: Array<() => Promise<unknown>> = [];

function manager(overrides: Parameters<typeof dockerManager>[2] = {}): SandboxManager {
  const { driver, sandbox } = dockerManager(image, planeName, overrides);
  closers.push(async () => {
    await sandbox.close();
    await driver.close();
  });
  return sandbox;
}

async function containersOfPlane(): Promise<string[]> {
  const listed = await docker.listContainers({
    all: true,
    filters: { label: [`mcphost.plane=${planeName}`] },
  });
  return listed.map((container) => container.Id);
}

beforeAll(async () => {
  image = await runnerImage();
});

afterAll(async () => {
  for (const close of closers.splice(0)) await close();
  // Anything still labelled with this file's plane is a leak.
  const deadline = Date.now() + 15_000;
  while ((await containersOfPlane()).length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  expect(await containersOfPlane()).toEqual([]);
});

describe('SandboxManager on Docker', () => {
  it('answers 20 concurrent callers on a pool of 2, each with its own result', async () => {
    const sandbox = manager();
    // Each call holds its container a little, so both containers take turns.
    const tool = runtime(
      'pools/double',
      'const end = Date.now() + 30; while (Date.now() < end) {} return params.n * 2;',
    );
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, n) => sandbox.invoke(tool, hooks({ n }))),
    );
    expect(outcomes.map((outcome) => outcome.error)).toEqual(Array(20).fill(undefined));
    expect(outcomes.map((outcome) => outcome.value)).toEqual(
      Array.from({ length: 20 }, (_, n) => n * 2),
    );
    const stats = sandbox.stats().find((pool) => pool.poolKey.startsWith('pools/double@'));
    expect(stats?.started).toBe(2);
    expect(new Set(outcomes.map((outcome) => outcome.instanceId)).size).toBeLessThanOrEqual(2);
    expect(Math.max(...outcomes.map((outcome) => outcome.queueMs))).toBeGreaterThan(30);
  });

  it('fails a waiter with ERR_NO_CAPACITY when the wait runs out, then serves again', async () => {
    const sandbox = manager({
      defaults: { minWarm: 0, maxSize: 1, queueTimeoutMs: 300, limits: runtime('x', '').limits },
    });
    // Warm first: the 300 ms wait also bounds waiting for a cold start.
    sandbox.configurePool('pools/busy', { minWarm: 1, maxSize: 1 });
    await sandbox.invoke(runtime('pools/busy', 'return 0;'), hooks()); // creates the pool
    await expect
      .poll(() => sandbox.stats().find((pool) => pool.poolKey.startsWith('pools/busy@'))?.warm, {
        timeout: 20_000,
      })
      .toBe(1);
    const busyCode = 'const end = Date.now() + 1500; while (Date.now() < end) {} return "done";';
    const busy = sandbox.invoke(runtime('pools/busy', busyCode), hooks());
    await expect
      .poll(() => sandbox.stats().find((pool) => pool.poolKey.startsWith('pools/busy@'))?.busy, {
        timeout: 15_000,
      })
      .toBe(1);
    const waiting = await sandbox.invoke(runtime('pools/busy', 'return 1;'), hooks());
    expect(waiting.error).toEqual({
      code: 'ERR_NO_CAPACITY',
      message:
        'no capacity: pool pools/busy has 1 of 1 containers busy and the wait of 300 ms ran out',
    });
    expect((await busy).value).toBe('done');
    expect((await sandbox.invoke(runtime('pools/busy', 'return 2;'), hooks())).value).toBe(2);
  });

  it('strict mode runs each invocation in a fresh container and removes it', async () => {
    const sandbox = manager();
    const tool = runtime('pools/strict', 'return 1;', { strict: true });
    const ids: string[] = [];
    for (let index = 0; index < 3; index += 1) {
      const outcome = await sandbox.invoke(tool, hooks());
      expect(outcome.value).toBe(1);
      ids.push(outcome.instanceId ?? '');
    }
    expect(new Set(ids).size).toBe(3);
    await expect
      .poll(async () => (await containersOfPlane()).filter((id) => ids.includes(id)), {
        timeout: 15_000,
      })
      .toEqual([]);
  });

  it('retires a container after maxInvocationsPerContainer', async () => {
    const sandbox = manager({
      defaults: {
        minWarm: 0,
        maxSize: 1,
        maxInvocationsPerContainer: 2,
        limits: runtime('x', '').limits,
      },
    });
    const tool = runtime('pools/aging', 'return 1;');
    const ids: Array<string | undefined> = [];
    for (let index = 0; index < 3; index += 1)
      ids.push((await sandbox.invoke(tool, hooks())).instanceId);
    expect(ids[0]).toBe(ids[1]);
    expect(ids[2]).not.toBe(ids[1]);
    expect(
      sandbox.stats().find((pool) => pool.poolKey.startsWith('pools/aging@'))?.retired,
    ).toEqual({
      'max-invocations': 1,
    });
  });

  it('a timeout names the limit, retires the container, and the pool recovers', async () => {
    const sandbox = manager({
      defaults: { minWarm: 0, maxSize: 1, timeoutGraceMs: 300, limits: runtime('x', '').limits },
    });
    const slow = runtime('pools/limits', 'await null; while (true) {}', {
      limits: { timeoutMs: 700 } as never,
    });
    const outcome = await sandbox.invoke(slow, hooks());
    expect(outcome.error).toMatchObject({
      code: 'ERR_TOOL_TIMEOUT',
      message: 'the tool exceeded its time limit of 700 ms',
    });
    // The 700 ms limit, not a default, ended the endless loop: a generous bound, not a speed check.
    expect(outcome.durationMs).toBeLessThan(5_000);
    const next = await sandbox.invoke(
      runtime('pools/limits', 'return "ok";', { limits: { timeoutMs: 700 } as never }),
      hooks(),
    );
    expect(next).toMatchObject({ ok: true, value: 'ok' });
    expect(next.instanceId).not.toBe(outcome.instanceId);
  });

  it('running out of memory names the memory limit', async () => {
    const sandbox = manager();
    const bomb = runtime(
      'pools/memory',
      'const a = []; while (true) a.push(new Array(1e6).fill(a.length));',
      {
        limits: { memoryMb: 96, timeoutMs: 20_000 } as never, // time enough to fill memory on a loaded engine
      },
    );
    const outcome = await sandbox.invoke(bomb, hooks());
    expect(outcome.error).toMatchObject({
      code: 'ERR_TOOL_MEMORY',
      message: 'the tool exceeded its memory limit of 96 MiB',
    });
  });

  it('enforces the result size limit and reports syntax errors with their position', async () => {
    const sandbox = manager();
    const big = await sandbox.invoke(
      runtime('pools/result', 'return "x".repeat(5000);', {
        limits: { maxResultBytes: 1000 } as never,
      }),
      hooks(),
    );
    expect(big.error?.code).toBe('ERR_RESULT_TOO_LARGE');
    const broken = await sandbox.invoke(
      runtime('pools/result', 'const a = 1;\nreturn a +;'),
      hooks(),
    );
    expect(broken.error).toMatchObject({ code: 'ERR_TOOL_SYNTAX', line: 2 });
    const thrown = await sandbox.invoke(
      runtime('pools/result', 'throw new Error("no such user");'),
      hooks(),
    );
    expect(thrown.error).toMatchObject({ code: 'ERR_TOOL_ERROR', message: 'no such user' });
    expect((await sandbox.invoke(runtime('pools/result', 'return null;'), hooks())).ok).toBe(true);
  });

  it('brokers sdk.http through onCall and passes env and params', async () => {
    const sandbox = manager();
    const seen: unknown[] = [];
    const tool = runtime(
      'pools/broker',
      'console.log("calling", params.path); const r = await sdk.http({ url: "https://api.test" + params.path, headers: { authorization: env.TOKEN } }); return { status: r.status(), body: r.body() };',
      { env: { TOKEN: 'secret-1' } },
    );
    const outcome = await sandbox.invoke(
      tool,
      hooks(
        { path: '/v1' },
        {
          onCall: async (operation, args) => {
            seen.push(operation, args);
            return { status: 201, headers: {}, body: 'created' };
          },
        },
      ),
    );
    expect(outcome).toMatchObject({ ok: true, value: { status: 201, body: 'created' } });
    expect(seen[0]).toBe('http');
    expect(seen[1]).toMatchObject({
      url: 'https://api.test/v1',
      headers: { authorization: 'secret-1' },
    });
    expect(outcome.logs).toEqual([expect.objectContaining({ level: 'log', text: 'calling /v1' })]);
  });

  it('bounds the sdk calls one invocation has in flight; the ones past it fail in the tool', async () => {
    const sandbox = manager({
      defaults: { minWarm: 0, maxSize: 1, maxConcurrentCalls: 4, limits: TEST_LIMITS },
    });
    let inFlight = 0;
    let most = 0;
    const tool = runtime(
      'pools/fanout',
      `const settled = await Promise.allSettled(
         Array.from({ length: 10 }, (_, i) => sdk.http({ url: 'https://api.test/' + i })));
       return settled.map((s) => (s.status === 'fulfilled' ? s.value.status() : s.reason.code));`,
    );
    const outcome = await sandbox.invoke(
      tool,
      hooks(
        {},
        {
          onCall: async () => {
            most = Math.max(most, ++inFlight);
            // Held until all ten were sent, so the first four are still in flight.
            await new Promise((resolve) => setTimeout(resolve, 300));
            inFlight -= 1;
            return { status: 200, headers: {}, body: '' };
          },
        },
      ),
    );
    expect(outcome.ok).toBe(true);
    const codes = outcome.value as (number | string)[];
    expect(codes.filter((code) => code === 200)).toHaveLength(4);
    expect(codes.filter((code) => code === 'ERR_TOO_MANY_CALLS')).toHaveLength(6);
    expect(most).toBe(4);
    // The container still serves: awaited calls one after another are never refused.
    const sequential = await sandbox.invoke(
      runtime(
        'pools/fanout',
        'for (let i = 0; i < 6; i++) await sdk.http({ url: "https://api.test" }); return "ok"',
      ),
      hooks({}, { onCall: async () => ({ status: 200, headers: {}, body: '' }) }),
    );
    expect(sequential).toMatchObject({ ok: true, value: 'ok' });
  });

  it('cancellation gives ERR_CANCELLED and retires the container', async () => {
    const sandbox = manager();
    const controller = new AbortController();
    const running = sandbox.invoke(
      runtime('pools/cancel', 'await new Promise(() => {});'),
      hooks({}, { signal: controller.signal }),
    );
    await expect
      .poll(() => sandbox.stats().find((pool) => pool.poolKey.startsWith('pools/cancel@'))?.busy, {
        timeout: 15_000,
      })
      .toBe(1);
    controller.abort();
    const outcome = await running;
    expect(outcome.error).toMatchObject({ code: 'ERR_CANCELLED' });
    expect(
      sandbox.stats().find((pool) => pool.poolKey.startsWith('pools/cancel@'))?.retired,
    ).toEqual({
      cancelled: 1,
    });
  });

  it('a new control plane reaps the containers a killed one left behind', async () => {
    const plane = uniquePlaneName('reap');
    const abandoned = new DockerSandbox({ image, planeName: plane });
    // The "killed" plane: containers started, never closed.
    const left = await Promise.all([
      abandoned.start({ labels: {}, memoryMb: 64, cpus: 0.25, pids: 16 }),
      abandoned.start({ labels: {}, memoryMb: 64, cpus: 0.25, pids: 16 }),
    ]);
    const { driver, sandbox } = dockerManager(image, plane, { generic: { size: 1 } });
    closers.push(async () => {
      await sandbox.close();
      await driver.close();
      await abandoned.close();
    });
    const reap = driver.reapLeftovers.bind(driver);
    let reaped = -1;
    driver.reapLeftovers = async () => (reaped = await reap());
    await sandbox.start();
    expect(reaped).toBe(2);
    const remaining = await docker.listContainers({
      all: true,
      filters: { label: [`mcphost.plane=${plane}`] },
    });
    expect(remaining.map((container) => container.Id)).not.toContain(left[0]?.id);
    expect(remaining.map((container) => container.Id)).not.toContain(left[1]?.id);
    await expect.poll(() => sandbox.stats()[0]?.warm, { timeout: 20_000 }).toBe(1);
  });

  it('a tool adopts a warm generic container, and the generic pool refills', async () => {
    const sandbox = manager({ generic: { size: 1 } });
    await sandbox.start();
    await expect.poll(() => sandbox.stats()[0]?.warm, { timeout: 20_000 }).toBe(1);
    const outcome = await sandbox.invoke(runtime('pools/adopter', 'return 7;'), hooks());
    expect(outcome.value).toBe(7);
    const adopter = sandbox.stats().find((pool) => pool.poolKey.startsWith('pools/adopter@'));
    expect(adopter).toMatchObject({ started: 0, total: 1 });
    await expect.poll(() => sandbox.stats()[0]?.warm, { timeout: 20_000 }).toBe(1);
    const other = await sandbox.invoke(runtime('pools/other', 'return 8;'), hooks());
    expect(other.instanceId).not.toBe(outcome.instanceId);
  });

  it('fails fast with ERR_SANDBOX_UNAVAILABLE when the engine cannot be reached', async () => {
    const unreachable = new DockerSandbox({
      image,
      planeName: uniquePlaneName('down'),
      docker: new Dockerode({ socketPath: '/nonexistent/docker.sock' }),
    });
    const sandbox = new SandboxManager({
      driver: unreachable,
      defaults: {
        ...DEFAULT_POOL_DEFAULTS,
        minWarm: 0,
        maxSize: 1,
        limits: runtime('x', '').limits,
      },
      generic: { size: 1 },
      startConcurrency: DEFAULT_START_CONCURRENCY,
      reapIntervalMs: 30_000,
      caps: { ...DEFAULT_CAP_EXTRAS, maxSizePerPool: 2, maxTotal: 2 },
    });
    closers.push(() => sandbox.close());
    await sandbox.start();
    const outcome = await sandbox.invoke(runtime('pools/down', 'return 1;'), hooks());
    // Failing fast: a caller left waiting for a container would get ERR_NO_CAPACITY at the queue timeout.
    expect(outcome.error).toMatchObject({
      code: 'ERR_SANDBOX_UNAVAILABLE',
      message: /^sandbox unavailable/,
    });
    expect(sandbox.healthy).toBe(false);
  });
});
