/** What every broker test needs to call `broker.handle` and look at its failures. */

/** A call context whose signal is never aborted. */
export const context = (): { signal: AbortSignal } => ({ signal: new AbortController().signal });

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
