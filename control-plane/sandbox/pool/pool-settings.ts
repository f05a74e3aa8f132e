/**
 * Settings of warm pools: the service-wide defaults (validated once, when the
 * manager is built) and the per-pool size an admin may change at run time
 * (validated against the global caps on every change).
 */
import { z } from 'zod';
import { McphostError } from '../../errors.js';
import { InvocationLimitsSchema, type InvocationLimits } from '../limits.js';

/** Defaults every pool starts from. */
export interface PoolDefaults {
  /** Idle containers kept ready per tool pool; default 1. */
  minWarm?: number;
  /** Containers (idle + busy + warming) per tool pool; default 4. */
  maxSize?: number;
  /** Invocations one container serves before it is retired (a safety net); default 100 000. */
  maxInvocationsPerContainer?: number;
  /** Share of the V8 heap limit that, still in use after 3 invocations in a row, retires a container; default 0.5. */
  heapRetireShare?: number;
  /** A container above minWarm idle this long is retired, in ms; default 300 000. */
  idleTtlMs?: number;
  /** Callers that may wait for a busy pool, beyond those a starting container will serve; default 100. */
  maxQueue?: number;
  /** How long a caller waits for a container before ERR_NO_CAPACITY, in ms; default 30 000. */
  queueTimeoutMs?: number;
  /** How long a new container may take to say `ready`, in ms; default 15 000. */
  startupTimeoutMs?: number;
  /** Time past an invocation's limit before its container is killed, in ms; default 500. */
  timeoutGraceMs?: number;
  /** Largest protocol line accepted from a runner, in bytes; default 16 MiB. */
  maxLineBytes?: number;
  /** sdk calls one invocation may have in flight (each holds a socket or session); default 32. */
  maxConcurrentCalls?: number;
  /** Limits of the generic pool's containers; tools with the same memory/cpus/pids may adopt them. */
  limits: InvocationLimits;
}

const PoolDefaultsSchema = z.object({
  minWarm: z.number().int().min(0).default(1),
  maxSize: z.number().int().min(1).default(4),
  maxInvocationsPerContainer: z.number().int().min(1).default(100_000),
  heapRetireShare: z.number().positive().max(1).default(0.5),
  idleTtlMs: z.number().int().positive().default(300_000),
  maxQueue: z.number().int().min(0).default(100),
  queueTimeoutMs: z.number().int().min(0).default(30_000),
  startupTimeoutMs: z.number().int().positive().default(15_000),
  timeoutGraceMs: z.number().int().min(0).default(500),
  maxLineBytes: z
    .number()
    .int()
    .positive()
    .default(16 * 1024 * 1024),
  maxConcurrentCalls: z.number().int().min(1).default(32),
  limits: InvocationLimitsSchema,
});

/** Defaults with every value present. */
export type ResolvedPoolDefaults = z.infer<typeof PoolDefaultsSchema>;

/** Global caps an admin cannot exceed. */
export interface PoolCaps {
  /** Largest maxSize of any one pool. */
  maxSizePerPool: number;
  /** Largest number of containers across all pools. */
  maxTotal: number;
  /** Largest share of `maxTotal` one server may hold unless an admin sets its maximum; default 0.5. */
  serverShare?: number;
}

/** The part of a pool an admin resizes. */
export interface PoolSize {
  minWarm: number;
  maxSize: number;
}

/** Parses the defaults; misuse of our own API is a TypeError. */
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
  const size = parsed.data;
  if (size.minWarm > size.maxSize || size.maxSize > caps.maxSizePerPool) {
    throw new TypeError('SandboxManager: defaults need minWarm <= maxSize <= caps.maxSizePerPool');
  }
  return size;
}

const PoolSizeSchema = z.object({
  minWarm: z.number().int().min(0),
  maxSize: z.number().int().min(1),
});

/** Validates an admin's resize against the caps; bad input is ERR_VALIDATION. */
export function validatePoolSize(key: string, settings: unknown, caps: PoolCaps): PoolSize {
  const parsed = PoolSizeSchema.safeParse(settings);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.join('.') || 'settings';
    throw new McphostError(
      'ERR_VALIDATION',
      `pool ${key}: ${where}: ${issue?.message ?? 'invalid'}`,
    );
  }
  const { minWarm, maxSize } = parsed.data;
  if (maxSize > caps.maxSizePerPool) {
    throw new McphostError(
      'ERR_VALIDATION',
      `pool ${key}: maxSize ${maxSize} is over the cap of ${caps.maxSizePerPool} containers per pool`,
    );
  }
  if (minWarm > maxSize) {
    throw new McphostError(
      'ERR_VALIDATION',
      `pool ${key}: minWarm ${minWarm} is over maxSize ${maxSize}`,
    );
  }
  if (minWarm > caps.maxTotal) {
    throw new McphostError(
      'ERR_VALIDATION',
      `pool ${key}: minWarm ${minWarm} is over the limit of ${caps.maxTotal} containers in all`,
    );
  }
  return { minWarm, maxSize };
}
