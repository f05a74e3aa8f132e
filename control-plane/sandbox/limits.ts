/**
 * Per-invocation limits: what one tool call may use. A tool's own limits win
 * over its server's, which win over the service defaults; merged with `??` so
 * that 0 stays a value and never silently becomes the default. The service
 * defaults are the TOOL_* settings of the configuration table, handed in by
 * whoever builds the sandbox: none is written here.
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

/** Merges tool, then server, then default limits with `??` (0 is a value, not "unset"). */
export function resolveLimits(
  tool: Partial<InvocationLimits> | undefined,
  server: Partial<InvocationLimits> | undefined,
  defaults: InvocationLimits,
): InvocationLimits {
  return {
    timeoutMs: tool?.timeoutMs ?? server?.timeoutMs ?? defaults.timeoutMs,
    memoryMb: tool?.memoryMb ?? server?.memoryMb ?? defaults.memoryMb,
    cpus: tool?.cpus ?? server?.cpus ?? defaults.cpus,
    pids: tool?.pids ?? server?.pids ?? defaults.pids,
    maxResultBytes: tool?.maxResultBytes ?? server?.maxResultBytes ?? defaults.maxResultBytes,
    maxLogBytes: tool?.maxLogBytes ?? server?.maxLogBytes ?? defaults.maxLogBytes,
    maxLogEntries: tool?.maxLogEntries ?? server?.maxLogEntries ?? defaults.maxLogEntries,
  };
}

/** True when two limit sets need the same kind of container (memory, cpus, pids). */
export function sameContainerShape(a: InvocationLimits, b: InvocationLimits): boolean {
  return a.memoryMb === b.memoryMb && a.cpus === b.cpus && a.pids === b.pids;
}
