// The generic pool's promises on its starting containers: its own bookkeeping with fakes,
// then what a promised pool does about it, with the manager on an in-memory driver.
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolRuntime } from '../../control-plane/sandbox/invocation.js';
import {
  GenericPool,
  type GenericHolder,
  type GenericRequester,
} from '../../control-plane/sandbox/pool/generic-pool.js';
import type { ContainerShape } from '../../control-plane/sandbox/pool/pool-key.js';
import type { PoolSize } from '../../control-plane/sandbox/pool/pool-settings.js';
import { PooledInstance } from '../../control-plane/sandbox/pool/pooled-instance.js';
import { GENERIC_POOL_KEY, SandboxManager } from '../../control-plane/sandbox/sandbox-manager.js';
import {
  DEFAULT_CAP_EXTRAS,
  DEFAULT_INVOCATION_LIMITS,
  DEFAULT_POOL_DEFAULTS,
  DEFAULT_START_CONCURRENCY,
} from '../support/config-defaults.js';
import { FakeDriver } from './fake-driver.js';

const SHAPE: ContainerShape = { memoryMb: 128, cpus: 0.5, pids: 64, runtime: 'runc' };

/** The generic pool's containers as counts: `comeUp` readies a starting one, `lose` drops one. */
class FakeHolder implements GenericHolder {
  readonly shape = SHAPE;
  size: PoolSize = { minWarm: 1, maxSize: 4 };
  warming: number;
  readonly ready: PooledInstance[] = [];

  constructor(warming: number) {
    this.warming = warming;
  }

  get idle(): number {
    return this.ready.length;
  }

  counts() {
    return { warm: this.ready.length, busy: 0, warming: this.warming };
  }

  // The fake's starts never queue: every one warming is under way.
  startsUnderWay(): number {
    return this.warming;
  }

  configure(size: PoolSize): void {
    this.size = size;
  }

  takeOutIdle(): PooledInstance | undefined {
    return this.ready.shift();
  }

  comeUp(): void {
    this.warming -= 1;
    this.ready.push(new PooledInstance(0, undefined));
  }

  lose(): void {
    this.warming -= 1;
  }
}

/** A server's pool with callers waiting; it notes in `log` when it grows its own (as a real one, only for callers it holds). */
class FakeRequester implements GenericRequester {
  readonly generic = false;
  readonly shape: ContainerShape = SHAPE;
  readonly server: string;
  readonly adopted: PooledInstance[] = [];
  waiting = 1;
  readonly #log: string[];

  constructor(server: string, log: string[] = []) {
    this.server = server;
    this.#log = log;
  }

  wantsGeneric(): boolean {
    return this.waiting > 0;
  }

  adoptGeneric(instance: PooledInstance): void {
    this.adopted.push(instance);
    this.waiting -= 1;
  }

  grow(): void {
    if (this.waiting > 0) this.#log.push(`${this.server} grows`);
  }
}

/** A generic pool over `holder`; servers named in `atCeiling` may take no more containers. */
function genericPool(holder: FakeHolder, atCeiling = new Set<string>()) {
  const budget = { fitsCeiling: (server: string) => !atCeiling.has(server) };
  return new GenericPool(holder, 4, budget, () => 0);
}

describe('GenericPool promises', () => {
  it('promises each starting container once, and hands each to the oldest promised pool as it comes up', () => {
    const holder = new FakeHolder(2);
    const generic = genericPool(holder);
    const [a, b, c] = ['A', 'B', 'C'].map((server) => new FakeRequester(server));
    expect(generic.promise(a!)).toBe(true);
    expect(generic.promise(b!)).toBe(true);
    expect(generic.promise(c!)).toBe(false); // both starting containers are promised
    expect([a, b, c].map((requester) => generic.promisedTo(requester!))).toEqual([1, 1, 0]);
    holder.comeUp();
    const first = holder.ready[0];
    generic.handOver();
    expect(a!.adopted).toEqual([first]);
    expect(b!.adopted).toEqual([]);
    expect(holder.idle).toBe(0);
    expect(generic.promisedTo(a!)).toBe(0);
    holder.comeUp();
    generic.handOver();
    expect(b!.adopted).toHaveLength(1);
    expect(generic.promisedTo(b!)).toBe(0);
  });

  it('counts every container promised to one pool, and promises none to another shape or the generic pool', () => {
    const generic = genericPool(new FakeHolder(3));
    const pool = new FakeRequester('A');
    expect(generic.promise(pool)).toBe(true);
    expect(generic.promise(pool)).toBe(true);
    expect(generic.promisedTo(pool)).toBe(2);
    const bigger = Object.assign(new FakeRequester('B'), { shape: { ...SHAPE, memoryMb: 512 } });
    expect(generic.promise(bigger)).toBe(false);
    const itself = Object.assign(new FakeRequester('G'), { generic: true });
    expect(generic.promise(itself)).toBe(false);
  });

  it('a pool that no longer wants its container is let off, and the container stays generic', () => {
    const holder = new FakeHolder(1);
    const generic = genericPool(holder);
    const pool = new FakeRequester('A');
    generic.promise(pool);
    pool.waiting = 0; // its caller gave up
    holder.comeUp();
    generic.handOver();
    expect(pool.adopted).toEqual([]);
    expect(holder.idle).toBe(1);
    expect(generic.promisedTo(pool)).toBe(0);
  });

  it('passes over a pool that stopped wanting it, or whose server reached its ceiling, to the next promised', () => {
    const holder = new FakeHolder(3);
    const atCeiling = new Set<string>();
    const generic = genericPool(holder, atCeiling);
    const [gaveUp, full, waiting] = ['A', 'B', 'C'].map((server) => new FakeRequester(server));
    for (const pool of [gaveUp, full, waiting]) generic.promise(pool!);
    gaveUp!.waiting = 0;
    atCeiling.add('B');
    holder.comeUp();
    generic.handOver();
    expect([gaveUp, full, waiting].map((pool) => pool!.adopted.length)).toEqual([0, 0, 1]);
    expect([gaveUp, full, waiting].map((pool) => generic.promisedTo(pool!))).toEqual([0, 0, 0]);
    // Nobody is owed the next one: it stays generic.
    holder.comeUp();
    generic.handOver();
    expect(holder.idle).toBe(1);
  });

  it('a pool passed over with callers still waiting grows its own for them', () => {
    const holder = new FakeHolder(1);
    const atCeiling = new Set<string>(['A']);
    const generic = genericPool(holder, atCeiling);
    const log: string[] = [];
    const pool = new FakeRequester('A', log);
    atCeiling.clear();
    generic.promise(pool);
    atCeiling.add('A'); // its own starts took it to its ceiling meanwhile
    holder.comeUp();
    generic.handOver();
    expect(pool.adopted).toEqual([]);
    expect(log).toEqual(['A grows']);
  });

  it('a lost starting container breaks the newest promises it covered; their pools grow their own', () => {
    const holder = new FakeHolder(3);
    const generic = genericPool(holder);
    const log: string[] = [];
    const [a, b, c] = ['A', 'B', 'C'].map((server) => new FakeRequester(server, log));
    for (const pool of [a, b, c]) generic.promise(pool!);
    holder.lose();
    holder.lose();
    generic.rebalance();
    expect(log).toEqual(['C grows', 'B grows']);
    expect([a, b, c].map((pool) => generic.promisedTo(pool!))).toEqual([1, 0, 0]);
    // A ready container still covers its promise.
    holder.comeUp();
    generic.rebalance();
    expect(log).toHaveLength(2);
    generic.handOver();
    expect(a!.adopted).toHaveLength(1);
  });

  it("a pool's count of promised containers never goes below zero", () => {
    const holder = new FakeHolder(2);
    const generic = genericPool(holder);
    const log: string[] = [];
    const pool = new FakeRequester('A', log);
    generic.promise(pool);
    pool.waiting = 0;
    holder.comeUp();
    generic.handOver(); // declined
    generic.handOver();
    holder.lose();
    generic.rebalance(); // nothing left to break
    expect(generic.promisedTo(pool)).toBe(0);
    expect(log).toEqual([]);
    // A new promise counts from zero, not from below it.
    holder.warming = 1;
    expect(generic.promise(pool)).toBe(true);
    expect(generic.promisedTo(pool)).toBe(1);
  });

  it('lends an idle container only to a pool it fits', () => {
    const holder = new FakeHolder(0);
    holder.ready.push(new PooledInstance(0, undefined));
    const generic = genericPool(holder, new Set(['B']));
    expect(generic.borrow(new FakeRequester('B'))).toBeUndefined();
    expect(generic.borrow(new FakeRequester('A'))).toBeInstanceOf(PooledInstance);
    expect(holder.idle).toBe(0);
  });
});

describe('a pool promised a generic container', () => {
  const limits = { ...DEFAULT_INVOCATION_LIMITS, timeoutMs: 2_000 };
  const hooks = { params: {}, onCall: async () => ({}) };
  const managers: SandboxManager[] = [];

  afterEach(async () => {
    await Promise.all(managers.splice(0).map((created) => created.close()));
  });

  /** A manager whose generic pool keeps one container and whose servers keep none warm. */
  function manager(driver: FakeDriver): SandboxManager {
    const created = new SandboxManager({
      driver,
      defaults: { ...DEFAULT_POOL_DEFAULTS, minWarm: 0, maxSize: 4, queueTimeoutMs: 5_000, limits },
      generic: { size: 1 },
      startConcurrency: DEFAULT_START_CONCURRENCY,
      reapIntervalMs: 30_000,
      caps: { ...DEFAULT_CAP_EXTRAS, maxSizePerPool: 8, maxTotal: 8 },
      retry: { initialMs: 20, maxMs: 50 },
    });
    managers.push(created);
    return created;
  }

  const tool: ToolRuntime = {
    server: 'P',
    tool: 't',
    isolation: 'tool',
    runtime: 'runc',
    code: 'value:1',
    env: {},
    limits,
    strict: false,
  };

  function stats(sandbox: SandboxManager, key: string) {
    const found = sandbox
      .stats()
      .find((pool) => (key === GENERIC_POOL_KEY ? pool.generic : pool.server === key));
    if (!found) throw new Error(`no pool ${key}`);
    return found;
  }

  /** A call of server P waiting on the generic container promised to it, which takes 300 ms to start. */
  async function callWaitingOnPromise() {
    const driver = new FakeDriver();
    driver.readyDelayMs = 300;
    const sandbox = manager(driver);
    await sandbox.start();
    const call = sandbox.invoke(tool, hooks);
    await expect.poll(() => stats(sandbox, 'P').queued).toBe(1);
    return { driver, sandbox, call };
  }

  it('starts no container of its own for the caller the promise covers', async () => {
    const { driver, sandbox, call } = await callWaitingOnPromise();
    // Time passing is what is tested: no start of its own while the generic one comes up.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stats(sandbox, 'P')).toMatchObject({ started: 0, warming: 0 });
    const outcome = await call;
    expect(outcome.ok).toBe(true);
    expect(outcome.instanceId).toBe(driver.instances[0]?.id);
    expect(stats(sandbox, 'P')).toMatchObject({ started: 0, adopted: 1 });
  });

  it('serves the caller a promise covered when its pool is drained before the container is ready', async () => {
    const { sandbox, call } = await callWaitingOnPromise();
    sandbox.drain('P');
    const outcome = await call;
    expect(outcome.ok).toBe(true);
    expect(stats(sandbox, 'P')).toMatchObject({ started: 1, adopted: 0 });
  });

  it('starts its own when the promised container dies before it is ready', async () => {
    const { driver, sandbox, call } = await callWaitingOnPromise();
    await expect.poll(() => driver.instances.length).toBe(1);
    driver.readyDelayMs = 1;
    driver.instances[0]!.exit();
    const outcome = await call;
    expect(outcome.ok).toBe(true);
    expect(stats(sandbox, 'P')).toMatchObject({ started: 1, adopted: 0 });
  });

  it('promises no start still queued: a server other tenants keep the start queue busy for is served', async () => {
    const driver = new FakeDriver();
    driver.readyDelayMs = 300;
    const sandbox = new SandboxManager({
      driver,
      defaults: { ...DEFAULT_POOL_DEFAULTS, minWarm: 0, maxSize: 8, queueTimeoutMs: 1_500, limits },
      generic: { size: 1 },
      // Two starts at a time, one per server: demand starts of other servers queue ahead of refills.
      startConcurrency: 2,
      reapIntervalMs: 30_000,
      caps: {
        ...DEFAULT_CAP_EXTRAS,
        serverShare: 0.5,
        maxMemoryMb: 1_000_000,
        maxSizePerPool: 8,
        maxTotal: 32,
      },
      retry: { initialMs: 20, maxMs: 50 },
    });
    managers.push(sandbox);
    await sandbox.start();
    await expect.poll(() => stats(sandbox, GENERIC_POOL_KEY).warm, { timeout: 2_000 }).toBe(1);
    const on = (server: string, code: string): ToolRuntime => ({ ...tool, server, code });
    // B takes the idle generic container (its refill is queued behind); C and D fill the start slots.
    const noise = [sandbox.invoke(on('B', 'hang'), hooks)];
    for (let i = 0; i < 5; i += 1) {
      noise.push(sandbox.invoke(on('C', 'hang'), hooks), sandbox.invoke(on('D', 'hang'), hooks));
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
    const outcome = await sandbox.invoke(on('A', 'value:1'), hooks);
    expect(outcome.ok, JSON.stringify(outcome.ok ? {} : outcome.error)).toBe(true);
    expect(stats(sandbox, 'A').started + stats(sandbox, 'A').adopted).toBeGreaterThan(0);
    void Promise.allSettled(noise);
  });
});
