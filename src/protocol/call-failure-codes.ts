/**
 * The codes a failed `reply` hands tool code that the invocation's result
 * keeps when the tool does not catch the rejection: an uncaught refusal of
 * sdk.http, sdk.db, fetch or a request to the client fails the call with the
 * broker's code (docs/tool-code.md, "Errors"), not ERR_TOOL_ERROR.
 *
 * Only codes that say what the outside world answered a call: none marks an
 * infrastructure failure or retires a container (ERR_INTERNAL, which hides
 * the control plane's own failures, and ERR_CANCELLED, whose result means
 * "the caller cancelled", are not carried). Both sides accept one only for an
 * invocation that was really sent a failed reply with it, so tool code cannot
 * claim one by setting `code` on an error of its own.
 */
import type { ErrorCode } from './error-codes.js';

export const CALL_FAILURE_CODES = [
  'ERR_INVALID_ARGUMENT',
  'ERR_EGRESS_DENIED',
  'ERR_HTTP_FAILED',
  'ERR_HTTP_TIMEOUT',
  'ERR_HTTP_TOO_LARGE',
  'ERR_HTTP_TOO_MANY_REDIRECTS',
  'ERR_TOO_MANY_CALLS',
  'ERR_REPLY_TOO_LARGE',
  'ERR_DB_FAILED',
  'ERR_DB_IDENTIFIER',
  'ERR_CLIENT_UNSUPPORTED',
  'ERR_CLIENT_FAILED',
] as const satisfies readonly ErrorCode[];

export type CallFailureCode = (typeof CALL_FAILURE_CODES)[number];

const CARRIED: ReadonlySet<string> = new Set(CALL_FAILURE_CODES);

/** True for a code an uncaught rejection of an sdk call carries into the result. */
export function isCallFailureCode(code: string): code is CallFailureCode {
  return CARRIED.has(code);
}
