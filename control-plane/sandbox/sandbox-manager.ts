/**
 * Owns every warm pool: one per tool (pool key) plus a small generic pool of
 * unbound containers that a tool may adopt for good when its container shape
 * matches. `invoke` leases a container, runs one invocation over its
 * connection, and releases it in `finally` — retiring it on any timeout,
 * crash, OOM, protocol fault or cancellation. Tool failures, no capacity and
 * an unavailable engine are outcomes, never exceptions.
 */
import { McphostError, isMcphostError } from '../errors.js';
import type { SandboxDriver } from './driver.js';
import type {
  InvocationOutcome,
  InvokeHooks,
  LogEntry,
  OutcomeError,
  ToolRuntime,
} from './invocation.js';
import { InvocationLimitsSchema, sameContainerShape } from './limits.js';
import { LogCollector } from './log-collector.js';
import { poolIdentityOf } from './pool/pool-key.js';
import {
  parsePoolDefaults,
  validatePoolSize,
  type PoolCaps,
  type PoolDefaults,
  type PoolSize,
  type ResolvedPoolDefaults,
} from './pool/pool-settings.js';
import type { PooledInstance, RetireReason } from './pool/pooled-instance.js';
import { WarmPool, retireReasonFor, type PoolContext, type PoolStats } from './pool/warm-pool.js';

/** Key of the generic pool in `stats()`. */
export const GENERIC_POOL_KEY = '*generic*';

/** Options of a SandboxManager; validated once, at construction. */
export interface SandboxManagerOptions {
  driver: SandboxDriver;
  defaults: PoolDefaults;
  /** Unbound containers kept warm with `defaults.limits`; size 0 disables the generic pool. */
  generic: { size: number };
  caps: PoolCaps;
  /** Milliseconds clock; default `Date.now`. */
  clock?: { now(): number };
  /** Retry delays after the driver fails, in ms: first and largest; default 250 and 10 000. */
  retry?: { initialMs?: number; maxMs?: number };
}

/** Room past the log budget for the harness's own "lines dropped" notice, in bytes. */
const LOG_NOTICE_SLACK_BYTES = 1024;

/** Runs tool invocations in warm, per-tool pools of sandboxes. */
export class SandboxManager {
  readonly #driver: SandboxDriver;
  readonly #defaults: ResolvedPoolDefaults;
  readonly #caps: PoolCaps;
  readonly #now: () => number;
  readonly #pools = new Map<string, WarmPool>();
  readonly #sizes = new Map<string, PoolSize>();
  readonly #generic: WarmPool | undefined;
  readonly #retryInitialMs: number;
  readonly #retryMaxMs: number;
  readonly #context: PoolContext;
  #healthy = true;
  #failures = 0;
  #recoveryTimer: NodeJS.Timeout | undefined;
  #sweepTimer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: SandboxManagerOptions) {
    if (!options?.driver) throw new TypeError('SandboxManager: driver is required');
    this.#driver = options.driver;
    this.#caps = { ...options.caps };
    this.#defaults = parsePoolDefaults(options.defaults, this.#caps);
    const genericSize = options.generic?.size;
    if (!Number.isInteger(genericSize) || genericSize < 0 || genericSize > this.#caps.maxTotal) {
      throw new TypeError(
        'SandboxManager: generic.size must be an integer between 0 and caps.maxTotal',
      );
    }
    const clock = options.clock;
    this.#now = clock ? () => clock.now() : Date.now;
    this.#retryInitialMs = options.retry?.initialMs ?? 250;
    this.#retryMaxMs = options.retry?.maxMs ?? 10_000;
    if (!(this.#retryInitialMs > 0) || !(this.#retryMaxMs >= this.#retryInitialMs)) {
      throw new TypeError('SandboxManager: retry needs 0 < initialMs <= maxMs');
    }
    this.#context = {
      driver: this.#driver,
      defaults: this.#defaults,
      now: this.#now,
      reserveSlot: (pool) => this.#reserveSlot(pool),
      borrowGeneric: (pool) => this.#borrowGeneric(pool),
      driverHealthy: () => this.#healthy,
      reportStart: (error) => this.#reportStart(error),
      onSlotFreed: () => this.#onSlotFreed(),
    };
    if (genericSize > 0) {
      const { memoryMb, cpus, pids } = this.#defaults.limits;
      const size = { minWarm: genericSize, maxSize: genericSize };
      this.#generic = new WarmPool(
        GENERIC_POOL_KEY,
        true,
        size,
        { memoryMb, cpus, pids },
        this.#context,
      );
    }
  }

  /** Reaps containers a killed control plane left behind, then fills the generic pool. */
  async start(): Promise<void> {
    if (this.#closed) throw new TypeError('SandboxManager.start: manager is closed');
    // The sweep runs whatever happens below: an engine that is down at start comes back.
    const interval = Math.max(50, Math.min(5_000, Math.floor(this.#defaults.idleTtlMs / 2)));
    this.#sweepTimer = setInterval(() => this.#sweep(), interval);
    this.#sweepTimer.unref();
    try {
      await this.#driver.reapLeftovers();
    } catch (error) {
      this.#reportStart(asUnavailable(error));
      return;
    }
    this.#generic?.refill();
  }

  /** Runs one invocation; resolves with its outcome (failures included), never rejects for them. */
  async invoke(runtime: ToolRuntime, hooks: InvokeHooks): Promise<InvocationOutcome> {
    const queuedAt = this.#now();
    const logs = new LogCollector(runtime.limits.maxLogBytes + LOG_NOTICE_SLACK_BYTES, hooks.onLog);
    if (this.#closed) return failed(shuttingDown(), logs.entries, 0, 0);
    if (!runtime?.server || !runtime.tool || typeof runtime.code !== 'string') {
      throw new TypeError('SandboxManager.invoke: runtime needs a server, a tool and code');
    }
    const checked = InvocationLimitsSchema.safeParse(runtime.limits);
    if (!checked.success) {
      const issue = checked.error.issues[0];
      const message = `invalid limits for ${runtime.server}/${runtime.tool}: ${issue?.path.join('.')}: ${issue?.message}`;
      return failed(new McphostError('ERR_VALIDATION', message), logs.entries, 0, 0);
    }
    const pool = this.#poolFor(runtime);
    let instance: PooledInstance;
    try {
      instance = await pool.lease(hooks.signal);
    } catch (error) {
      return failed(asMcphostError(error), logs.entries, 0, this.#now() - queuedAt);
    }
    const startedAt = this.#now();
    const queueMs = startedAt - queuedAt;
    let retireReason: RetireReason | undefined;
    try {
      const connection = instance.connection;
      if (!connection) throw new Error('a leased container has no connection');
      const result = await connection.invoke(
        { code: runtime.code, params: hooks.params, env: runtime.env, limits: runtime.limits },
        {
          onLog: (level, text, at) => logs.add({ level, text, at }),
          onCall: (operation, args, context) => hooks.onCall(operation, args, context),
          signal: hooks.signal,
        },
      );
      const durationMs = this.#now() - startedAt;
      const instanceId = instance.id;
      if (result.ok)
        return {
          ok: true,
          value: result.value,
          logs: logs.entries,
          durationMs,
          queueMs,
          instanceId,
        };
      // A harness-reported timeout or memory failure leaves the container suspect.
      if (result.error.code === 'ERR_TOOL_TIMEOUT' || result.error.code === 'ERR_TOOL_MEMORY') {
        retireReason = retireReasonFor(result.error.code);
      }
      return {
        ok: false,
        error: result.error,
        logs: logs.entries,
        durationMs,
        queueMs,
        instanceId,
      };
    } catch (error) {
      const failure = asMcphostError(error);
      retireReason = retireReasonFor(failure.code);
      pool.noteError(failure.message);
      return {
        ...failed(failure, logs.entries, this.#now() - startedAt, queueMs),
        instanceId: instance.id,
      };
    } finally {
      pool.release(instance, retireReason);
    }
  }

  /** Sets a pool's minWarm/maxSize (ERR_VALIDATION beyond the caps); applies to the pool now or when it is created. */
  configurePool(poolKey: string, settings: PoolSize): PoolSize {
    const size = validatePoolSize(poolKey, settings, this.#caps);
    this.#sizes.set(poolKey, size);
    this.#pools.get(poolKey)?.configure(size);
    return size;
  }

  /** Retires a pool's idle containers now and busy ones when they finish; no refill until the next invocation. */
  drain(poolKey: string): void {
    this.#pools.get(poolKey)?.retireAll('drained', true);
  }

  /** Call when a tool's code, secrets or limits change or it is deleted: none of its containers serves again. */
  retireTool(poolKey: string): void {
    const pool = this.#pools.get(poolKey);
    if (!pool) return;
    pool.retireAll('retired-tool', true);
    // A deleted tool's pool would linger forever; an empty one is rebuilt on the next invocation.
    if (pool.total === 0 && pool.queued === 0) this.#pools.delete(poolKey);
  }

  /** Per-pool figures, the generic pool first. */
  stats(): PoolStats[] {
    const pools = this.#generic
      ? [this.#generic, ...this.#pools.values()]
      : [...this.#pools.values()];
    return pools.map((pool) => pool.stats());
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
    const pools = this.#generic
      ? [this.#generic, ...this.#pools.values()]
      : [...this.#pools.values()];
    await Promise.all(pools.map((pool) => pool.close()));
  }

  #poolFor(runtime: ToolRuntime): WarmPool {
    const { memoryMb, cpus, pids } = runtime.limits;
    const poolKey = poolIdentityOf(runtime).key;
    let pool = this.#pools.get(poolKey);
    if (!pool) {
      const size = this.#sizes.get(poolKey) ?? {
        minWarm: this.#defaults.minWarm,
        maxSize: this.#defaults.maxSize,
      };
      pool = new WarmPool(poolKey, false, size, { memoryMb, cpus, pids }, this.#context);
      this.#pools.set(poolKey, pool);
    }
    pool.update({ memoryMb, cpus, pids }, runtime.strict);
    queueMicrotask(() => pool.refill());
    return pool;
  }

  #borrowGeneric(pool: WarmPool): PooledInstance | undefined {
    if (!this.#generic || pool.generic) return undefined;
    const wanted = { ...this.#defaults.limits, ...pool.shape };
    if (!sameContainerShape(wanted, this.#defaults.limits)) return undefined;
    return this.#generic.donate();
  }

  #totalContainers(): number {
    let total = this.#generic?.total ?? 0;
    for (const pool of this.#pools.values()) total += pool.total;
    return total;
  }

  #reserveSlot(requester: WarmPool): boolean {
    if (this.#closed) return false;
    if (this.#totalContainers() < this.#caps.maxTotal) return true;
    // At the global cap: the longest-idle container elsewhere makes room.
    let victim: WarmPool | undefined;
    let oldest = Infinity;
    for (const pool of [this.#generic, ...this.#pools.values()]) {
      if (!pool || pool === requester) continue;
      const since = pool.oldestIdleSince();
      if (since !== undefined && since < oldest) [victim, oldest] = [pool, since];
    }
    return victim?.evictOne() ?? false;
  }

  #onSlotFreed(): void {
    // Deferred: the pool that freed the slot is mid-update.
    queueMicrotask(() => {
      for (const pool of this.#pools.values()) if (pool.queued > 0) pool.grow();
    });
  }

  #reportStart(error?: McphostError): void {
    if (!error) {
      this.#healthy = true;
      this.#failures = 0;
      return;
    }
    this.#healthy = false;
    this.#scheduleRecovery();
  }

  /** Pings the driver with growing delays; once it answers, every pool refills. */
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
          this.#generic?.refill();
          for (const pool of this.#pools.values()) pool.refill();
        },
        () => this.#scheduleRecovery(),
      );
    }, delay);
    this.#recoveryTimer.unref();
  }

  #sweep(): void {
    const now = this.#now();
    this.#generic?.sweep(now);
    for (const pool of this.#pools.values()) pool.sweep(now);
  }
}

function failed(
  error: McphostError | OutcomeError,
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

function asUnavailable(error: unknown): McphostError {
  if (isMcphostError(error, 'ERR_SANDBOX_UNAVAILABLE')) return error;
  const message = error instanceof Error ? error.message : String(error);
  const text = message.startsWith('sandbox unavailable')
    ? message
    : `sandbox unavailable: ${message}`;
  return new McphostError('ERR_SANDBOX_UNAVAILABLE', text, {
    cause: error,
  });
}

function shuttingDown(): McphostError {
  return new McphostError('ERR_SHUTTING_DOWN', 'the sandbox manager is shutting down');
}
