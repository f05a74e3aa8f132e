/**
 * The errors a runner's end produces, worded once: what a user reads when a
 * tool ran out of time or memory, or its container died under it.
 */
import { McphostError } from '../errors.js';
import type { SandboxExit } from './driver.js';

/** V8's own words when the heap limit is hit before the kernel's. */
const HEAP_EXHAUSTED =
  /heap out of memory|Allocation failed - JavaScript heap|FatalProcessOutOfMemory|Reached heap limit/i;

/** True when stderr shows V8 gave up for lack of heap (the harness's own memory limit). */
export function looksLikeHeapExhaustion(stderrTail: string): boolean {
  return HEAP_EXHAUSTED.test(stderrTail);
}

/** ERR_TOOL_TIMEOUT naming the limit. */
export function timeoutError(timeoutMs: number): McphostError {
  return new McphostError(
    'ERR_TOOL_TIMEOUT',
    `the tool exceeded its time limit of ${timeoutMs} ms`,
  );
}

/** ERR_TOOL_MEMORY naming the limit. */
export function memoryError(memoryMb: number | undefined): McphostError {
  const limit = memoryMb === undefined ? '' : ` of ${memoryMb} MiB`;
  return new McphostError('ERR_TOOL_MEMORY', `the tool exceeded its memory limit${limit}`);
}

/** What an instance's exit means for whatever it was doing. */
export function faultFromExit(
  exit: SandboxExit,
  memoryMb: number | undefined,
  starting: boolean,
): McphostError {
  if (exit.oomKilled || looksLikeHeapExhaustion(exit.stderrTail)) return memoryError(memoryMb);
  const how = exit.signal ? `signal ${exit.signal}` : `exit code ${exit.exitCode ?? 'unknown'}`;
  const tail = exit.stderrTail.trim().split('\n').slice(-3).join(' | ').slice(0, 500);
  // Only start-up diagnostics are shown: once tool code ran, stderr may echo its data.
  const detail = starting && tail ? `: ${tail}` : '';
  const when = starting ? 'while starting' : 'while running the tool';
  return new McphostError(
    'ERR_CONTAINER_CRASHED',
    `the container exited ${when} (${how})${detail}`,
    {
      details: { exitCode: exit.exitCode, signal: exit.signal },
    },
  );
}
