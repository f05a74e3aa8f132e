/**
 * The lean path for the hot request: a single `tools/call` on an open
 * session, answered without the SDK transport's per-request conversion to and
 * from web Requests and Responses (measured at ~0.65 ms a request here). It
 * takes only the fully valid case — headers as the transport requires them, a
 * request that parses as `tools/call` — and leaves everything else, errors
 * included, to the SDK transport, which answers as the specification says.
 *
 * The answer is plain JSON when the tool logs nothing; its first console line
 * switches the response to an SSE stream (logging notifications, then the
 * result), as Streamable HTTP allows for any request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  CallToolRequestSchema,
  CancelledNotificationSchema,
  ErrorCode,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { requestIdOf } from '../http/request-context.js';
import { callTool, type SessionState, type ToolCallContext } from './tool-call.js';

/** What the lean path needs of a session. */
export interface LeanSession {
  readonly id: string;
  readonly state: SessionState;
  readonly context: ToolCallContext;
  /** Calls running on the lean path, by JSON-RPC id, for `notifications/cancelled`. */
  readonly inFlight: Map<RequestId, AbortController>;
}

function acceptsBoth(req: IncomingMessage): boolean {
  const accept = req.headers.accept ?? '';
  return accept.includes('application/json') && accept.includes('text/event-stream');
}

/** `application/json`, parameters allowed — the media type, not a substring. */
function isJsonMediaType(contentType: string | undefined): boolean {
  return (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase() === 'application/json';
}

function headersAsTransportRequires(req: IncomingMessage): boolean {
  const version = req.headers['mcp-protocol-version'];
  return (
    acceptsBoth(req) &&
    isJsonMediaType(req.headers['content-type']) &&
    (version === undefined ||
      (typeof version === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(version)))
  );
}

/**
 * Answers `message` when it is a `tools/call` request or a cancellation of a
 * lean call; returns false, having written nothing, for anything else.
 */
export async function tryLeanPath(
  req: IncomingMessage,
  res: ServerResponse,
  session: LeanSession,
  message: unknown,
): Promise<boolean> {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return false;
  const method = (message as { method?: unknown }).method;
  if (method === 'notifications/cancelled') return cancel(res, session, message);
  if (method !== 'tools/call' || !headersAsTransportRequires(req)) return false;
  const parsed = CallToolRequestSchema.safeParse(message);
  const id = (message as { id?: unknown }).id;
  if (!parsed.success || (typeof id !== 'string' && typeof id !== 'number')) return false;
  if ((message as { jsonrpc?: unknown }).jsonrpc !== '2.0') return false;

  const controller = new AbortController();
  session.inFlight.set(id, controller);
  let streaming = false;
  const startStream = () => {
    streaming = true;
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      // Reverse proxies must pass log lines on as they come.
      'x-accel-buffering': 'no',
      'mcp-session-id': session.id,
    });
  };
  const sendEvent = (payload: object) =>
    res.write(`event: message\ndata: ${JSON.stringify(payload)}\n\n`);
  let answer: object;
  try {
    const result = await callTool(
      session.context,
      session.state,
      parsed.data.params,
      requestIdOf(req),
      controller.signal,
      (params) => {
        if (res.destroyed) return;
        if (!streaming) startStream();
        sendEvent({ jsonrpc: '2.0', method: 'notifications/message', params });
      },
    );
    answer = { jsonrpc: '2.0', id, result };
  } catch (error) {
    answer =
      error instanceof McpError
        ? { jsonrpc: '2.0', id, error: { code: error.code, message: error.message } }
        : {
            jsonrpc: '2.0',
            id,
            error: { code: ErrorCode.InternalError, message: 'internal error' },
          };
  } finally {
    session.inFlight.delete(id);
  }
  if (res.destroyed) return true;
  if (streaming) {
    sendEvent(answer);
    res.end();
  } else {
    const text = JSON.stringify(answer);
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      'mcp-session-id': session.id,
    });
    res.end(text);
  }
  return true;
}

function cancel(res: ServerResponse, session: LeanSession, message: object): boolean {
  const parsed = CancelledNotificationSchema.safeParse(message);
  const requestId = parsed.success ? parsed.data.params.requestId : undefined;
  const controller = requestId === undefined ? undefined : session.inFlight.get(requestId);
  if (!controller) return false; // not ours: the SDK server may know the request
  controller.abort(parsed.data?.params.reason ?? 'cancelled by the client');
  res.writeHead(202).end();
  return true;
}
