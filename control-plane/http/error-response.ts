/**
 * Errors as HTTP responses, statuses and codes from the registry (errors.ts).
 * Admin responses carry `{"error": {"code", "message", "details"?}}`; MCP
 * transport errors a JSON-RPC error; unexpected failures a 500 with a generic
 * message (the stack goes to the log, never to the caller).
 */
import type { ServerResponse } from 'node:http';
import { errorSpecOf, jsonRpcErrorOf, publicErrorOf, type McphostError } from '../errors.js';

/** HTTP status for an error code (from the registry); 500 for anything unexpected. */
export function httpStatusFor(code: string): number {
  return errorSpecOf(code).status;
}

export interface ErrorBody {
  error: { code: string; message: string; details?: unknown };
}

/** The JSON body and status for any thrown value (messages the registry hides are replaced). */
export function errorBody(error: unknown): { status: number; body: ErrorBody } {
  const shown = publicErrorOf(error);
  return { status: httpStatusFor(shown.code), body: { error: shown } };
}

/**
 * An answer held back on a response marked by `holdAnswer`: the admin side
 * writes a change's audit entry before its caller learns the change was made,
 * so an answer that was sent always has its entry (a crash between the two
 * loses the answer, never the entry), and any replica asked next shows it.
 */
export interface HeldAnswer {
  status: number;
  /** The JSON body; undefined for an answer without one (204). */
  body: unknown;
  headers: Record<string, string | string[]>;
}
const holding = new WeakMap<ServerResponse, HeldAnswer | undefined>();

/** Makes `sendJson` and `sendNoContent` on `res` hold their answer until `releaseHeldAnswer`. */
export function holdAnswer(res: ServerResponse): void {
  holding.set(res, undefined);
}

/** Stops holding answers on `res` and returns the one held, if any; writing it is the caller's. */
export function releaseHeldAnswer(res: ServerResponse): HeldAnswer | undefined {
  const held = holding.get(res);
  holding.delete(res);
  return held;
}

/** Writes an answer: a JSON body, or none. */
export function writeAnswer(res: ServerResponse, answer: HeldAnswer): void {
  if (answer.body === undefined) {
    res.writeHead(answer.status, answer.headers).end();
    return;
  }
  const text = JSON.stringify(answer.body);
  res.writeHead(answer.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...answer.headers,
  });
  res.end(text);
}

function answerOrHold(res: ServerResponse, answer: HeldAnswer): void {
  if (holding.has(res)) holding.set(res, answer);
  else writeAnswer(res, answer);
}

/** Writes a JSON response. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string | string[]> = {},
): void {
  answerOrHold(res, { status, body, headers });
}

/** Writes a 204: done, nothing to say. */
export function sendNoContent(
  res: ServerResponse,
  headers: Record<string, string | string[]> = {},
): void {
  answerOrHold(res, { status: 204, body: undefined, headers });
}

/** Writes the error response for any thrown value, with extra `headers` (e.g. `Allow`, `Retry-After`). */
export function sendError(
  res: ServerResponse,
  error: unknown,
  headers: Record<string, string> = {},
): void {
  const { status, body } = errorBody(error);
  sendJson(res, status, body, headers);
}

/**
 * A JSON-RPC error answering an MCP HTTP request (transport errors, refusals
 * before the protocol layer): status and code from the registry, the stable
 * code in `error.data.code`, and the request's `id` when it could be read
 * (null otherwise, as JSON-RPC says).
 */
export function sendJsonRpcError(
  res: ServerResponse,
  error: McphostError,
  headers: Record<string, string> = {},
  id: string | number | null = null,
): void {
  sendJson(res, httpStatusFor(error.code), jsonRpcErrorBody(error, id), headers);
}

/** The JSON-RPC error message of `error` answering `id` (see sendJsonRpcError). */
export function jsonRpcErrorBody(
  error: McphostError,
  id: string | number | null = null,
): {
  jsonrpc: '2.0';
  error: ReturnType<typeof jsonRpcErrorOf>;
  id: string | number | null;
} {
  return { jsonrpc: '2.0', error: jsonRpcErrorOf(error), id };
}
