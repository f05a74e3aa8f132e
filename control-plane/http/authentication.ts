/**
 * The outcome of checking a request's credentials (a bearer token, an API
 * key, or none) for one hosted server: who is calling, or the response that
 * refuses the request (status, headers such as the RFC 6750 bearer
 * challenge, body).
 */
import type { McphostError } from '../errors.js';
import type { Caller } from '../identity/index.js';
import { httpStatusFor, jsonRpcErrorBody } from './error-response.js';

export type Authentication =
  | {
      ok: true;
      caller: Caller;
      /** When the credential stops admitting (an API key's expiresAt, a token's exp); absent: never. */
      expiresAt?: Date;
    }
  | {
      ok: false;
      status: number;
      headers: Record<string, string>;
      body: unknown;
      /** What metrics count the refusal under: an RFC 6750 error, missing_token or temporarily_unavailable. */
      reason: string;
    };

/**
 * The refusal when credentials cannot be checked now (the Authorization
 * Server's keys, or the store, cannot be had): status and code from the
 * registry, and a `Retry-After` — never a 401, which would make a client drop
 * credentials that may be fine.
 */
export function temporarilyUnavailable(
  retryAfterSeconds: number,
  error: McphostError,
): Authentication {
  return {
    ok: false,
    status: httpStatusFor(error.code),
    headers: { 'retry-after': String(retryAfterSeconds) },
    body: jsonRpcErrorBody(error),
    reason: 'temporarily_unavailable',
  };
}
