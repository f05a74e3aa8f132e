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

/** Bodies sent on responses that asked to keep them (the admin side's audit trail reads them). */
const keptBodies = new WeakMap<ServerResponse, unknown>();
const keeping = new WeakSet<ServerResponse>();

/** Makes `sendJson` keep the body it sends on `res`, for `sentBodyOf`. */
export function keepSentBody(res: ServerResponse): void {
  keeping.add(res);
}

/** The JSON body `sendJson` sent on a response marked by `keepSentBody`, else undefined. */
export function sentBodyOf(res: ServerResponse): unknown {
  return keptBodies.get(res);
}

/** Writes a JSON response. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string | string[]> = {},
): void {
  if (keeping.has(res)) keptBodies.set(res, body);
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
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
