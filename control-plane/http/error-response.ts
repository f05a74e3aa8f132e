/**
 * The one place where error codes become HTTP statuses. Admin responses carry
 * `{"error": {"code", "message", "details"?}}`; unexpected failures become a
 * 500 with a generic message (the stack goes to the log, never to the caller).
 */
import type { ServerResponse } from 'node:http';
import { isMcphostError, type McphostErrorCode } from '../errors.js';

const STATUS_BY_CODE: Partial<Record<McphostErrorCode, number>> = {
  ERR_VALIDATION: 400,
  ERR_PAYLOAD_TOO_LARGE: 413,
  ERR_TOOL_SYNTAX: 422,
  ERR_INVALID_ARGUMENT: 400,
  ERR_UNAUTHORIZED: 401,
  ERR_INVALID_TOKEN: 401,
  ERR_FORBIDDEN: 403,
  ERR_INSUFFICIENT_SCOPE: 403,
  ERR_NOT_FOUND: 404,
  ERR_CONFLICT: 409,
  ERR_OAUTH_METADATA: 422,
  ERR_RUNTIME_UNAVAILABLE: 422,
  ERR_RATE_LIMITED: 429,
  ERR_SESSION_QUOTA: 429,
  ERR_NO_CAPACITY: 503,
  ERR_SANDBOX_UNAVAILABLE: 503,
  ERR_SERVER_INACTIVE: 503,
  ERR_SHUTTING_DOWN: 503,
  ERR_STORE: 503,
};

/** HTTP status for an error code; 500 for anything unexpected. */
export function httpStatusFor(code: McphostErrorCode): number {
  return STATUS_BY_CODE[code] ?? 500;
}

export interface ErrorBody {
  error: { code: string; message: string; details?: unknown };
}

/** The JSON body and status for any thrown value. */
export function errorBody(error: unknown): { status: number; body: ErrorBody } {
  if (isMcphostError(error)) {
    const body: ErrorBody = { error: { code: error.code, message: error.message } };
    if (error.details !== undefined) body.error.details = error.details;
    return { status: httpStatusFor(error.code), body };
  }
  return {
    status: 500,
    body: { error: { code: 'ERR_INTERNAL', message: 'internal error; see the control plane log' } },
  };
}

/** Writes a JSON response. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

/** Writes the error response for any thrown value. */
export function sendError(res: ServerResponse, error: unknown): void {
  const { status, body } = errorBody(error);
  sendJson(res, status, body);
}
