/**
 * The registry code under which a request the hosted side refuses before the
 * MCP endpoint (or a session the endpoint refuses) is counted beside the
 * invocation log, by the reason its metrics give it: the code the caller
 * was answered with.
 */
import type { McphostErrorCode } from '../errors.js';

const CODE_OF_REASON: Readonly<Record<string, McphostErrorCode>> = {
  origin: 'ERR_FORBIDDEN',
  rate: 'ERR_RATE_LIMITED',
  // Failed authentications of the caller's network, refused before the credential is read.
  throttled: 'ERR_RATE_LIMITED',
  insufficient_scope: 'ERR_INSUFFICIENT_SCOPE',
  invalid_request: 'ERR_BAD_REQUEST',
  session_quota: 'ERR_SESSION_QUOTA',
  session_capacity: 'ERR_NO_CAPACITY',
};

/**
 * The code a refusal of `reason` is counted under: the table's, else (every
 * other reason is an authentication's: missing_token, invalid_token, for a
 * bearer token or an API key) ERR_UNAUTHORIZED. Undefined for `temporarily_unavailable`:
 * credentials that could not be checked are the service's failure, not a
 * refusal of the call.
 */
export function refusalCodeOf(reason: string): McphostErrorCode | undefined {
  if (reason === 'temporarily_unavailable') return undefined;
  return CODE_OF_REASON[reason] ?? 'ERR_UNAUTHORIZED';
}
