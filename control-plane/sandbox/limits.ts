/**
 * Per-invocation limits: what one tool call may use. Limits are ceilings set
 * from above: the host's (TOOL_MAX_MEMORY_MB, TOOL_MAX_TIMEOUT_MS) bound a
 * server's, which an admin sets; a server's bound its tools', prompts' and
 * resources', which an operator sets and which may only lower them. Unset
 * values fall back tool → server → service default, merged with `??` so that
 * 0 stays a value and never silently becomes the default. The service
 * defaults and the host's ceilings are settings of the configuration table,
 * handed in by whoever builds the sandbox: none is written here.
 *
 * A value saved above a ceiling is refused at save (the admin API asks
 * `ceilingProblems`); a value saved before a ceiling was lowered (an admin
 * lowering a server's limits, an operator lowering TOOL_MAX_*) stays stored
 * as written and is clamped wherever limits are resolved, so what runs is
 * never above any ceiling in force now.
 */
import { z } from 'zod';

/** Everything one invocation may use. Units are in the names. */
export interface InvocationLimits {
  /** Wall-clock time of one invocation, in ms. */
  timeoutMs: number;
  /** Container memory, in MiB (the V8 heap is sized below it). */
  memoryMb: number;
  /** CPU share, in cores. */
  cpus: number;
  /** Largest number of processes/threads in the container. */
  pids: number;
  /** Largest serialised result, in bytes. */
  maxResultBytes: number;
  /** Largest total of log text per invocation, in bytes (each line costs at least LOG_ENTRY_MIN_BYTES). */
  maxLogBytes: number;
  /** Largest number of console lines per invocation. */
  maxLogEntries: number;
}

/** The limits a server or a tool may set of its own (see `toolLimitsSchema` in the store). */
export type OwnLimits = Partial<Pick<InvocationLimits, 'timeoutMs' | 'memoryMb'>>;

/** The fields of `OwnLimits`, in the order messages name them. */
export const OWN_LIMIT_FIELDS = ['memoryMb', 'timeoutMs'] as const;

/** The host's ceilings: the most any server or tool may set (TOOL_MAX_MEMORY_MB, TOOL_MAX_TIMEOUT_MS). */
export interface LimitCeilings {
  /** Largest container memory, in MiB. */
  memoryMb: number;
  /** Longest invocation, in ms. */
  timeoutMs: number;
}

/** Schema of a complete set of limits (used where limits enter from configuration). */
export const InvocationLimitsSchema = z.object({
  timeoutMs: z.number().int().positive(),
  memoryMb: z.number().int().min(16),
  cpus: z.number().positive(),
  pids: z.number().int().positive(),
  maxResultBytes: z.number().int().positive(),
  maxLogBytes: z.number().int().positive(),
  maxLogEntries: z.number().int().positive(),
});

/** Schema of the host's ceilings. */
export const LimitCeilingsSchema = z.strictObject({
  memoryMb: z.number().int().min(16),
  timeoutMs: z.number().int().positive(),
});

/**
 * Merges tool, then server, then default limits with `??` (0 is a value, not
 * "unset"); a server's own value is also the ceiling of its tool's: a tool
 * may only lower it.
 */
export function resolveLimits(
  tool: Partial<InvocationLimits> | undefined,
  server: Partial<InvocationLimits> | undefined,
  defaults: InvocationLimits,
): InvocationLimits {
  const pick = <K extends keyof InvocationLimits>(key: K): number => {
    const chosen = tool?.[key] ?? server?.[key] ?? defaults[key];
    const ceiling = server?.[key];
    return ceiling === undefined ? chosen : Math.min(chosen, ceiling);
  };
  return {
    timeoutMs: pick('timeoutMs'),
    memoryMb: pick('memoryMb'),
    cpus: pick('cpus'),
    pids: pick('pids'),
    maxResultBytes: pick('maxResultBytes'),
    maxLogBytes: pick('maxLogBytes'),
    maxLogEntries: pick('maxLogEntries'),
  };
}

/** `limits` with each ceilinged value at most the host's ceiling. */
export function withinCeilings(
  limits: InvocationLimits,
  ceilings: LimitCeilings,
): InvocationLimits {
  if (limits.memoryMb <= ceilings.memoryMb && limits.timeoutMs <= ceilings.timeoutMs) return limits;
  return {
    ...limits,
    memoryMb: Math.min(limits.memoryMb, ceilings.memoryMb),
    timeoutMs: Math.min(limits.timeoutMs, ceilings.timeoutMs),
  };
}

/** What an invocation of a tool with `tool` limits on a server with `server` limits runs with now. */
export function effectiveLimits(
  tool: OwnLimits | undefined,
  server: OwnLimits | undefined,
  defaults: InvocationLimits,
  ceilings: LimitCeilings,
): InvocationLimits {
  return withinCeilings(resolveLimits(tool, server, defaults), ceilings);
}

/** One value above the ceiling that bounds it. */
export interface CeilingProblem {
  field: (typeof OWN_LIMIT_FIELDS)[number];
  requested: number;
  ceiling: number;
  /** Who set the ceiling: the host's configuration, or the server's limits (an admin). */
  setBy: 'host' | 'server';
}

/**
 * The values of `requested` above a ceiling: the host's, and for a tool,
 * prompt or resource also its server's (`server`; omitted for a server's own
 * limits). The lowest ceiling is the one named. Empty: it may be saved.
 */
export function ceilingProblems(
  requested: OwnLimits,
  ceilings: LimitCeilings,
  server?: OwnLimits,
): CeilingProblem[] {
  const problems: CeilingProblem[] = [];
  for (const field of OWN_LIMIT_FIELDS) {
    const value = requested[field];
    if (value === undefined) continue;
    const fromServer = server?.[field];
    const [ceiling, setBy] =
      fromServer !== undefined && fromServer < ceilings[field]
        ? [fromServer, 'server' as const]
        : [ceilings[field], 'host' as const];
    if (value > ceiling) problems.push({ field, requested: value, ceiling, setBy });
  }
  return problems;
}

/** True when two limit sets need the same kind of container (memory, cpus, pids). */
export function sameContainerShape(a: InvocationLimits, b: InvocationLimits): boolean {
  return a.memoryMb === b.memoryMb && a.cpus === b.cpus && a.pids === b.pids;
}
