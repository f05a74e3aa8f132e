/**
 * The sandbox's own failures, built in one place so every part words them
 * alike: a cancelled invocation, no capacity, an engine or runner that cannot
 * serve, and a part shutting down.
 */
import { McphostError, cancelledError, isMcphostError } from '../errors.js';

/** `what` (default: the invocation, queued or running) was cancelled by its caller. */
export function cancelled(what = 'the invocation'): McphostError {
  return cancelledError(what);
}

/** A pool could not give a container in time, or its queue is full. */
export function noCapacity(unit: string, busy: number, maxSize: number, why: string): McphostError {
  return new McphostError(
    'ERR_NO_CAPACITY',
    `no capacity: pool ${unit} has ${busy} of ${maxSize} containers busy and ${why}`,
  );
}

/** `part` (default: the sandbox manager; a driver, a runner) is closing: nothing new starts there. */
export function shuttingDown(part = 'the sandbox manager'): McphostError {
  return new McphostError('ERR_SHUTTING_DOWN', `${part} is shutting down`);
}

/** ERR_SANDBOX_UNAVAILABLE worded "sandbox unavailable: <why>". */
export function sandboxUnavailable(why: string, cause?: unknown): McphostError {
  return new McphostError(
    'ERR_SANDBOX_UNAVAILABLE',
    `sandbox unavailable: ${why}`,
    cause === undefined ? undefined : { cause },
  );
}

/** Any failure to reach or use the engine, as ERR_SANDBOX_UNAVAILABLE (kept as is when it already is one). */
export function asUnavailable(error: unknown): McphostError {
  if (isMcphostError(error, 'ERR_SANDBOX_UNAVAILABLE')) return error;
  const message = error instanceof Error ? error.message : String(error);
  // A message already saying so (a driver's string, say) is not said twice.
  if (message.startsWith('sandbox unavailable'))
    return new McphostError('ERR_SANDBOX_UNAVAILABLE', message, { cause: error });
  return sandboxUnavailable(message, error);
}
