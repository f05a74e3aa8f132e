/**
 * The containers of one pool: one server's (or, under `isolation: "tool"`
 * and for strict tools, one tool's) containers of one shape. Callers lease a
 * ready container, run one invocation and release it in `finally`.
 *
 * The steady state is quiet by construction:
 * - `minWarm` is the number of containers the pool keeps (idle or busy), not
 *   the number kept idle: a caller leasing the one warm container does not
 *   start a replacement, so back-to-back calls start nothing.
 * - The idle TTL only retires containers above `minWarm`, and a refill only
 *   starts containers below it: an idle system starts nothing.
 * - A caller that must wait starts a container only when that would serve it
 *   sooner than a busy one frees up (a burst of short calls queues on one
 *   container instead of starting four).
 * Budget, fair share, start concurrency and the generic pool are the
 * manager's business and come in through `PoolContext`.
 */
import { McphostError } from '../../errors.js';
import type { SandboxSpec } from '../driver.js';
import { asUnavailable, cancelled, noCapacity, shuttingDown } from '../sandbox-errors.js';
import { heapLimitMb } from '../harness-command.js';
import { RunnerConnection } from '../runner-connection.js';
import type { PoolContext, PoolIdentityInput, PoolStats } from './pool-contract.js';
import { poolUnitOf, shapeLabel, type ContainerShape } from './pool-key.js';
import { PooledInstance, type RetireReason } from './pooled-instance.js';
import type { PoolSize } from './pool-settings.js';
import type { StartPurpose } from './start-queue.js';
import { WaitQueue } from './wait-queue.js';

/** Containers dying before `ready` in a row before the pool reports the sandbox unavailable. */
const MAX_DEATHS_WHILE_WARMING = 3;
/** Invocations in a row whose heap stays above the share before the container is retired. */
const HIGH_HEAP_STREAK = 3;
/** Weight of the newest sample in the invocation-duration average. */
const DURATION_EWMA_WEIGHT = 0.2;

/** One pool's containers. */
export class WarmPool {
  readonly key: string;
  /** What operators size and read in messages: `server`, `server/tool`, or the generic key. */
  readonly unit: string;
  readonly server: string | undefined;
  readonly tool: string | undefined;
  readonly shape: ContainerShape;
  readonly generic: boolean;
  readonly #context: PoolContext;
  readonly #instances = new Set<PooledInstance>();
  readonly #queue: WaitQueue<PooledInstance>;
  readonly #retired: Partial<Record<RetireReason, number>> = {};
  readonly #heapRetireBytes: number;
  #size: PoolSize;
  #strict = false;
  /** Bumped by retireAll: containers of an older generation never serve again. */
  #generation = 0;
  /** No background refill until the next lease (after drain, a tool or server change). */
  #dormant = false;
  #closed = false;
  #started = 0;
  #adopted = 0;
  #deathsWhileWarming = 0;
  #lastError: string | undefined;
  /** Average invocation time, in ms; undefined until the first one finishes. */
  #durationMs: number | undefined;
  #growTimer: NodeJS.Timeout | undefined;
  /** When the pool last leased a container: an empty pool unused for the TTL is forgotten. */
  lastLeasedAt = 0;

  constructor(identity: PoolIdentityInput, size: PoolSize, context: PoolContext) {
    this.key = identity.key;
    this.unit =
      identity.server === undefined ? identity.key : poolUnitOf(identity.server, identity.tool);
    this.server = identity.server;
    this.tool = identity.tool;
    this.shape = identity.shape;
    this.generic = identity.server === undefined;
    this.#size = size;
    this.#context = context;
    this.#queue = new WaitQueue<PooledInstance>(context.now);
    const share = context.defaults.heapRetireShare;
    this.#heapRetireBytes = share * heapLimitMb(identity.shape.memoryMb) * 1024 * 1024;
  }

  /** Containers counted against the budget (waiting to start, warming, idle, leased). */
  get total(): number {
    return this.#instances.size;
  }

  /** Containers here plus generic ones promised: what the pool's size bounds. */
  get #counted(): number {
    return this.total + this.#context.genericPromisedTo(this);
  }

  /** Callers waiting. */
  get queued(): number {
    return this.#queue.length;
  }

  /** Idle, ready containers. */
  get idle(): number {
    return this.#count('idle');
  }

  /** The pool's current size settings. */
  get size(): PoolSize {
    return this.#size;
  }

  /** Adopts the tool's strictness (single-use containers). */
  setStrict(strict: boolean): void {
    this.#strict = strict;
  }

  /** A leased container, now or after a wait; ERR_NO_CAPACITY, ERR_SANDBOX_UNAVAILABLE or ERR_CANCELLED otherwise. */
  lease(signal?: AbortSignal): Promise<PooledInstance> {
    if (this.#closed) return Promise.reject(shuttingDown());
    if (signal?.aborted) return Promise.reject(cancelled());
    this.#dormant = false;
    this.lastLeasedAt = this.#context.now();
    const idle = this.#longestIdle();
    if (idle) {
      idle.transition('leased');
      this.#context.recordLeaseWait(this, 0);
      return Promise.resolve(idle);
    }
    this.#context.record(this, 'miss');
    const adopted = this.total < this.#size.maxSize ? this.#context.borrowGeneric(this) : undefined;
    if (adopted) {
      this.#adopt(adopted);
      adopted.transition('leased');
      this.#context.recordLeaseWait(this, 0);
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
          this.unit,
          this.#count('leased'),
          maxSize,
          `${this.#queue.length} callers already waiting`,
        ),
      );
    }
    const queuedAt = this.#context.now();
    // A generic container already starting serves this caller sooner than a start of its own.
    if (this.#counted < maxSize) this.#context.promiseGeneric(this);
    const waiting = this.#queue.wait(
      queueTimeoutMs,
      () =>
        noCapacity(
          this.unit,
          this.#count('leased'),
          maxSize,
          `the wait of ${queueTimeoutMs} ms ran out`,
        ),
      signal,
    );
    this.#grow();
    return waiting.then((instance) => {
      this.#context.recordLeaseWait(this, this.#context.now() - queuedAt);
      return instance;
    });
  }

  /** Returns a leased container; `reason` (or strictness, age, heap, a newer generation) retires it instead. */
  release(instance: PooledInstance, reason?: RetireReason, durationMs?: number): void {
    if (durationMs !== undefined) {
      this.#durationMs =
        this.#durationMs === undefined
          ? durationMs
          : this.#durationMs + DURATION_EWMA_WEIGHT * (durationMs - this.#durationMs);
    }
    if (instance.state === 'retired') return; // retired under its lease (close)
    if (instance.state !== 'leased') throw new Error(`release of a ${instance.state} container`);
    instance.invocations += 1;
    const heap = instance.connection?.heapUsedBytes ?? 0;
    instance.highHeapStreak = heap > this.#heapRetireBytes ? instance.highHeapStreak + 1 : 0;
    const why =
      reason ??
      (this.#strict ? 'strict' : undefined) ??
      (instance.invocations >= this.#context.defaults.maxInvocationsPerContainer
        ? 'max-invocations'
        : undefined) ??
      (instance.highHeapStreak >= HIGH_HEAP_STREAK ? 'heap' : undefined) ??
      (instance.generation !== this.#generation ? 'retired-tool' : undefined) ??
      (this.#dormant ? 'drained' : undefined) ??
      (instance.connection?.usable ? undefined : 'faulted') ??
      (this.total > this.#size.maxSize ? 'resized' : undefined);
    // Re-leasing to our own queue while another server within its share starves is not fair.
    const yielded = !why && this.#queue.length > 0 && this.#context.shouldYield(this);
    if (yielded) {
      // The freed place goes to the starving server (the manager serves the most deprived first).
      this.#retire(instance, 'rebalanced');
      return;
    }
    if (why) {
      this.#retire(instance, why);
      // A single-use or recycled container is replaced for the callers waiting, or up to minWarm.
      this.#grow();
      this.refill();
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

  /** Applies a new size (already validated against the caps). */
  configure(size: PoolSize): void {
    this.#size = size;
    for (const instance of this.#idleOldestFirst()) {
      if (this.total <= size.maxSize) break;
      this.#retire(instance, 'resized');
    }
    this.refill();
    this.#grow();
  }

  /** Retires containers above minWarm that have been idle for the TTL; never goes below minWarm. */
  sweep(now: number): void {
    let surplus = this.total - this.#size.minWarm;
    for (const instance of this.#idleOldestFirst()) {
      if (surplus <= 0) break;
      if (now - instance.idleSince < this.#context.defaults.idleTtlMs) break;
      this.#retire(instance, 'idle-ttl');
      surplus -= 1;
    }
  }

  /** Starts containers until the pool holds minWarm (within maxSize and free budget; never evicts). */
  refill(): void {
    if (this.#dormant || this.#closed) return;
    while (
      this.#counted < this.#size.minWarm &&
      this.#counted < this.#size.maxSize &&
      this.#context.reserveSlot(this, 'refill')
    ) {
      this.#startContainer('refill');
    }
  }

  /** Starts containers for waiters that no busy or starting container will serve soon enough. */
  grow(): void {
    this.#grow();
  }

  /**
   * Whether a promised generic container is still wanted: a caller waits, and
   * the pool was not drained, retired or closed meanwhile. When not, the
   * container stays generic (it never lands in a pool nobody serves from).
   */
  wantsGeneric(): boolean {
    return !this.#closed && !this.#dormant && this.#queue.length > 0;
  }

  /** Adopts for good the generic container promised to this pool and serves the oldest waiter with it. */
  adoptGeneric(instance: PooledInstance): void {
    this.#adopt(instance);
    instance.idleSince = this.#context.now();
    this.#serveWaiters();
  }

  /**
   * Takes the longest-idle container out of this pool, alive, for another pool
   * to adopt (the generic pool's only way to give one away); the pool refills
   * behind it.
   */
  takeOutIdle(): PooledInstance | undefined {
    const idle = this.#longestIdle();
    if (!idle) return undefined;
    this.#instances.delete(idle);
    queueMicrotask(() => this.refill());
    return idle;
  }

  /** Retires the longest-idle container to make room elsewhere; false when none is idle. */
  evictOne(): boolean {
    const [oldest] = this.#idleOldestFirst();
    if (!oldest) return false;
    this.#retire(oldest, 'evicted');
    this.#context.record(this, 'eviction');
    return true;
  }

  /** When each idle container became idle, oldest first: `evictOne` takes them in this order. */
  idleSinceOldestFirst(): number[] {
    return this.#idleOldestFirst().map((instance) => instance.idleSince);
  }

  /** Fails waiters and kills every container, leased ones included. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#growTimer);
    this.#queue.failAll(shuttingDown());
    const connections = [...this.#instances].map((instance) => instance.connection);
    for (const instance of [...this.#instances]) this.#retire(instance, 'closed');
    await Promise.all(connections.map((connection) => connection?.close()));
  }

  /** Containers whose start is under way: out of the start queue, not yet ready. */
  startsUnderWay(): number {
    let starting = 0;
    for (const instance of this.#instances) if (instance.starting) starting += 1;
    return starting;
  }

  /** Counts by state, for the manager's per-server figures. */
  counts(): { warm: number; busy: number; warming: number } {
    return {
      warm: this.#count('idle'),
      busy: this.#count('leased'),
      warming: this.#count('warming'),
    };
  }

  stats(): PoolStats {
    const { warm, busy, warming } = this.counts();
    return {
      poolKey: this.key,
      ...(this.server === undefined ? {} : { server: this.server }),
      ...(this.tool === undefined ? {} : { tool: this.tool }),
      shape: shapeLabel(this.shape),
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
      adopted: this.#adopted,
      retired: { ...this.#retired },
      ...this.#byEngine(),
      ...(this.#lastError === undefined ? {} : { lastError: this.#lastError }),
    };
  }

  /** Started containers by the engine running them, when the driver has several. */
  #byEngine(): Pick<PoolStats, 'engines'> {
    const engines: Record<string, number> = {};
    for (const instance of this.#instances) {
      const engine = instance.connection?.instance.engine;
      if (engine !== undefined) engines[engine] = (engines[engine] ?? 0) + 1;
    }
    return Object.keys(engines).length === 0 ? {} : { engines };
  }

  /** Notes a runner failure seen by the manager, for operators. */
  noteError(message: string): void {
    this.#lastError = message;
  }

  /**
   * Whether a place in the budget would be used at once: callers wait that no
   * starting container covers, the pool is below maxSize, and starting is
   * worth it (see `#worthStarting`). Another server yields a container only to such a pool.
   */
  wouldGrow(): boolean {
    return !this.#closed && this.#needsContainer() && this.#worthStarting();
  }

  #needsContainer(): boolean {
    const promised = this.#context.genericPromisedTo(this);
    return (
      this.#queue.length > this.#count('warming') + promised &&
      this.total + promised < this.#size.maxSize
    );
  }

  #grow(): void {
    if (this.#closed) return;
    while (this.#needsContainer()) {
      if (!this.#worthStarting()) {
        this.#checkGrowthLater();
        return;
      }
      if (!this.#context.reserveSlot(this, 'demand')) return;
      this.#startContainer('demand');
    }
  }

  /**
   * Whether a new container would serve the oldest uncovered waiter sooner
   * than a busy one: always when nothing is busy, when the wait already
   * lasted a start's time, or when the pool's calls are known to be slow.
   */
  #worthStarting(): boolean {
    const busy = this.#count('leased');
    if (busy === 0) return true;
    const startMs = this.#context.startEstimateMs();
    const since = this.#queue.oldestSince();
    if (since !== undefined && this.#context.now() - since >= startMs) return true;
    if (this.#durationMs === undefined) return false;
    const uncovered = this.#queue.length - this.#count('warming');
    return this.#durationMs * Math.ceil(uncovered / busy) >= startMs;
  }

  /** Looks again once the oldest waiter has waited a start's time. */
  #checkGrowthLater(): void {
    if (this.#growTimer) return;
    const since = this.#queue.oldestSince() ?? this.#context.now();
    const delay = Math.max(1, since + this.#context.startEstimateMs() - this.#context.now());
    this.#growTimer = setTimeout(() => {
      this.#growTimer = undefined;
      this.#grow();
    }, delay);
    this.#growTimer.unref();
  }

  #adopt(instance: PooledInstance): void {
    this.#adopted += 1;
    instance.boundTo = this.key;
    instance.generation = this.#generation;
    this.#instances.add(instance);
    instance.connection?.onBroken((error) => this.#onBroken(instance, error));
  }

  /** Reserves a place for a new container and queues its start behind the start limit. */
  #startContainer(purpose: StartPurpose): void {
    const instance = new PooledInstance(this.#generation, this.generic ? undefined : this.key);
    this.#instances.add(instance);
    this.#context.starts.enqueue({
      purpose,
      owner: this.server,
      stillNeeded: () => instance.state === 'warming' && this.#stillNeeded(),
      run: () => this.#bringUp(instance),
      drop: () => this.#forget(instance),
    });
  }

  /** A queued start is still useful: callers wait that starting containers won't serve, or minWarm is unmet. */
  #stillNeeded(): boolean {
    if (this.#closed) return false;
    const starting = this.startsUnderWay();
    const serving = this.#count('idle') + this.#count('leased') + starting;
    return (
      this.#queue.length > starting + this.#context.genericPromisedTo(this) ||
      (!this.#dormant && serving < this.#size.minWarm)
    );
  }

  /** Removes a container that was never started (its queued start was dropped). */
  #forget(instance: PooledInstance): void {
    if (!this.#instances.delete(instance)) return;
    if (instance.state !== 'retired') instance.transition('retired');
    instance.retireReason = 'unneeded';
    this.#context.onSlotFreed();
    this.#context.containerLost(this);
  }

  async #bringUp(instance: PooledInstance): Promise<void> {
    const { defaults } = this.#context;
    const spec: SandboxSpec = {
      labels: { 'mcphost.pool': this.key },
      memoryMb: this.shape.memoryMb,
      cpus: this.shape.cpus,
      pids: this.shape.pids,
      runtime: this.shape.runtime,
    };
    instance.starting = true;
    this.#started += 1;
    this.#context.record(this, 'start');
    const startedAt = this.#context.now();
    let created = false;
    try {
      const sandbox = await this.#context.driver.start(spec);
      created = true;
      const connection = new RunnerConnection(sandbox, {
        maxLineBytes: defaults.maxLineBytes,
        startupTimeoutMs: defaults.startupTimeoutMs,
        timeoutGraceMs: defaults.timeoutGraceMs,
        maxConcurrentCalls: defaults.maxConcurrentCalls,
        now: this.#context.now,
      });
      instance.connection = connection;
      if (instance.state === 'retired') return void (await connection.close());
      connection.onBroken((error) => this.#onBroken(instance, error));
      await connection.ready;
    } catch (error) {
      instance.starting = false;
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
    instance.starting = false;
    this.#deathsWhileWarming = 0;
    this.#context.reportStart(undefined, this.#context.now() - startedAt);
    if (instance.retireReason !== undefined) return; // retired while warming (drain, close)
    if (instance.generation !== this.#generation) {
      this.#retire(instance, 'retired-tool');
      this.#grow();
      return;
    }
    instance.transition('idle');
    instance.idleSince = this.#context.now();
    this.#serveWaiters();
    this.#context.containerReady(this);
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
    clearTimeout(this.#growTimer);
    this.#growTimer = undefined;
  }

  #retire(instance: PooledInstance, reason: RetireReason): void {
    if (instance.state === 'retired') return;
    const wasWarming = instance.state === 'warming';
    instance.transition('retired');
    instance.retireReason = reason;
    this.#instances.delete(instance);
    this.#retired[reason] = (this.#retired[reason] ?? 0) + 1;
    void instance.connection?.close();
    this.#context.onSlotFreed();
    if (wasWarming) this.#context.containerLost(this);
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
