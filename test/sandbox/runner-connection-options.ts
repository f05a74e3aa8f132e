/**
 * RunnerConnection options as production builds them (`pool/warm-pool.ts`,
 * from the pool defaults): the configuration table's values, nothing written
 * here but the clock.
 */
import type { RunnerConnectionOptions } from '../../control-plane/sandbox/runner-connection.js';
import { DEFAULT_POOL_DEFAULTS } from '../support/config-defaults.js';

/** The configured options, with `overrides` on top. */
export function runnerConnectionOptions(
  overrides: Partial<RunnerConnectionOptions> = {},
): RunnerConnectionOptions {
  const { maxLineBytes, startupTimeoutMs, timeoutGraceMs, maxConcurrentCalls } =
    DEFAULT_POOL_DEFAULTS;
  return {
    maxLineBytes,
    startupTimeoutMs,
    timeoutGraceMs,
    maxConcurrentCalls,
    now: Date.now,
    ...overrides,
  };
}
