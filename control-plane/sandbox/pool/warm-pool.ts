/**
 * The containers of one pool key: ready ones wait idle, callers lease one,
 * run one invocation and release it in `finally`. The pool starts containers
 * on demand up to `maxSize`, keeps `minWarm` idle ones in the background, and
 * makes callers wait in a bounded FIFO that fails with ERR_NO_CAPACITY rather
 * than hang. Whatever the manager decides about sharing (global cap, generic
 * donation, driver health) comes in through `PoolContext`.
 */
import { McphostError } from '../../errors.js';
import type { SandboxDriver, SandboxSpec } from '../driver.js';
import { RunnerConnection } from '../runner-connection.js';
import { PooledInstance, type RetireReason } from './pooled-instance.js';
import type { PoolSize, ResolvedPoolDefaults } from './pool-settings.js';
import { WaitQueue } from './wait-queue.js';

/** What a pool needs from the manager that owns it. */
export interface PoolContext {
  driver: SandboxDriver;
  defaults: ResolvedPoolDefaults;
  now(): number;
  /** True when one more container may start (global cap; may evict another pool's idle one). */
  reserveSlot(pool: WarmPool): boolean;
  /** An idle generic container this pool may adopt for good, if the manager allows it. */
  borrowGeneric(pool: WarmPool): PooledInstance | undefined;
  /** Whether the driver is believed to work; when not, leases fail fast. */
  driverHealthy(): boolean;
  /** Outcome of each container start (an error means the driver or image is in trouble). */
  reportStart(error?: McphostError): void;
  /** A container left this pool: pools blocked on the global cap may start one now. */
  onSlotFreed(): void;
}

/** The shape of the containers a pool runs. */
export interface ContainerShape {
  memoryMb: number;
  cpus: number;
  pids: number;
}

/** What `stats()` reports for one pool. */
export interface PoolStats {
  poolKey: string;
  /** True for the small pool of unbound containers tools adopt. */
  generic: boolean;
  /** Idle, ready containers. */
  warm: number;
  /** Leased containers running an invocation. */
  busy: number;
  /** Containers still starting. */
  warming: number;
  /** warm + busy + warming. */
  total: number;
  /** Callers waiting for a container. */
  queued: number;
  minWarm: number;
  maxSize: number;
  strict: boolean;
  /** Containers started since the pool was created. */
  started: number;
  /** Containers retired, by reason. */
  retired: Partial<Record<RetireReason, number>>;
  /** Last start or runner failure, for operators. */
  lastError?: string;
}

/** Retire reason for a connection fault code. */
export function retireReasonFor(code: string): RetireReason {
  switch (code) {
    case 'ERR_TOOL_TIMEOUT':
      return 'timeout';
    case 'ERR_TOOL_MEMORY':
      return 'memory';
    case 'ERR_CONTAINER_CRASHED':
      return 'crash';
    case 'ERR_PROTOCOL':
      return 'protocol';
    case 'ERR_CANCELLED':
      return 'cancelled';
    default:
      return 'faulted';
  }
}

/** One pool key's containers. */
/** Containers dying before `ready` in a row before the pool reports the sandbox unavailable. */
const MAX_DEATHS_WHILE_WARMING = 3;

export class WarmPool {
  /** Containers in a row that died before `ready`; reset by one that comes up. */
  #deathsWhileWarming = 0;
  readonly key: string;
  readonly generic: boolean;
  readonly #context: PoolContext;
  readonly #instances = new Set<PooledInstance>();
  readonly #queue = new WaitQueue<PooledInstance>();
  readonly #retired: Partial<Record<RetireReason, number>> = {};
  #size: PoolSize;
  #shape: ContainerShape;
  #strict = false;
  /** Bumped by retireTool/drain: containers of an older generation never serve again. */
  #generation = 0;
  /** No background refill until the next lease (after drain/retireTool). */
  #dormant = false;
  #closed = false;
  #started = 0;
  #lastError: string | undefined;

  constructor(
    key: string,
    generic: boolean,
    size: PoolSize,
    shape: ContainerShape,
    context: PoolContext,
  ) {
    this.key = key;
    this.generic = generic;
    this.#size = size;
    this.#shape = shape;
    this.#context = context;
  }

  get shape(): ContainerShape {
    return this.#shape;
  }

  /** Containers counted against the caps (warming, idle, leased). */
  get total(): number {
    return this.#instances.size;
  }

  /** Callers waiting. */
  get queued(): number {
    return this.#queue.length;
  }

  /** Adopts the runtime's strictness and container shape; a new shape retires the old containers. */
  update(shape: ContainerShape, strict: boolean): void {
    this.#strict = strict;
    const same =
      shape.memoryMb === this.#shape.memoryMb &&
      shape.cpus === this.#shape.cpus &&
      shape.pids === this.#shape.pids;
    if (same) return;
    this.#shape = shape;
    this.retireAll('retired-tool', false);
  }

  /** A leased container, now or after a wait; ERR_NO_CAPACITY, ERR_SANDBOX_UNAVAILABLE or ERR_CANCELLED otherwise. */
  lease(signal?: AbortSignal): Promise<PooledInstance> {
    if (this.#closed) return Promise.reject(shuttingDown());
    if (signal?.aborted)
      return Promise.reject(new McphostError('ERR_CANCELLED', 'the invocation was cancelled'));
    this.#dormant = false;
    const idle = this.#longestIdle();
    if (idle) {
      idle.transition('leased');
      return Promise.resolve(idle);
    }
    const adopted = this.total < this.#size.maxSize ? this.#context.borrowGeneric(this) : undefined;
    if (adopted) {
      this.#adopt(adopted);
      adopted.transition('leased');
      return Promise.resolve(adopted);
    }
    if (!this.#context.driverHealthy()) {
      return Promise.reject(asUnavailable(this.#lastError ?? 'the Docker engine does not answer'));
    }
    const { maxSize } = this.#size;
    const { maxQueue, queueTimeoutMs } = this.#context.defaults;
    const uncovered = this.#queue.length - this.#count('warming');
    if (this.total >= maxSize && uncovered >= maxQueue) {
      return Promise.reject(
        noCapacity(
          this.key,
          this.#count('leased'),
          maxSize,
          `${this.#queue.length} callers already waiting`,
        ),
      );
    }
    const waiting = this.#queue.wait(
      queueTimeoutMs,
      () =>
        noCapacity(
          this.key,
          this.#count('leased'),
          maxSize,
          `the wait of ${queueTimeoutMs} ms ran out`,
        ),
      signal,
    );
    this.#grow();
    return waiting;
  }

  /** Returns a leased container; `reason` (or strictness, age, a newer generation) retires it instead. */
  release(instance: PooledInstance, reason?: RetireReason): void {
    if (instance.state === 'retired') return; // retired under its lease (close, eviction)
    if (instance.state !== 'leased') throw new Error(`release of a ${instance.state} container`);
    instance.invocations += 1;
    const why =
      reason ??
      (this.#strict ? 'strict' : undefined) ??
      (instance.invocations >= this.#context.defaults.maxInvocationsPerContainer
        ? 'max-invocations'
        : undefined) ??
      (instance.generation !== this.#generation ? 'retired-tool' : undefined) ??
      (this.#dormant ? 'drained' : undefined) ??
      (instance.connection?.usable ? undefined : 'faulted') ??
      (this.total > this.#size.maxSize ? 'resized' : undefined);
    if (why) {
      this.#retire(instance, why);
      this.refill();
      this.#grow();
      return;
    }
    instance.transition('idle');
    instance.idleSince = this.#context.now();
    this.#serveWaiters();
  }

  /** Retires idle and warming containers now, leased ones on release; dormant pools stop refilling. */
  retireAll(reason: RetireReason, dormant: boolean): void {
    this.#generation += 1;
    this.#dormant = dormant;
    for (const instance of [...this.#instances]) {
      if (instance.state === 'idle' || instance.state === 'warming') this.#retire(instance, reason);
    }
    this.refill();
    this.#grow();
  }

  /** Applies an admin's resize (already validated against the caps). */
  configure(size: PoolSize): void {
    this.#size = size;
    for (const instance of this.#idleOldestFirst()) {
      if (this.total <= size.maxSize) break;
      this.#retire(instance, 'resized');
    }
    this.refill();
    this.#grow();
  }

  /** Retires containers idle for longer than the TTL; refill replaces them up to minWarm. */
  sweep(now: number): void {
    for (const instance of this.#idleOldestFirst()) {
      if (now - instance.idleSince >= this.#context.defaults.idleTtlMs)
        this.#retire(instance, 'idle-ttl');
    }
    this.refill();
  }

  /** Starts containers until minWarm are idle or warming (bounded by maxSize and the global cap). */
  refill(): void {
    if (this.#dormant || this.#closed) return;
    while (
      this.#count('idle') + this.#count('warming') < this.#size.minWarm &&
      this.total < this.#size.maxSize &&
      this.#context.reserveSlot(this)
    ) {
      this.#startContainer();
    }
  }

  /** Starts containers for waiters a warming container will not serve. */
  grow(): void {
    this.#grow();
  }

  /** Hands over an idle container for another pool to adopt (generic pool only). */
  donate(): PooledInstance | undefined {
    const idle = this.#longestIdle();
    if (!idle) return undefined;
    this.#instances.delete(idle);
    queueMicrotask(() => this.refill());
    return idle;
  }

  /** Retires the oldest idle container to make room elsewhere; false when none is idle. */
  evictOne(): boolean {
    const [oldest] = this.#idleOldestFirst();
    if (!oldest) return false;
    this.#retire(oldest, 'evicted');
    return true;
  }

  /** The oldest idle-since time, for choosing whom to evict. */
  oldestIdleSince(): number | undefined {
    return this.#idleOldestFirst()[0]?.idleSince;
  }

  /** Fails waiters and kills every container, leased ones included. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#queue.failAll(shuttingDown());
    const connections = [...this.#instances].map((instance) => instance.connection);
    for (const instance of [...this.#instances]) this.#retire(instance, 'closed');
    await Promise.all(connections.map((connection) => connection?.close()));
  }

  stats(): PoolStats {
    const warm = this.#count('idle');
    const busy = this.#count('leased');
    const warming = this.#count('warming');
    return {
      poolKey: this.key,
      generic: this.generic,
      warm,
      busy,
      warming,
      total: this.total,
      queued: this.#queue.length,
      minWarm: this.#size.minWarm,
      maxSize: this.#size.maxSize,
      strict: this.#strict,
      started: this.#started,
      retired: { ...this.#retired },
      ...(this.#lastError === undefined ? {} : { lastError: this.#lastError }),
    };
  }

  /** Notes a runner failure seen by the manager, for operators. */
  noteError(message: string): void {
    this.#lastError = message;
  }

  #grow(): void {
    if (this.#closed) return;
    while (
      this.#queue.length > this.#count('warming') &&
      this.total < this.#size.maxSize &&
      this.#context.reserveSlot(this)
    ) {
      this.#startContainer();
    }
  }

  #adopt(instance: PooledInstance): void {
    instance.boundTo = this.key;
    instance.generation = this.#generation;
    this.#instances.add(instance);
    instance.connection?.onBroken((error) => this.#onBroken(instance, error));
  }

  #startContainer(): void {
    const instance = new PooledInstance(this.#generation, this.generic ? undefined : this.key);
    this.#instances.add(instance);
    this.#started += 1;
    const spec: SandboxSpec = { labels: { 'mcphost.pool': this.key }, ...this.#shape };
    void this.#bringUp(instance, spec);
  }

  async #bringUp(instance: PooledInstance, spec: SandboxSpec): Promise<void> {
    const { defaults } = this.#context;
    let created = false;
    try {
      const sandbox = await this.#context.driver.start(spec);
      created = true;
      const connection = new RunnerConnection(sandbox, {
        maxLineBytes: defaults.maxLineBytes,
        startupTimeoutMs: defaults.startupTimeoutMs,
        timeoutGraceMs: defaults.timeoutGraceMs,
        now: this.#context.now,
      });
      instance.connection = connection;
      if (instance.state === 'retired') return void (await connection.close());
      connection.onBroken((error) => this.#onBroken(instance, error));
      await connection.ready;
    } catch (error) {
      // Retired on purpose while warming (tool saved, drained, closed): not a failure.
      if (instance.retireReason !== undefined && instance.retireReason !== 'start-failed') return;
      const failure = asUnavailable(error);
      this.#lastError = failure.message;
      if (instance.state !== 'retired') this.#retire(instance, 'start-failed');
      // The engine created the container, which then died before `ready` (killed,
      // crashed): the engine works, so replace it rather than failing every caller.
      // Several deaths in a row do count as a sandbox failure (a broken image).
      if (created && ++this.#deathsWhileWarming < MAX_DEATHS_WHILE_WARMING) {
        this.#grow();
        return;
      }
      this.#context.reportStart(failure);
      this.#queue.failOldest(failure);
      return;
    }
    this.#deathsWhileWarming = 0;
    this.#context.reportStart();
    if (instance.retireReason !== undefined) return; // retired while warming (drain, close)
    if (instance.generation !== this.#generation) {
      this.#retire(instance, 'retired-tool');
      this.#grow();
      return;
    }
    instance.transition('idle');
    instance.idleSince = this.#context.now();
    this.#serveWaiters();
  }

  #onBroken(instance: PooledInstance, error: McphostError): void {
    if (!this.#instances.has(instance)) return;
    this.#lastError = error.message;
    if (instance.state !== 'idle') return; // warming: bringUp handles it; leased: release does
    this.#retire(instance, 'exited');
    this.refill();
  }

  #serveWaiters(): void {
    while (this.#queue.length > 0) {
      const idle = this.#longestIdle();
      if (!idle) return;
      idle.transition('leased');
      if (!this.#queue.serve(idle)) idle.transition('idle');
    }
  }

  #retire(instance: PooledInstance, reason: RetireReason): void {
    if (instance.state === 'retired') return;
    instance.transition('retired');
    instance.retireReason = reason;
    this.#instances.delete(instance);
    this.#retired[reason] = (this.#retired[reason] ?? 0) + 1;
    void instance.connection?.close();
    this.#context.onSlotFreed();
  }

  /**
   * The container idle the longest: leasing round-robin gives each harness the
   * most time to prepare its next fresh context before it is needed again.
   */
  #longestIdle(): PooledInstance | undefined {
    let longest: PooledInstance | undefined;
    for (const instance of this.#instances) {
      if (instance.state !== 'idle' || !instance.connection?.usable) continue;
      if (!longest || instance.idleSince < longest.idleSince) longest = instance;
    }
    return longest;
  }

  #idleOldestFirst(): PooledInstance[] {
    return [...this.#instances]
      .filter((instance) => instance.state === 'idle')
      .sort((a, b) => a.idleSince - b.idleSince);
  }

  #count(state: PooledInstance['state']): number {
    let count = 0;
    for (const instance of this.#instances) if (instance.state === state) count += 1;
    return count;
  }
}

function noCapacity(key: string, busy: number, maxSize: number, why: string): McphostError {
  return new McphostError(
    'ERR_NO_CAPACITY',
    `no capacity: pool ${key} has ${busy} of ${maxSize} containers busy and ${why}`,
  );
}

function shuttingDown(): McphostError {
  return new McphostError('ERR_SHUTTING_DOWN', 'the sandbox manager is shutting down');
}

function asUnavailable(error: unknown): McphostError {
  if (error instanceof McphostError && error.code === 'ERR_SANDBOX_UNAVAILABLE') return error;
  const message = error instanceof Error ? error.message : String(error);
  const text = message.startsWith('sandbox unavailable')
    ? message
    : `sandbox unavailable: ${message}`;
  return new McphostError('ERR_SANDBOX_UNAVAILABLE', text, {
    cause: error,
  });
}
