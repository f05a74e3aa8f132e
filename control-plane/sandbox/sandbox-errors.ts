/**
 * The sandbox's own failures, built in one place so every part words them
 * alike: a cancelled invocation, no capacity, an engine that does not answer,
 * and a manager shutting down.
 */
import { McphostError, isMcphostError } from '../errors.js';

/** The invocation was cancelled (by its caller, queued or running). */
export function cancelled(): McphostError {
  return new McphostError('ERR_CANCELLED', 'the invocation was cancelled');
}

/** A pool could not give a container in time, or its queue is full. */
export function noCapacity(unit: string, busy: number, maxSize: number, why: string): McphostError {
  return new McphostError(
    'ERR_NO_CAPACITY',
    `no capacity: pool ${unit} has ${busy} of ${maxSize} containers busy and ${why}`,
  );
}

/** The manager is closing: nothing new starts. */
export function shuttingDown(): McphostError {
  return new McphostError('ERR_SHUTTING_DOWN', 'the sandbox manager is shutting down');
}

/** Any failure to reach or use the engine, as ERR_SANDBOX_UNAVAILABLE (kept as is when it already is one). */
export function asUnavailable(error: unknown): McphostError {
  if (isMcphostError(error, 'ERR_SANDBOX_UNAVAILABLE')) return error;
  const message = error instanceof Error ? error.message : String(error);
  const text = message.startsWith('sandbox unavailable')
    ? message
    : `sandbox unavailable: ${message}`;
  return new McphostError('ERR_SANDBOX_UNAVAILABLE', text, { cause: error });
}
