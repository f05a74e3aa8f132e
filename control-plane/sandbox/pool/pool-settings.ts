/**
 * Settings of warm pools: the service-wide defaults (validated once, when the
 * manager is built) and the per-pool size an admin may change at run time
 * (validated against the global caps on every change). Every value is given
 * by the caller — the configuration table (`control-plane/config.ts`) holds
 * the defaults; nothing here falls back on a number of its own.
 */
import { z } from 'zod';
import { McphostError } from '../../errors.js';
import {
  InvocationLimitsSchema,
  LimitCeilingsSchema,
  type InvocationLimits,
  type LimitCeilings,
} from '../limits.js';

/** What every pool starts from; all required (the configuration table holds the defaults). */
export interface PoolDefaults {
  /** Containers a pool keeps (idle or busy) once it has been called; POOL_MIN_WARM. */
  minWarm: number;
  /** Containers (idle + busy + warming) per pool; POOL_MAX_SIZE. */
  maxSize: number;
  /** Invocations one container serves before it is retired (a safety net); POOL_MAX_INVOCATIONS_PER_CONTAINER. */
  maxInvocationsPerContainer: number;
  /** Share of the V8 heap limit that, still in use after 3 invocations in a row, retires a container; POOL_HEAP_RETIRE_SHARE. */
  heapRetireShare: number;
  /** A container above minWarm idle this long is retired, in ms; POOL_IDLE_TTL_MS. */
  idleTtlMs: number;
  /** Callers that may wait for a busy pool, beyond those a starting container will serve; POOL_MAX_QUEUE. */
  maxQueue: number;
  /** How long a caller waits for a container before ERR_NO_CAPACITY, in ms; POOL_QUEUE_TIMEOUT_MS. */
  queueTimeoutMs: number;
  /** How long a new container may take to say `ready`, in ms; RUNNER_STARTUP_TIMEOUT_MS. */
  startupTimeoutMs: number;
  /** Time past an invocation's limit before its container is killed, in ms; TOOL_TIMEOUT_GRACE_MS. */
  timeoutGraceMs: number;
  /** Largest protocol line accepted from a runner, in bytes (the protocol's own line limit). */
  maxLineBytes: number;
  /** sdk calls one invocation may have in flight (each holds a socket or session); TOOL_MAX_CONCURRENT_CALLS. */
  maxConcurrentCalls: number;
  /** Limits of the generic pool's containers; tools with the same memory/cpus/pids may adopt them. */
  limits: InvocationLimits;
}

const PoolDefaultsSchema = z.object({
  minWarm: z.number().int().min(0),
  maxSize: z.number().int().min(1),
  maxInvocationsPerContainer: z.number().int().min(1),
  heapRetireShare: z.number().positive().max(1),
  idleTtlMs: z.number().int().positive(),
  maxQueue: z.number().int().min(0),
  queueTimeoutMs: z.number().int().min(0),
  startupTimeoutMs: z.number().int().positive(),
  timeoutGraceMs: z.number().int().min(0),
  maxLineBytes: z.number().int().positive(),
  maxConcurrentCalls: z.number().int().min(1),
  limits: InvocationLimitsSchema,
});

/** Defaults once validated. */
export type ResolvedPoolDefaults = Readonly<PoolDefaults>;

/** Global caps an admin cannot exceed. */
export interface PoolCaps {
  /** Largest maxSize of any one pool; POOL_MAX_SIZE_CAP. */
  maxSizePerPool: number;
  /** Largest number of containers across all pools; POOL_MAX_TOTAL or derived. */
  maxTotal: number;
  /** Largest sum of the containers' memory limits across all pools, in MiB; POOL_MAX_MEMORY_MB or derived. */
  maxMemoryMb: number;
  /** Largest share of the budget (containers and memory) one server may hold unless an admin sets its maximum; POOL_SERVER_SHARE. */
  serverShare: number;
  /** The most any invocation may use, whatever its server or tool saved; TOOL_MAX_MEMORY_MB, TOOL_MAX_TIMEOUT_MS. */
  limitCeilings: LimitCeilings;
}

/** The part of a pool an admin resizes. */
export interface PoolSize {
  minWarm: number;
  maxSize: number;
}

/**
 * Parses the defaults; misuse of our own API is a TypeError. The default size
 * passes the same rule as a size an admin sets (`validatePoolSize`).
 */
export function parsePoolDefaults(defaults: PoolDefaults, caps: PoolCaps): ResolvedPoolDefaults {
  const parsed = PoolDefaultsSchema.safeParse(defaults);
  if (!parsed.success)
    throw new TypeError(`SandboxManager: invalid defaults: ${parsed.error.message}`);
  if (!Number.isInteger(caps.maxSizePerPool) || caps.maxSizePerPool < 1) {
    throw new TypeError('SandboxManager: caps.maxSizePerPool must be an integer >= 1');
  }
  if (!Number.isInteger(caps.maxTotal) || caps.maxTotal < 1) {
    throw new TypeError('SandboxManager: caps.maxTotal must be an integer >= 1');
  }
  if (!Number.isInteger(caps.maxMemoryMb) || caps.maxMemoryMb < 1) {
    throw new TypeError('SandboxManager: caps.maxMemoryMb must be an integer >= 1');
  }
  const ceilings = LimitCeilingsSchema.safeParse(caps.limitCeilings);
  if (!ceilings.success) {
    throw new TypeError(`SandboxManager: invalid caps.limitCeilings: ${ceilings.error.message}`);
  }
  // One container of the largest size must fit the budget, and the defaults their ceilings.
  if (ceilings.data.memoryMb > caps.maxMemoryMb) {
    throw new TypeError('SandboxManager: caps.limitCeilings.memoryMb is above caps.maxMemoryMb');
  }
  const { memoryMb, timeoutMs } = parsed.data.limits;
  if (memoryMb > ceilings.data.memoryMb || timeoutMs > ceilings.data.timeoutMs) {
    throw new TypeError('SandboxManager: defaults.limits are above caps.limitCeilings');
  }
  const problem = poolSizeProblem(parsed.data, caps);
  if (problem !== undefined) throw new TypeError(`SandboxManager: defaults: ${problem}`);
  return Object.freeze(parsed.data);
}

/**
 * Checks a size against the rules and the caps, completely, so a caller can
 * refuse it before saving anything; a bad size is ERR_VALIDATION naming `unit`.
 */
export function validatePoolSize(unit: string, size: PoolSize, caps: PoolCaps): PoolSize {
  const problem = poolSizeProblem(size, caps);
  if (problem !== undefined) throw new McphostError('ERR_VALIDATION', `pool ${unit}: ${problem}`);
  return { minWarm: size.minWarm, maxSize: size.maxSize };
}

/** What is wrong with a size, or undefined: the one rule for defaults and admins' sizes alike. */
function poolSizeProblem({ minWarm, maxSize }: PoolSize, caps: PoolCaps): string | undefined {
  if (!Number.isInteger(minWarm) || minWarm < 0)
    return `minWarm must be an integer of 0 or more, got ${minWarm}`;
  if (!Number.isInteger(maxSize) || maxSize < 1)
    return `maxSize must be an integer of 1 or more, got ${maxSize}`;
  if (maxSize > caps.maxSizePerPool)
    return `maxSize ${maxSize} is over the cap of ${caps.maxSizePerPool} containers per pool`;
  if (minWarm > maxSize) return `minWarm ${minWarm} is over maxSize ${maxSize}`;
  // POOL_MAX_SIZE_CAP may be set above POOL_MAX_TOTAL: a pool can never keep more than the budget.
  if (minWarm > caps.maxTotal)
    return `minWarm ${minWarm} is over the limit of ${caps.maxTotal} containers in all`;
  return undefined;
}
