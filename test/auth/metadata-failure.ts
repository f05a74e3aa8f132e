/** What the Authorization Server metadata tests share. */
import { expect } from 'vitest';
import { McphostError } from '../../control-plane/errors.js';

/** Awaits `promise`, expecting an ERR_OAUTH_METADATA McphostError; returns it. */
export async function metadataFailure(promise: Promise<unknown>): Promise<McphostError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(McphostError);
  expect((error as McphostError).code).toBe('ERR_OAUTH_METADATA');
  return error as McphostError;
}
