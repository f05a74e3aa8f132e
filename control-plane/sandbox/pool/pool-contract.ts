/**
 * What a warm pool and the manager that owns it agree on: the services the
 * manager lends every pool (`PoolContext`), what a pool is created with, and
 * what it reports.
 */
import type { McphostError } from '../../errors.js';
import type { SandboxDriver } from '../driver.js';
import type { PoolIdentity } from './pool-key.js';
import type { PooledInstance, RetireReason } from './pooled-instance.js';
import type { ResolvedPoolDefaults } from './pool-settings.js';
import type { StartPurpose, StartQueue } from './start-queue.js';
import type { WarmPool } from './warm-pool.js';

/** What a pool needs from the manager that owns it. */
export interface PoolContext {
  driver: SandboxDriver;
  defaults: ResolvedPoolDefaults;
  /** Shared, bounded queue of container starts. */
  starts: StartQueue;
  now(): number;
  /** True when one more container may be created (budget, fair share; a demand may evict elsewhere). */
  reserveSlot(pool: WarmPool, purpose: StartPurpose): boolean;
  /** An idle generic container this pool may adopt for good, if the manager allows it. */
  borrowGeneric(pool: WarmPool): PooledInstance | undefined;
  /**
   * Asks for a generic container already starting to be promised to this pool.
   * The generic pool keeps the promise: it hands the container over through
   * `adoptGeneric`, or, when it dies first, calls `grow`.
   */
  promiseGeneric(pool: WarmPool): void;
  /** Generic containers starting that are promised to this pool: it starts none of its own for the callers they serve. */
  genericPromisedTo(pool: WarmPool): number;
  /** A container of this pool became ready (the generic pool hands it to a promised pool). */
  containerReady(pool: WarmPool): void;
  /** A container of this pool left before serving (the manager rebalances generic promises). */
  containerLost(pool: WarmPool): void;
  /** Whether the driver is believed to work; when not, leases fail fast. */
  driverHealthy(): boolean;
  /** Outcome of each container start and, on success, how long it took to be ready. */
  reportStart(error?: McphostError, readyMs?: number): void;
  /** Typical time from start to ready, in ms: what waiting for a new container costs. */
  startEstimateMs(): number;
  /**
   * True when this pool, about to re-lease a released container to its own
   * queue, should give it up instead: the budget is full, its server holds more
   * than its fair share, and a server within its share has callers waiting.
   */
  shouldYield(pool: WarmPool): boolean;
  /** A container left this pool: pools blocked on the budget may start one now. */
  onSlotFreed(): void;
  /** Events for the operator's figures and the generic pool's sizing. */
  record(pool: WarmPool, event: 'start' | 'eviction' | 'miss', waitMs?: number): void;
  /** How long a lease waited for a container, in ms. */
  recordLeaseWait(pool: WarmPool, waitMs: number): void;
}

/** What `stats()` reports for one pool. */
export interface PoolStats {
  poolKey: string;
  /** Server (tenant) the containers belong to; absent for the generic pool. */
  server?: string;
  /** Set when the pool serves one tool only (`isolation: "tool"` or a strict tool). */
  tool?: string;
  /** Container shape, e.g. `128m-0.5c-64p-runc`. */
  shape: string;
  /** True for the small pool of unbound containers that pools adopt. */
  generic: boolean;
  /** Idle, ready containers. */
  warm: number;
  /** Leased containers running an invocation. */
  busy: number;
  /** Containers starting (or waiting for a start slot). */
  warming: number;
  /** warm + busy + warming. */
  total: number;
  /** Callers waiting for a container. */
  queued: number;
  minWarm: number;
  maxSize: number;
  strict: boolean;
  /** Containers started for this pool since it was created. */
  started: number;
  /** Containers taken over from the generic pool (they keep the Docker label `mcphost.pool=*generic*`). */
  adopted: number;
  /** Containers retired, by reason. */
  retired: Partial<Record<RetireReason, number>>;
  /** Started containers by Docker engine (DOCKER_ENGINES only). */
  engines?: Record<string, number>;
  /** Last start or runner failure, for operators. */
  lastError?: string;
}

/** The identity a pool is created with: a server's (see `poolIdentityOf`), or the generic pool's, which has no server. */
export type PoolIdentityInput = Omit<PoolIdentity, 'server'> & { server?: string };
