// Unit tests of the warm-pool state machine and the manager's policies, with an in-memory driver.
import { afterEach, describe, expect, it } from 'vitest';
import { resolveLimits } from '../../control-plane/sandbox/limits.js';
import type { InvokeHooks, ToolRuntime } from '../../control-plane/sandbox/invocation.js';
import type { PoolCaps, PoolDefaults } from '../../control-plane/sandbox/index.js';
import {
  GENERIC_POOL_KEY,
  SandboxManager,
  type SandboxManagerOptions,
} from '../../control-plane/sandbox/sandbox-manager.js';
import {
  DEFAULT_INVOCATION_LIMITS,
  DEFAULT_POOL_DEFAULTS,
  DEFAULT_CAP_EXTRAS,
  DEFAULT_START_CONCURRENCY,
} from '../support/config-defaults.js';
import { FakeDriver } from './fake-driver.js';

const limits = { ...DEFAULT_INVOCATION_LIMITS, timeoutMs: 300 };
const hooks: InvokeHooks = { params: {}, onCall: async () => ({}) };
const managers: SandboxManager[] = [];

/**
 * What a test may set: `defaults` and `caps` it gives replace this helper's own
 * choices; whatever they leave out is the configuration table's default.
 */
type ManagerOverrides = Partial<Omit<SandboxManagerOptions, 'defaults' | 'caps'>> & {
  defaults?: Partial<PoolDefaults>;
  caps?: Omit<PoolCaps, keyof typeof DEFAULT_CAP_EXTRAS> & Partial<typeof DEFAULT_CAP_EXTRAS>;
};

function manager(
  driver: FakeDriver,
  { defaults, caps, ...overrides }: ManagerOverrides = {},
): SandboxManager {
  const created = new SandboxManager({
    driver,
    defaults: {
      ...DEFAULT_POOL_DEFAULTS,
      ...(defaults ?? {
        minWarm: 0,
        maxSize: 2,
        maxQueue: 50,
        queueTimeoutMs: 2_000,
        timeoutGraceMs: 10,
        limits,
      }),
    },
    generic: { size: 0 },
    startConcurrency: DEFAULT_START_CONCURRENCY,
    reapIntervalMs: 30_000,
    caps: { ...DEFAULT_CAP_EXTRAS, ...(caps ?? { maxSizePerPool: 8, maxTotal: 16 }) },
    retry: { initialMs: 20, maxMs: 50 },
    ...overrides,
  });
  managers.push(created);
  return created;
}

function tool(
  code: string,
  { poolKey = 'srv/tool', ...extra }: Partial<ToolRuntime> & { poolKey?: string } = {},
): ToolRuntime {
  const [server = 'srv', name = 'tool'] = poolKey.split('/');
  return {
    server,
    tool: name,
    isolation: 'tool',
    runtime: 'runc',
    code,
    env: {},
    limits,
    strict: false,
    ...extra,
  };
}

/** The pool of a unit (`server` or `server/tool`), or the generic pool. */
function poolStats(sandbox: SandboxManager, key = 'srv/tool') {
  const stats = sandbox
    .stats()
    .find((pool) =>
      key === GENERIC_POOL_KEY
        ? pool.generic
        : !pool.generic && (pool.tool ? `${pool.server}/${pool.tool}` : pool.server) === key,
    );
  if (!stats) throw new Error(`no pool ${key}`);
  return stats;
}

/**
 * Lets pending timers run for 20 ms. Only for checks that something did NOT
 * happen (there is no event to wait for); anything that should happen is
 * waited for with `expect.poll`.
 */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

afterEach(async () => {
  await Promise.all(managers.splice(0).map((created) => created.close()));
});

describe('resolveLimits', () => {
  it('prefers tool, then server, then defaults, and keeps 0 as a value', () => {
    const merged = resolveLimits(
      { timeoutMs: 0 },
      { timeoutMs: 5, memoryMb: 256 },
      DEFAULT_INVOCATION_LIMITS,
    );
    expect(merged).toEqual({ ...DEFAULT_INVOCATION_LIMITS, timeoutMs: 0, memoryMb: 256 });
    expect(resolveLimits(undefined, undefined, DEFAULT_INVOCATION_LIMITS)).toEqual(
      DEFAULT_INVOCATION_LIMITS,
    );
  });
});

describe('SandboxManager with a fake driver', () => {
  it('answers 20 concurrent callers on a pool of 2, each with its own result', async () => {
    const driver = new FakeDriver();
    const sandbox = manager(driver);
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, index) => sandbox.invoke(tool(`value:${index}`), hooks)),
    );
    expect(Math.max(...outcomes.map((outcome) => outcome.queueMs))).toBeGreaterThan(0);
    expect(outcomes.map((outcome) => outcome.value)).toEqual(
      Array.from({ length: 20 }, (_, index) => index),
    );
    expect(driver.instances.length).toBe(2);
    // The second container may still be warming when the first has served everyone.
    await expect.poll(() => poolStats(sandbox).warm).toBe(2);
    expect(poolStats(sandbox)).toMatchObject({ busy: 0, total: 2, queued: 0, started: 2 });
  });

  it('fails a waiter with ERR_NO_CAPACITY when the queue wait runs out', async () => {
    const sandbox = manager(new FakeDriver(), {
      defaults: { minWarm: 0, maxSize: 1, queueTimeoutMs: 50, limits },
    });
    const busy = sandbox.invoke(tool('slow:200'), hooks);
    const waiting = await sandbox.invoke(tool('value:1'), hooks);
    expect(waiting.ok).toBe(false);
    expect(waiting.error).toEqual({
      code: 'ERR_NO_CAPACITY',
      message:
        'no capacity: pool srv/tool has 1 of 1 containers busy and the wait of 50 ms ran out',
    });
    expect(waiting.queueMs).toBeGreaterThanOrEqual(45);
    expect((await busy).value).toBe('slow');
  });

  it('fails at once when the queue is full', async () => {
    const sandbox = manager(new FakeDriver(), {
      defaults: { minWarm: 0, maxSize: 1, maxQueue: 1, limits },
    });
    const first = sandbox.invoke(tool('slow:300'), hooks);
    await expect.poll(() => poolStats(sandbox).busy).toBe(1); // the first call holds the only container
    const second = sandbox.invoke(tool('value:2'), hooks);
    const third = await sandbox.invoke(tool('value:3'), hooks);
    expect(third.error?.code).toBe('ERR_NO_CAPACITY');
    expect(third.error?.message).toBe(
      'no capacity: pool srv/tool has 1 of 1 containers busy and 1 callers already waiting',
    );
    expect((await first).ok && (await second).value).toBe(2);
  });

  it('strict mode uses each container once', async () => {
    const driver = new FakeDriver();
    const sandbox = manager(driver);
    for (let index = 0; index < 3; index += 1) {
      expect((await sandbox.invoke(tool('value:1', { strict: true }), hooks)).ok).toBe(true);
    }
    expect(driver.instances.length).toBe(3);
    expect(poolStats(sandbox).retired).toEqual({ strict: 3 });
  });

  it('retires a container after maxInvocationsPerContainer', async () => {
    const driver = new FakeDriver();
    const sandbox = manager(driver, {
      defaults: { minWarm: 0, maxSize: 1, maxInvocationsPerContainer: 2, limits },
    });
    const ids = [];
    for (let index = 0; index < 4; index += 1)
      ids.push((await sandbox.invoke(tool('value:1'), hooks)).instanceId);
    expect(ids[0]).toBe(ids[1]);
    expect(ids[2]).toBe(ids[3]);
    expect(ids[1]).not.toBe(ids[2]);
    expect(poolStats(sandbox).retired).toEqual({ 'max-invocations': 2 });
  });

  it.each([
    ['crash', 'ERR_CONTAINER_CRASHED', 'crash'],
    ['oom', 'ERR_TOOL_MEMORY', 'memory'],
    ['garbage', 'ERR_PROTOCOL', 'protocol'],
    ['hang', 'ERR_TOOL_TIMEOUT', 'timeout'],
  ])(
    '"%s" gives %s, retires the container, and the next call succeeds',
    async (code, errorCode, reason) => {
      const driver = new FakeDriver();
      const sandbox = manager(driver, {
        defaults: { minWarm: 0, maxSize: 1, timeoutGraceMs: 10, limits },
      });
      const outcome = await sandbox.invoke(tool(code), hooks);
      expect(outcome.error?.code).toBe(errorCode);
      expect(poolStats(sandbox).retired).toEqual({ [reason]: 1 });
      const next = await sandbox.invoke(tool('value:"fine"'), hooks);
      expect(next).toMatchObject({ ok: true, value: 'fine' });
      expect(next.instanceId).not.toBe(outcome.instanceId);
    },
  );

  it('an idle container that dies or breaks the protocol is retired and replaced', async () => {
    const driver = new FakeDriver();
    const sandbox = manager(driver);
    sandbox.configurePool('srv/tool', { minWarm: 2, maxSize: 2 });
    await sandbox.invoke(tool('value:1'), hooks);
    await expect.poll(() => poolStats(sandbox).warm).toBe(2);
    const [first, second] = driver.live();
    first?.exit({ exitCode: 1 });
    second?.emitRaw('{"type":"log","invocation":"x","level":"log","text":"stray"}\n');
    await expect.poll(() => poolStats(sandbox).retired).toEqual({ exited: 2 });
    await expect.poll(() => poolStats(sandbox).warm).toBe(2);
    expect(poolStats(sandbox).lastError).toMatch(/protocol|exited/);
    expect((await sandbox.invoke(tool('value:2'), hooks)).value).toBe(2);
  });

  it('cancellation while running or queued gives ERR_CANCELLED', async () => {
    const driver = new FakeDriver();
    const sandbox = manager(driver, { defaults: { minWarm: 0, maxSize: 1, limits } });
    const controller = new AbortController();
    const running = sandbox.invoke(tool('hang'), { ...hooks, signal: controller.signal });
    const queued = sandbox.invoke(tool('value:1'), { ...hooks, signal: controller.signal });
    await expect.poll(() => poolStats(sandbox)).toMatchObject({ busy: 1, queued: 1 });
    controller.abort();
    expect((await running).error?.code).toBe('ERR_CANCELLED');
    expect((await queued).error?.code).toBe('ERR_CANCELLED');
    expect(poolStats(sandbox).retired).toEqual({ cancelled: 1 });
  });

  it('a tool adopts a generic container for good when its shape matches, never when it differs', async () => {
    const driver = new FakeDriver();
    const sandbox = manager(driver, { generic: { size: 1 } });
    await sandbox.start();
    const genericWarm = () => expect.poll(() => poolStats(sandbox, GENERIC_POOL_KEY).warm).toBe(1);
    await genericWarm();
    const genericId = driver.instances[0]?.id;
    const first = await sandbox.invoke(tool('value:1', { poolKey: 'a/one' }), hooks);
    expect(first.instanceId).toBe(genericId);
    await genericWarm();
    // The generic pool refilled with a fresh container; tool b gets it, not a's.
    const second = await sandbox.invoke(tool('value:1', { poolKey: 'b/two' }), hooks);
    expect(second.instanceId).not.toBe(genericId);
    expect((await sandbox.invoke(tool('value:1', { poolKey: 'a/one' }), hooks)).instanceId).toBe(
      genericId,
    );
    await genericWarm();
    const big = await sandbox.invoke(
      tool('value:1', { poolKey: 'c/big', limits: { ...limits, memoryMb: 512 } }),
      hooks,
    );
    expect(driver.instances.find((instance) => instance.id === big.instanceId)?.spec.memoryMb).toBe(
      512,
    );
    expect(poolStats(sandbox, GENERIC_POOL_KEY)).toMatchObject({
      generic: true,
      warm: 1,
      total: 1,
    });
  });

  it('toolChanged retires idle containers at once and busy ones on release', async () => {
    const driver = new FakeDriver();
    const sandbox = manager(driver);
    await Promise.all([
      sandbox.invoke(tool('value:1'), hooks),
      sandbox.invoke(tool('value:2'), hooks),
    ]);
    const busy = sandbox.invoke(tool('slow:300'), hooks);
    await expect.poll(() => poolStats(sandbox)).toMatchObject({ warm: 1, busy: 1 });
    sandbox.toolChanged('srv', 'tool');
    expect(poolStats(sandbox)).toMatchObject({ warm: 0, busy: 1 });
    const busyOutcome = await busy;
    expect(busyOutcome.ok).toBe(true);
    expect(poolStats(sandbox)).toMatchObject({ total: 0, retired: { 'retired-tool': 2 } });
    expect(driver.live()).toHaveLength(0);
    const fresh = await sandbox.invoke(tool('value:3'), hooks);
    expect(fresh.instanceId).not.toBe(busyOutcome.instanceId);
  });

  it('drain retires idle containers and stops refilling until the next invocation', async () => {
    const driver = new FakeDriver();
    const sandbox = manager(driver);
    sandbox.configurePool('srv/tool', { minWarm: 2, maxSize: 3 });
    await sandbox.invoke(tool('value:1'), hooks);
    await expect.poll(() => poolStats(sandbox)).toMatchObject({ warm: 2, minWarm: 2, maxSize: 3 });
    sandbox.drain('srv/tool');
    await expect
      .poll(() => poolStats(sandbox))
      .toMatchObject({ warm: 0, total: 0, retired: { drained: 2 } });
    await settle(); // and no refill follows
    expect(poolStats(sandbox)).toMatchObject({ total: 0 });
  });

  it('configurePool validates against the caps', () => {
    const sandbox = manager(new FakeDriver());
    expect(() => sandbox.configurePool('k', { minWarm: 1, maxSize: 9 })).toThrow(
      expect.objectContaining({
        code: 'ERR_VALIDATION',
        message: 'pool k: maxSize 9 is over the cap of 8 containers per pool',
      }),
    );
    expect(() => sandbox.configurePool('k', { minWarm: 3, maxSize: 2 })).toThrow(
      expect.objectContaining({
        code: 'ERR_VALIDATION',
        message: 'pool k: minWarm 3 is over maxSize 2',
      }),
    );
    expect(() => sandbox.configurePool('k', { minWarm: -1, maxSize: 2 } as never)).toThrow(
      expect.objectContaining({ code: 'ERR_VALIDATION' }),
    );
    expect(sandbox.configurePool('k', { minWarm: 0, maxSize: 8 })).toEqual({
      minWarm: 0,
      maxSize: 8,
    });
  });

  it('misuse of the constructor is a TypeError', () => {
    expect(() =>
      manager(new FakeDriver(), { defaults: { minWarm: 5, maxSize: 1, limits } }),
    ).toThrow(TypeError);
    expect(() => manager(new FakeDriver(), { generic: { size: -1 } })).toThrow(TypeError);
  });

  it('fails fast with ERR_SANDBOX_UNAVAILABLE while the driver is down and recovers when it returns', async () => {
    const driver = new FakeDriver();
    driver.failing = true;
    const sandbox = manager(driver, { generic: { size: 1 } });
    await sandbox.start();
    const first = await sandbox.invoke(tool('value:1'), hooks);
    expect(first.error).toMatchObject({
      code: 'ERR_SANDBOX_UNAVAILABLE',
      message: /engine is down/,
    });
    const attempts = driver.startAttempts;
    const second = await sandbox.invoke(tool('value:1'), hooks);
    expect(second.error?.code).toBe('ERR_SANDBOX_UNAVAILABLE');
    expect(driver.startAttempts).toBe(attempts); // failed fast: no start attempted for it
    expect(sandbox.healthy).toBe(false);
    driver.failing = false;
    await expect.poll(() => sandbox.healthy, { timeout: 2_000 }).toBe(true);
    await expect.poll(() => poolStats(sandbox, GENERIC_POOL_KEY).warm, { timeout: 2_000 }).toBe(1);
    expect((await sandbox.invoke(tool('value:1'), hooks)).ok).toBe(true);
  });

  it('retires idle containers above minWarm after the TTL, never below it, and starts none while idle', async () => {
    const driver = new FakeDriver();
    const sandbox = manager(driver, {
      defaults: { minWarm: 1, maxSize: 2, idleTtlMs: 100, limits },
    });
    await sandbox.start();
    await Promise.all([
      sandbox.invoke(tool('slow:30'), hooks),
      sandbox.invoke(tool('slow:30'), hooks),
    ]);
    expect(poolStats(sandbox)).toMatchObject({ total: 2, started: 2 });
    await expect
      .poll(() => poolStats(sandbox).retired['idle-ttl'] ?? 0, { timeout: 2_000 })
      .toBe(1);
    // Several TTLs later: still the one container kept, nothing started, nothing retired.
    // (The time passing is what is tested: there is no event to wait for.)
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(poolStats(sandbox)).toMatchObject({ total: 1, warm: 1, started: 2 });
    expect(poolStats(sandbox).retired).toEqual({ 'idle-ttl': 1 });
    expect(driver.instances).toHaveLength(2);
  });

  it('back-to-back calls reuse the warm container and start no replacement', async () => {
    const driver = new FakeDriver();
    const sandbox = manager(driver, { defaults: { minWarm: 1, maxSize: 4, limits } });
    for (let index = 0; index < 20; index += 1) {
      expect((await sandbox.invoke(tool(`value:${index}`), hooks)).value).toBe(index);
    }
    await settle(); // a replacement wrongly scheduled would have started by now
    expect(driver.instances).toHaveLength(1);
    expect(poolStats(sandbox)).toMatchObject({ total: 1, started: 1 });
  });

  it('a burst of short calls queues on the busy container instead of starting more', async () => {
    const driver = new FakeDriver();
    const sandbox = manager(driver, { defaults: { minWarm: 1, maxSize: 4, limits } });
    await sandbox.invoke(tool('value:0'), hooks); // one container, and a duration measured
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, (_, index) => sandbox.invoke(tool(`value:${index}`), hooks)),
    );
    expect(outcomes.every((outcome) => outcome.ok)).toBe(true);
    expect(driver.instances).toHaveLength(1);
  });

  it('tools of one server share its containers; servers never share one', async () => {
    const driver = new FakeDriver();
    const sandbox = manager(driver, { defaults: { minWarm: 1, maxSize: 2, limits } });
    const shared = (server: string, name: string) =>
      tool('value:1', { poolKey: `${server}/${name}`, isolation: 'server' });
    const a1 = await sandbox.invoke(shared('a', 'one'), hooks);
    const a2 = await sandbox.invoke(shared('a', 'two'), hooks);
    const b1 = await sandbox.invoke(shared('b', 'one'), hooks);
    expect(a2.instanceId).toBe(a1.instanceId);
    expect(b1.instanceId).not.toBe(a1.instanceId);
    // A tool whose limits differ from its server's gets a pool of that shape.
    const big = await sandbox.invoke(
      tool('value:1', {
        poolKey: 'a/big',
        isolation: 'server',
        limits: { ...limits, memoryMb: 256 },
      }),
      hooks,
    );
    expect(big.instanceId).not.toBe(a1.instanceId);
    expect(sandbox.serverStats().map((server) => [server.server, server.containers.total])).toEqual(
      [
        ['a', 2],
        ['b', 1],
      ],
    );
  });

  it('keeps the global cap by evicting the longest-idle container of another pool', async () => {
    const driver = new FakeDriver();
    const sandbox = manager(driver, { caps: { maxSizePerPool: 2, maxTotal: 2 } });
    await sandbox.invoke(tool('value:1', { poolKey: 'a/tool' }), hooks);
    await sandbox.invoke(tool('value:1', { poolKey: 'b/tool' }), hooks);
    await sandbox.invoke(tool('value:1', { poolKey: 'c/tool' }), hooks);
    const total = sandbox.stats().reduce((sum, pool) => sum + pool.total, 0);
    expect(total).toBe(2);
    expect(poolStats(sandbox, 'a/tool').retired).toEqual({ evicted: 1 });
  });

  it('a server at its ceiling makes room from its own idle containers, never from others', async () => {
    const driver = new FakeDriver();
    const sandbox = manager(driver, {
      defaults: { minWarm: 1, maxSize: 2, limits },
      caps: { maxSizePerPool: 2, maxTotal: 4, serverShare: 0.5 },
    });
    await sandbox.invoke(tool('value:1', { poolKey: 'other/tool' }), hooks);
    await sandbox.invoke(tool('value:1', { poolKey: 'a/one' }), hooks);
    await sandbox.invoke(tool('value:1', { poolKey: 'a/two' }), hooks);
    // 'a' holds its ceiling (2 of 4): a third tool of it evicts a's longest-idle container.
    const third = await sandbox.invoke(tool('value:3', { poolKey: 'a/three' }), hooks);
    expect(third.value).toBe(3);
    expect(poolStats(sandbox, 'a/one').retired).toEqual({ evicted: 1 });
    expect(poolStats(sandbox, 'other/tool')).toMatchObject({ total: 1, retired: {} });
    expect(sandbox.serverStats().find((entry) => entry.server === 'a')).toMatchObject({
      containers: { total: 2 },
      evictions: { lastMinute: 1 },
    });
  });

  it('a server over its fair share yields a released container to a starving server', async () => {
    const driver = new FakeDriver();
    const sandbox = manager(driver, {
      defaults: { minWarm: 0, maxSize: 4, queueTimeoutMs: 2_000, limits },
      caps: { maxSizePerPool: 8, maxTotal: 4 },
    });
    const shared = (server: string, code: string) =>
      tool(code, { poolKey: `${server}/t`, isolation: 'server' });
    // A keeps six slow calls in flight: it holds its ceiling (2 of 4), always with callers queued.
    let stop = false;
    const hammer = async () => {
      while (!stop) await sandbox.invoke(shared('A', 'slow:100'), hooks);
    };
    const loops = Array.from({ length: 6 }, hammer);
    await sandbox.invoke(shared('B', 'value:1'), hooks);
    await sandbox.invoke(shared('C', 'value:1'), hooks);
    await expect.poll(() => sandbox.budgetStats().used).toBe(4);
    // D holds nothing (within its share of 1); A holds 2 (over it) and never has one idle.
    const served = await sandbox.invoke(shared('D', 'value:7'), hooks);
    stop = true;
    await Promise.all(loops);
    expect(served).toMatchObject({ ok: true, value: 7 });
    const a = sandbox.stats().find((pool) => pool.server === 'A');
    expect(a?.retired.rebalanced).toBeGreaterThanOrEqual(1);
    expect(sandbox.stats().find((pool) => pool.server === 'B')?.retired).toEqual({});
  });

  it('a promised generic container stays generic when its caller gave up before it came up', async () => {
    const driver = new FakeDriver();
    driver.readyDelayMs = 200;
    const sandbox = manager(driver, {
      defaults: { minWarm: 0, maxSize: 4, limits },
      generic: { size: 1 },
      caps: { maxSizePerPool: 8, maxTotal: 4 },
    });
    await sandbox.start();
    const controller = new AbortController();
    const call = sandbox.invoke(tool('value:1', { poolKey: 'P/t' }), {
      ...hooks,
      signal: controller.signal,
    });
    // Waiting for the generic container, which takes 200 ms to come up.
    await expect.poll(() => poolStats(sandbox, 'P/t').queued).toBe(1);
    controller.abort();
    expect((await call).error?.code).toBe('ERR_CANCELLED');
    sandbox.toolChanged('P', 't'); // the pool is retired while the generic container starts
    await expect.poll(() => poolStats(sandbox, GENERIC_POOL_KEY).warm).toBe(1);
    // Every live container is counted in the budget, and close kills them all.
    expect(driver.live()).toHaveLength(sandbox.budgetStats().used);
    await sandbox.close();
    expect(driver.live()).toHaveLength(0);
  });

  it('an over-share server does not yield to a server whose pool is full (no container churn)', async () => {
    const driver = new FakeDriver();
    driver.readyDelayMs = 50;
    const sandbox = manager(driver, {
      defaults: {
        minWarm: 0,
        maxSize: 2,
        queueTimeoutMs: 5_000,
        limits: { ...limits, timeoutMs: 2_000 },
      },
      caps: { maxSizePerPool: 8, maxTotal: 8, serverShare: 0.75 },
    });
    // A: three tools of its own, two containers each: 6 of 8, over its fair share of 4.
    // B: one tool at its pool's maxSize (2), always with a caller queued: within its share, but it cannot grow.
    let stop = false;
    const loop = (poolKey: string, code: string) => async () => {
      while (!stop) await sandbox.invoke(tool(code, { poolKey }), hooks);
    };
    const loops = [
      ...['A/a1', 'A/a2', 'A/a3'].flatMap((key) =>
        Array.from({ length: 3 }, loop(key, 'slow:150')),
      ),
      ...Array.from({ length: 3 }, loop('B/b', 'slow:20')),
    ];
    // Load for a while: what is tested is that no yield happens during it.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    stop = true;
    await Promise.all(loops);
    const rebalanced = sandbox
      .stats()
      .filter((pool) => pool.server === 'A')
      .reduce((sum, pool) => sum + (pool.retired.rebalanced ?? 0), 0);
    // B could never take a yielded container: yielding would only churn A's warm containers.
    expect(rebalanced).toBeLessThanOrEqual(1);
    expect(poolStats(sandbox, 'B/b').started).toBe(2);
  });

  it('a promised generic container does not take a server past its maxContainers', async () => {
    const driver = new FakeDriver();
    driver.readyDelayMs = 200;
    const sandbox = manager(driver, {
      defaults: { minWarm: 0, maxSize: 4, limits: { ...limits, timeoutMs: 2_000 } },
      generic: { size: 1 },
      caps: { maxSizePerPool: 8, maxTotal: 8 },
    });
    sandbox.setServerMaxContainers('S', 1);
    await sandbox.start();
    let peak = 0;
    const watch = setInterval(() => {
      const entry = sandbox.serverStats().find((server) => server.server === 'S');
      if (entry) peak = Math.max(peak, entry.containers.total);
    }, 5);
    // The first caller is promised the generic container still starting; the second starts S's own.
    const first = sandbox.invoke(tool('slow:300', { poolKey: 'S/t' }), hooks);
    await expect.poll(() => poolStats(sandbox, 'S/t').queued).toBe(1);
    const second = sandbox.invoke(tool('slow:300', { poolKey: 'S/t' }), hooks);
    const outcomes = await Promise.all([first, second]);
    clearInterval(watch);
    expect(outcomes.every((outcome) => outcome.ok)).toBe(true);
    expect(peak).toBeLessThanOrEqual(1);
  });

  it('runs an invocation on another container when its runner died unnoticed and never got it', async () => {
    const driver = new FakeDriver();
    const sandbox = manager(driver, { defaults: { minWarm: 1, maxSize: 2, limits } });
    const first = await sandbox.invoke(tool('value:1'), hooks);
    // The container is gone but no exit was reported yet: its stdin refuses the invoke line.
    driver.instances[0]!.killed = true;
    const second = await sandbox.invoke(tool('value:2'), hooks);
    expect(second).toMatchObject({ ok: true, value: 2 });
    expect(second.instanceId).not.toBe(first.instanceId);
    expect(poolStats(sandbox).retired).toMatchObject({ crash: 1 });
  });

  it('keeps logs up to the budget with one notice, and forwards them live', async () => {
    const sandbox = manager(new FakeDriver());
    const live: string[] = [];
    const outcome = await sandbox.invoke(
      tool('log:50', { limits: { ...limits, maxLogBytes: 1000 } }),
      {
        ...hooks,
        onLog: (entry) => live.push(entry.text),
      },
    );
    // 1000 bytes + 1 KiB slack for the harness's own notice = 20 lines of 100 bytes, then our notice.
    expect(outcome.logs).toHaveLength(21);
    expect(outcome.logs.at(-1)?.text).toMatch(/log limit/);
    expect(live).toHaveLength(21);
  });

  it('close fails waiters and kills every container', async () => {
    const driver = new FakeDriver();
    const sandbox = manager(driver, { defaults: { minWarm: 0, maxSize: 1, limits } });
    const running = sandbox.invoke(tool('hang'), hooks);
    const waiting = sandbox.invoke(tool('value:1'), hooks);
    await expect.poll(() => poolStats(sandbox)).toMatchObject({ busy: 1, queued: 1 });
    await sandbox.close();
    expect((await waiting).error?.code).toBe('ERR_SHUTTING_DOWN');
    expect((await running).ok).toBe(false);
    expect(driver.live()).toHaveLength(0);
    expect((await sandbox.invoke(tool('value:1'), hooks)).error?.code).toBe('ERR_SHUTTING_DOWN');
  });
});

describe('the budget counts memory', () => {
  const sized = (memoryMb: number) => ({ ...limits, memoryMb });
  const memoryCaps = {
    maxSizePerPool: 8,
    maxTotal: 16,
    maxMemoryMb: 1024,
    limitCeilings: { memoryMb: 512, timeoutMs: 60_000 },
  };

  it('never creates a container above the host ceiling, whatever it is asked for', async () => {
    const driver = new FakeDriver();
    const sandbox = manager(driver, { caps: memoryCaps });
    const outcome = await sandbox.invoke(
      tool('value:1', { limits: { ...limits, memoryMb: 65_536, timeoutMs: 3_600_000 } }),
      hooks,
    );
    expect(outcome.ok).toBe(true);
    expect(driver.instances.map((instance) => instance.spec.memoryMb)).toEqual([512]);
    expect(sandbox.effectiveLimits({ memoryMb: 4096 }, { timeoutMs: 90_000 })).toMatchObject({
      memoryMb: 512,
      timeoutMs: 60_000,
    });
    expect(sandbox.budgetStats()).toMatchObject({
      used: 1,
      memory: { usedMb: 512, maxMb: 1024 },
      limitCeilings: { memoryMb: 512, timeoutMs: 60_000 },
    });
  });

  it('a large container makes room by evicting as many idle small ones as it needs', async () => {
    const driver = new FakeDriver();
    const sandbox = manager(driver, { caps: { ...memoryCaps, serverShare: 1 } });
    for (const server of ['a', 'b', 'c', 'd']) {
      await sandbox.invoke(
        tool('value:1', { poolKey: `${server}/tool`, limits: sized(256) }),
        hooks,
      );
    }
    // 4 × 256 MiB fill the budget; a 512 MiB container needs two of them gone.
    const big = await sandbox.invoke(
      tool('value:2', { poolKey: 'e/tool', limits: sized(512) }),
      hooks,
    );
    expect(big.value).toBe(2);
    expect(sandbox.budgetStats().memory.usedMb).toBeLessThanOrEqual(1024);
    expect(poolStats(sandbox, 'a/tool').retired).toEqual({ evicted: 1 });
    expect(poolStats(sandbox, 'b/tool').retired).toEqual({ evicted: 1 });
    expect(poolStats(sandbox, 'c/tool').total).toBe(1);
  });

  it("a server's memory ceiling holds whatever its container count: it trades its own", async () => {
    const driver = new FakeDriver();
    const sandbox = manager(driver, {
      defaults: { minWarm: 1, maxSize: 4, limits },
      caps: { ...memoryCaps, serverShare: 0.5 },
    });
    await sandbox.invoke(tool('value:1', { poolKey: 'other/tool', limits: sized(128) }), hooks);
    await sandbox.invoke(tool('value:1', { poolKey: 'a/one', limits: sized(256) }), hooks);
    await sandbox.invoke(tool('value:1', { poolKey: 'a/two', limits: sized(256) }), hooks);
    // 'a' holds 512 MiB, half of the budget: a third container of it evicts its own oldest.
    const third = await sandbox.invoke(
      tool('value:3', { poolKey: 'a/three', limits: sized(256) }),
      hooks,
    );
    expect(third.value).toBe(3);
    expect(poolStats(sandbox, 'a/one').retired).toEqual({ evicted: 1 });
    expect(poolStats(sandbox, 'other/tool')).toMatchObject({ total: 1, retired: {} });
    expect(sandbox.serverStats().find((entry) => entry.server === 'a')).toMatchObject({
      containers: { total: 2 },
      committed: { memoryMb: 512 },
      share: { ceilingMemoryMb: 512 },
    });
  });

  it('one container of a server is allowed whatever its size (within the host ceiling)', async () => {
    const driver = new FakeDriver();
    const sandbox = manager(driver, {
      caps: { ...memoryCaps, serverShare: 0.25 },
    });
    // 512 MiB is above a quarter of the budget, but a server may always hold one container.
    const outcome = await sandbox.invoke(tool('value:1', { limits: sized(512) }), hooks);
    expect(outcome.ok).toBe(true);
  });
});
