/**
 * Owns every warm pool. A pool serves one server (or one tool of it, see
 * `pool/pool-key.ts`) with containers of one shape; the pools share a budget
 * divided fairly between servers (`pool/container-budget.ts`), a bounded
 * start queue (`pool/start-queue.ts`, callers' starts before refills) and a
 * generic pool of unbound containers (`pool/generic-pool.ts`). `invoke`
 * leases a container, runs one invocation over its connection, and releases
 * it in `finally` — retiring it on any timeout, crash, OOM, protocol fault or
 * cancellation. Tool failures, no capacity and an unavailable engine are
 * outcomes, never exceptions.
 */
import { McphostError, errorSpecOf, isMcphostError } from '../errors.js';
import { wasUndelivered } from './runner-connection.js';
import { asUnavailable, shuttingDown } from './sandbox-errors.js';
import type { SandboxDriver } from './driver.js';
import type { InvocationOutcome, InvokeHooks, LogEntry, ToolRuntime } from './invocation.js';
import { LogCollector } from './log-collector.js';
import {
  effectiveLimits,
  withinCeilings,
  type InvocationLimits,
  type LimitCeilings,
  type OwnLimits,
} from './limits.js';
import { ContainerBudget, type ServerPoolStats } from './pool/container-budget.js';
export type { ServerPoolStats } from './pool/container-budget.js';
import { GenericPool } from './pool/generic-pool.js';
import { poolIdentityOf, poolUnitOf } from './pool/pool-key.js';
import {
  parsePoolDefaults,
  validatePoolSize,
  type PoolCaps,
  type PoolDefaults,
  type PoolSize,
  type ResolvedPoolDefaults,
} from './pool/pool-settings.js';
import type { PooledInstance, RetireReason } from './pool/pooled-instance.js';
import { StartQueue } from './pool/start-queue.js';
import type { PoolContext, PoolStats } from './pool/pool-contract.js';
import { WarmPool } from './pool/warm-pool.js';

/** Key of the generic pool in `stats()`. */
export const GENERIC_POOL_KEY = '*generic*';

/** Receives scheduler events (metrics); every method is optional. */
export interface SandboxEvents {
  /** A container start began for `server` (undefined: the generic pool). */
  containerStarted?(server: string | undefined): void;
  /** An idle container of `server` was evicted to make room for another lease. */
  containerEvicted?(server: string | undefined): void;
  /** A lease of `server` got its container after `waitMs` (0 when one was idle). */
  leaseWaited?(server: string, waitMs: number): void;
}

/** Options of a SandboxManager; validated once, at construction. */
export interface SandboxManagerOptions {
  driver: SandboxDriver;
  defaults: PoolDefaults;
  /**
   * Unbound containers kept warm with `defaults.limits` (runc): `size` is the
   * most; the pool keeps one, and up to `size` while pools keep missing
   * (misses in the last minute). 0 disables the generic pool.
   */
  generic: { size: number };
  caps: PoolCaps;
  /** Container starts in flight at once (POOL_START_CONCURRENCY, derived in app/pool-budget.ts). */
  startConcurrency: number;
  /** How often stopped containers nothing tracks are removed, in ms (SANDBOX_REAP_INTERVAL_MS). */
  reapIntervalMs: number;
  /** Milliseconds clock; default `Date.now`. */
  clock?: { now(): number };
  /** Retry delays after the driver fails, in ms: first and largest; default 250 and 10 000. */
  retry?: { initialMs?: number; maxMs?: number };
  /** Scheduler events, for metrics. */
  events?: SandboxEvents;
}

/** The shared budget, as `budgetStats()` reports it. */
export interface BudgetStats {
  /** Containers at most, and in all pools now. */
  maxTotal: number;
  used: number;
  /** Memory limits of all containers now (`usedMb`) and at most (`maxMb`), in MiB. */
  memory: { usedMb: number; maxMb: number };
  /** CPU shares of all containers now, in cores (bounded through the container count). */
  cpus: number;
  /** The most any server or tool may set; what is saved above runs at these. */
  limitCeilings: LimitCeilings;
  /** Servers holding containers or waiting for one. */
  activeServers: number;
  serverShare: number;
  /** Container starts: at most `concurrency` at once, `perServer` of one server; in flight; waiting. */
  starts: { concurrency: number; perServer: number; running: number; queued: number };
  /** Typical time from start to ready, in ms. */
  startEstimateMs: number;
  genericTarget: number;
}

/** What a container start is assumed to cost before one has been measured, in ms. */
const INITIAL_START_ESTIMATE_MS = 250;
/** Weight of the newest start in the start-time average. */
const START_EWMA_WEIGHT = 0.2;

/** Runs tool invocations in warm, per-server pools of sandboxes. */
export class SandboxManager {
  readonly #driver: SandboxDriver;
  readonly #defaults: ResolvedPoolDefaults;
  readonly #caps: PoolCaps;
  readonly #now: () => number;
  readonly #pools = new Map<string, WarmPool>();
  /** Sizes by unit (`server` or `server/tool`), applied to each pool of the unit whatever its shape. */
  readonly #unitSizes = new Map<string, PoolSize>();
  readonly #budget: ContainerBudget;
  readonly #generic: GenericPool | undefined;
  readonly #starts: StartQueue;
  readonly #events: SandboxEvents;
  readonly #retryInitialMs: number;
  readonly #retryMaxMs: number;
  readonly #context: PoolContext;
  #startEstimateMs = INITIAL_START_ESTIMATE_MS;
  #healthy = true;
  #failures = 0;
  #recoveryTimer: NodeJS.Timeout | undefined;
  #sweepTimer: NodeJS.Timeout | undefined;
  #reapTimer: NodeJS.Timeout | undefined;
  readonly #reapIntervalMs: number;
  #closed = false;

  constructor(options: SandboxManagerOptions) {
    if (!options?.driver) throw new TypeError('SandboxManager: driver is required');
    this.#driver = options.driver;
    this.#caps = { ...options.caps, limitCeilings: { ...options.caps?.limitCeilings } };
    this.#defaults = parsePoolDefaults(options.defaults, this.#caps);
    const genericSize = options.generic?.size;
    if (!Number.isInteger(genericSize) || genericSize < 0 || genericSize > this.#caps.maxTotal) {
      throw new TypeError(
        'SandboxManager: generic.size must be an integer between 0 and caps.maxTotal',
      );
    }
    if (!Number.isInteger(options.reapIntervalMs) || options.reapIntervalMs < 1) {
      throw new TypeError('SandboxManager: reapIntervalMs must be a positive integer');
    }
    this.#reapIntervalMs = options.reapIntervalMs;
    const clock = options.clock;
    this.#now = clock ? () => clock.now() : Date.now;
    this.#budget = new ContainerBudget(this.#caps, () => this.#allPools(), this.#now);
    // A server starts at most its share of the slots at once (as it holds at most its share
    // of the budget): another server's start then finds one free instead of waiting.
    const perServer = Math.max(1, Math.floor(options.startConcurrency * this.#caps.serverShare));
    this.#starts = new StartQueue(options.startConcurrency, perServer);
    this.#events = options.events ?? {};
    this.#retryInitialMs = options.retry?.initialMs ?? 250;
    this.#retryMaxMs = options.retry?.maxMs ?? 10_000;
    if (!(this.#retryInitialMs > 0) || !(this.#retryMaxMs >= this.#retryInitialMs)) {
      throw new TypeError('SandboxManager: retry needs 0 < initialMs <= maxMs');
    }
    this.#context = {
      driver: this.#driver,
      defaults: this.#defaults,
      starts: this.#starts,
      now: this.#now,
      reserveSlot: (pool, purpose) => !this.#closed && this.#budget.reserve(pool, purpose),
      shouldYield: (pool) => this.#budget.shouldYield(pool),
      borrowGeneric: (pool) => this.#generic?.borrow(pool),
      promiseGeneric: (pool) => void this.#generic?.promise(pool),
      genericPromisedTo: (pool) => this.#generic?.promisedTo(pool) ?? 0,
      containerReady: (pool) => {
        if (pool === this.#generic?.pool) this.#generic.handOver();
      },
      containerLost: (pool) => {
        if (pool === this.#generic?.pool) this.#generic.rebalance();
      },
      driverHealthy: () => this.#healthy,
      reportStart: (error, readyMs) => this.#reportStart(error, readyMs),
      startEstimateMs: () => this.#startEstimateMs,
      onSlotFreed: () => this.#onSlotFreed(),
      record: (pool, event) => this.#record(pool, event),
      recordLeaseWait: (pool, waitMs) => {
        if (pool.server !== undefined) this.#events.leaseWaited?.(pool.server, waitMs);
      },
    };
    if (genericSize > 0) {
      const { memoryMb, cpus, pids } = this.#defaults.limits;
      const pool = new WarmPool(
        { key: GENERIC_POOL_KEY, shape: { memoryMb, cpus, pids, runtime: 'runc' } },
        { minWarm: 1, maxSize: genericSize },
        this.#context,
      );
      this.#generic = new GenericPool(pool, genericSize, this.#budget, this.#now);
    }
  }

  /** Reaps containers a killed control plane left behind, then fills the generic pool. */
  async start(): Promise<void> {
    if (this.#closed) throw new TypeError('SandboxManager.start: manager is closed');
    // The sweep runs whatever happens below: an engine that is down at start comes back.
    const interval = Math.max(50, Math.min(5_000, Math.floor(this.#defaults.idleTtlMs / 2)));
    this.#sweepTimer = setInterval(() => this.#sweep(), interval);
    this.#sweepTimer.unref();
    // Containers that stopped without us (killed from outside, an engine restart) are
    // removed while this process runs, not only when the next one starts.
    this.#reapTimer = setInterval(() => {
      this.#driver.reapStopped().catch(() => undefined);
    }, this.#reapIntervalMs);
    this.#reapTimer.unref();
    try {
      await this.#driver.reapLeftovers();
    } catch (error) {
      this.#reportStart(asUnavailable(error));
      return;
    }
    this.#generic?.pool.refill();
  }

  /**
   * Runs one invocation; resolves with its outcome (failures included), never
   * rejects for them. `runtime.limits` were validated where each part entered
   * (the configuration at boot, a server's or tool's limits when saved) and
   * resolved with `resolveLimits`; a value saved before the host's ceilings
   * were lowered runs at the ceiling: no container is ever created above it.
   */
  async invoke(requested: ToolRuntime, hooks: InvokeHooks): Promise<InvocationOutcome> {
    const queuedAt = this.#now();
    if (!requested?.server || !requested.tool || typeof requested.code !== 'string') {
      throw new TypeError('SandboxManager.invoke: runtime needs a server, a tool and code');
    }
    const limits = withinCeilings(requested.limits, this.#caps.limitCeilings);
    const runtime = limits === requested.limits ? requested : { ...requested, limits };
    const logs = new LogCollector(runtime.limits, hooks.onLog);
    if (this.#closed) return failed(shuttingDown(), logs.entries, 0, 0);
    const pool = this.#poolFor(runtime);
    const first = await this.#attempt(pool, runtime, hooks, logs, queuedAt);
    if (!first.undelivered) return first.outcome;
    // A container that died unnoticed took nothing of the invocation: it runs once more elsewhere.
    return (await this.#attempt(pool, runtime, hooks, logs, queuedAt)).outcome;
  }

  /** One lease and run; `undelivered` when the runner never got the invocation (see `wasUndelivered`). */
  async #attempt(
    pool: WarmPool,
    runtime: ToolRuntime,
    hooks: InvokeHooks,
    logs: LogCollector,
    queuedAt: number,
  ): Promise<{ outcome: InvocationOutcome; undelivered: boolean }> {
    let instance: PooledInstance;
    try {
      instance = await pool.lease(hooks.signal);
    } catch (error) {
      const outcome = failed(asMcphostError(error), logs.entries, 0, this.#now() - queuedAt);
      return { outcome, undelivered: false };
    }
    const startedAt = this.#now();
    const queueMs = startedAt - queuedAt;
    const instanceId = instance.id;
    let retireReason: RetireReason | undefined;
    try {
      const connection = instance.connection;
      if (!connection) throw new Error('a leased container has no connection');
      const verdict = await connection.invoke(
        { code: runtime.code, params: hooks.params, env: runtime.env, limits: runtime.limits },
        {
          onLog: (entry) => logs.add(entry),
          onCall: (operation, args, context) => hooks.onCall(operation, args, context),
          onProgress: hooks.onProgress,
          onCloseStream: hooks.onCloseStream,
          onWaiting: hooks.onWaiting,
          client: hooks.client,
          caller: hooks.caller,
          signal: hooks.signal,
        },
      );
      // A failure the harness reported may still leave the container suspect (a timeout, memory).
      if (!verdict.ok) retireReason = errorSpecOf(verdict.error.code).retire;
      const durationMs = this.#now() - startedAt;
      const outcome = { ...verdict, logs: logs.entries, durationMs, queueMs, instanceId };
      return { outcome, undelivered: false };
    } catch (error) {
      const failure = asMcphostError(error);
      retireReason = errorSpecOf(failure.code).retire ?? 'faulted';
      pool.noteError(failure.message);
      const durationMs = this.#now() - startedAt;
      const outcome = { ...failed(failure, logs.entries, durationMs, queueMs), instanceId };
      return { outcome, undelivered: wasUndelivered(failure) };
    } finally {
      pool.release(instance, retireReason, this.#now() - startedAt);
    }
  }

  /**
   * Sets the minWarm/maxSize of a unit — a server (`"acme"`: its shared
   * pools, and the pools of its tools that have no size of their own) or one
   * tool with containers of its own (`"acme/report"`) — ERR_VALIDATION beyond
   * the caps; applies now and to pools created later.
   */
  configurePool(unit: string, settings: PoolSize): PoolSize {
    const size = this.checkPoolSize(unit, settings);
    this.#unitSizes.set(unit, size);
    for (const pool of this.#pools.values()) {
      if (pool.server !== undefined && this.#sizeUnitOf(pool) === unit) pool.configure(size);
    }
    return size;
  }

  /** The size if it fits the caps; ERR_VALIDATION naming what does not. Changes nothing. */
  checkPoolSize(unit: string, settings: PoolSize): PoolSize {
    return validatePoolSize(unit, settings, this.#caps);
  }

  /**
   * Retires the idle containers of a server (all its pools) or of one tool's
   * own pool now, and busy ones when they finish; no refill until the next invocation.
   */
  drain(unit: string): void {
    for (const pool of this.#pools.values()) {
      if (pool.server === undefined) continue;
      if (pool.server === unit || poolUnitOf(pool.server, pool.tool) === unit) {
        pool.retireAll('drained', true);
      }
    }
  }

  /**
   * Call when a tool's code, secrets or limits change or it is deleted. Pools
   * serving only that tool retire their containers. The server's shared pools
   * keep theirs: every invocation gets a fresh context with the code and
   * secrets it is sent, so nothing of the old version lives in them.
   */
  toolChanged(server: string, tool: string): void {
    for (const [key, pool] of this.#pools) {
      if (pool.server !== server || pool.tool !== tool) continue;
      pool.retireAll('retired-tool', true);
      if (pool.total === 0 && pool.queued === 0) this.#pools.delete(key);
    }
  }

  /** Call when a server's sandbox settings change or it is deleted: none of its containers serves again. */
  serverChanged(server: string, deleted = false): void {
    for (const [key, pool] of this.#pools) {
      if (pool.server !== server) continue;
      pool.retireAll('retired-tool', true);
      if (pool.total === 0 && pool.queued === 0) this.#pools.delete(key);
    }
    if (!deleted) return;
    this.#budget.forget(server);
    // Its stored sizes went with it (the store cascades): so do ours.
    for (const unit of [...this.#unitSizes.keys()]) {
      if (unit === server || unit.startsWith(`${server}/`)) this.#unitSizes.delete(unit);
    }
  }

  /**
   * What an invocation of a tool with `tool` limits on a server with `server`
   * limits runs with now: the defaults, the server's limits as the tool's
   * ceiling, and the host's ceilings (what `invoke` applies).
   */
  effectiveLimits(tool: OwnLimits | undefined, server: OwnLimits | undefined): InvocationLimits {
    return effectiveLimits(tool, server, this.#defaults.limits, this.#caps.limitCeilings);
  }

  /** Applies a server's container maximum (null: its share of the budget) at once. */
  setServerMaxContainers(server: string, maxContainers: number | null): void {
    this.#budget.setMaxContainers(server, maxContainers);
  }

  /** Per-pool figures, the generic pool first. */
  stats(): PoolStats[] {
    return this.#allPools().map((pool) => pool.stats());
  }

  /** Sizes set per unit, in the order they were set. */
  sizes(): { unit: string; minWarm: number; maxSize: number }[] {
    return [...this.#unitSizes].map(([unit, size]) => ({ unit, ...size }));
  }

  /** Per-server figures: containers by state, recent starts and evictions, share of the budget. */
  serverStats(): ServerPoolStats[] {
    return this.#budget.serverStats();
  }

  /** The shared budget and the start queue. */
  budgetStats(): BudgetStats {
    const committed = this.#budget.committed();
    return {
      maxTotal: this.#budget.maxTotal,
      used: committed.containers,
      memory: { usedMb: committed.memoryMb, maxMb: this.#budget.maxMemoryMb },
      cpus: Math.round(committed.cpus * 100) / 100,
      limitCeilings: { ...this.#caps.limitCeilings },
      activeServers: this.#budget.activeServers().size,
      serverShare: this.#budget.serverShare,
      starts: {
        concurrency: this.#starts.concurrency,
        perServer: this.#starts.perOwner,
        running: this.#starts.running,
        queued: this.#starts.queued,
      },
      startEstimateMs: Math.round(this.#startEstimateMs),
      genericTarget: this.#generic?.target ?? 0,
    };
  }

  /** Whether the driver is believed to work (false after a failed start until it answers again). */
  get healthy(): boolean {
    return this.#healthy;
  }

  /** Retires every container (busy ones are killed) and fails waiting callers; the driver stays open. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#recoveryTimer);
    clearInterval(this.#sweepTimer);
    clearInterval(this.#reapTimer);
    this.#starts.clear();
    await Promise.all(this.#allPools().map((pool) => pool.close()));
  }

  #allPools(): WarmPool[] {
    const pools = [...this.#pools.values()];
    return this.#generic ? [this.#generic.pool, ...pools] : pools;
  }

  #poolFor(runtime: ToolRuntime): WarmPool {
    const identity = poolIdentityOf(runtime);
    let pool = this.#pools.get(identity.key);
    if (!pool) {
      pool = new WarmPool(identity, this.#sizeFor(identity), this.#context);
      this.#pools.set(identity.key, pool);
    }
    pool.setStrict(runtime.strict);
    const used = pool;
    queueMicrotask(() => used.refill());
    return pool;
  }

  /** A tool's own size, else its server's, else the defaults. */
  #sizeFor(identity: { server: string; tool?: string }): PoolSize {
    return (
      this.#unitSizes.get(poolUnitOf(identity.server, identity.tool)) ??
      this.#unitSizes.get(identity.server) ?? {
        minWarm: this.#defaults.minWarm,
        maxSize: this.#defaults.maxSize,
      }
    );
  }

  /** The unit whose size a pool follows now: its own, or its server's when it has none. */
  #sizeUnitOf(pool: WarmPool): string {
    const own = poolUnitOf(pool.server!, pool.tool);
    return this.#unitSizes.has(own) ? own : pool.server!;
  }

  #record(pool: WarmPool, event: 'start' | 'eviction' | 'miss'): void {
    if (event === 'miss') {
      if (!pool.generic) this.#generic?.noteMiss();
      return;
    }
    this.#budget.record(pool.server, event);
    if (event === 'start') this.#events.containerStarted?.(pool.server);
    else this.#events.containerEvicted?.(pool.server);
  }

  #onSlotFreed(): void {
    // Deferred: the pool that freed the slot is mid-update. The servers holding
    // the least of their fair share are served first.
    queueMicrotask(() => {
      const waiting = [...this.#pools.values()].filter((pool) => pool.queued > 0);
      for (const pool of this.#budget.mostDeprivedFirst(waiting)) pool.grow();
      this.#generic?.pool.refill();
    });
  }

  #reportStart(error?: McphostError, readyMs?: number): void {
    if (!error) {
      this.#healthy = true;
      this.#failures = 0;
      if (readyMs !== undefined) {
        this.#startEstimateMs += START_EWMA_WEIGHT * (readyMs - this.#startEstimateMs);
      }
      return;
    }
    this.#healthy = false;
    this.#scheduleRecovery();
  }

  /** Pings the driver with growing delays; once it answers, the pools in use refill. */
  #scheduleRecovery(): void {
    if (this.#recoveryTimer || this.#closed) return;
    const delay = Math.min(this.#retryMaxMs, this.#retryInitialMs * 2 ** this.#failures);
    this.#failures += 1;
    this.#recoveryTimer = setTimeout(() => {
      this.#recoveryTimer = undefined;
      this.#driver.ping().then(
        () => {
          if (this.#closed) return;
          this.#healthy = true;
          for (const pool of this.#allPools()) pool.refill();
        },
        () => this.#scheduleRecovery(),
      );
    }, delay);
    this.#recoveryTimer.unref();
  }

  #sweep(): void {
    const now = this.#now();
    this.#generic?.resize();
    this.#generic?.pool.sweep(now);
    for (const [key, pool] of this.#pools) {
      pool.sweep(now);
      // An empty pool unused for the TTL is forgotten; its unit's size is kept.
      if (
        pool.total === 0 &&
        pool.queued === 0 &&
        now - pool.lastLeasedAt >= this.#defaults.idleTtlMs
      ) {
        this.#pools.delete(key);
      }
    }
  }
}

function failed(
  error: McphostError,
  logs: LogEntry[],
  durationMs: number,
  queueMs: number,
): InvocationOutcome {
  return {
    ok: false,
    error: { code: error.code, message: error.message },
    logs,
    durationMs,
    queueMs,
  };
}

function asMcphostError(error: unknown): McphostError {
  if (isMcphostError(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new McphostError('ERR_INTERNAL', `internal error in the sandbox manager: ${message}`, {
    cause: error,
  });
}
