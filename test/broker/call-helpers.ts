/** What every broker test needs to call `broker.handle` and look at its failures. */
import { randomUUID } from 'node:crypto';
import type { BrokerCallContext } from '../../control-plane/broker/broker.js';

/** A call context of server `server` (default `tenant-a`), a fresh invocation, and a signal aborted only by `signal`. */
export const context = (overrides: Partial<BrokerCallContext> = {}): BrokerCallContext => ({
  signal: new AbortController().signal,
  server: 'tenant-a',
  invocation: randomUUID(),
  egressAllow: [],
  ...overrides,
});

/** The error a call fails with; fails the test when the call succeeds. */
export async function failure(
  promise: Promise<unknown>,
): Promise<{ code: string; message: string; details?: unknown }> {
  try {
    await promise;
  } catch (error) {
    return error as { code: string; message: string; details?: unknown };
  }
  throw new Error('expected the call to fail');
}
