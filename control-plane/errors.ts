/**
 * The control plane's error base. Every failure that can reach an operator or an
 * MCP client is a `McphostError` with a stable `code`; `http/error-response.ts`
 * maps codes to HTTP statuses and JSON-RPC errors in one place. Tests assert on
 * the code and on the message a user sees.
 */
import type { ErrorCode } from '../src/protocol/index.js';

/** Codes that exist only on the control-plane side (never on the stdio wire). */
export type ControlPlaneErrorCode =
  | 'ERR_NO_CAPACITY'
  | 'ERR_SANDBOX_UNAVAILABLE'
  | 'ERR_IMAGE_BUILD'
  | 'ERR_VALIDATION'
  | 'ERR_PAYLOAD_TOO_LARGE'
  | 'ERR_NOT_FOUND'
  | 'ERR_CONFLICT'
  | 'ERR_UNAUTHORIZED'
  | 'ERR_FORBIDDEN'
  | 'ERR_SERVER_INACTIVE'
  | 'ERR_OAUTH_METADATA'
  | 'ERR_INVALID_TOKEN'
  | 'ERR_INSUFFICIENT_SCOPE'
  | 'ERR_STORE'
  | 'ERR_CONFIG'
  | 'ERR_RUNTIME_UNAVAILABLE'
  | 'ERR_SHUTTING_DOWN'
  | 'ERR_RATE_LIMITED'
  | 'ERR_SESSION_QUOTA';

export type McphostErrorCode = ErrorCode | ControlPlaneErrorCode;

export class McphostError extends Error {
  readonly code: McphostErrorCode;
  /** Structured detail safe to show the caller (never a secret). */
  readonly details?: unknown;

  constructor(
    code: McphostErrorCode,
    message: string,
    options?: { details?: unknown; cause?: unknown },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'McphostError';
    this.code = code;
    this.details = options?.details;
  }
}

/** True when `error` is a McphostError, optionally with the given code. */
export function isMcphostError(error: unknown, code?: McphostErrorCode): error is McphostError {
  return error instanceof McphostError && (code === undefined || error.code === code);
}
