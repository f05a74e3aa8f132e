/**
 * MCP over plain fetch, for tests that behave as no SDK client would: open a
 * session of a chosen protocol version, start a call and cut its response
 * (before its first event, or once it has a few), resume a stream with
 * `Last-Event-ID`. Every request may name its client in X-Forwarded-For (a
 * control plane with TRUSTED_PROXIES=127.0.0.1 then counts it as that client).
 */
import { loopbackFetch } from './loopback-fetch.js';

/** Headers every POST to `/mcp` carries. */
const POST_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

/** A raw session on one hosted server: its id and the client address its requests name. */
export interface RawSession {
  id: string;
  /** X-Forwarded-For of every request (undefined: the socket peer). */
  client?: string;
}

/** An initialize the server refused: its status and body. */
export interface RefusedInitialize {
  refused: true;
  status: number;
  body: string;
}

function clientHeaders(client: string | undefined): Record<string, string> {
  return client === undefined ? {} : { 'x-forwarded-for': client };
}

/**
 * POSTs `initialize` (and `notifications/initialized`); the session, or what
 * the server answered when it refused it.
 */
export async function openRawSession(
  url: URL,
  options: { protocolVersion?: string; client?: string } = {},
): Promise<RawSession | RefusedInitialize> {
  const headers = { ...POST_HEADERS, ...clientHeaders(options.client) };
  const response = await loopbackFetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: options.protocolVersion ?? '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'raw', version: '1' },
      },
    }),
  });
  const id = response.headers.get('mcp-session-id');
  const body = await response.text();
  if (response.status !== 200 || id === null || !body.includes('"result"')) {
    return { refused: true, status: response.status, body };
  }
  const initialized = await loopbackFetch(url, {
    method: 'POST',
    headers: { ...headers, 'mcp-session-id': id },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  await initialized.text();
  return { id, client: options.client };
}

/** The session, or a failure naming the refusal. */
export async function requireRawSession(
  url: URL,
  options: { protocolVersion?: string; client?: string } = {},
): Promise<RawSession> {
  const opened = await openRawSession(url, options);
  if ('refused' in opened) throw new Error(`initialize refused: ${opened.status} ${opened.body}`);
  return opened;
}

/** POSTs one JSON-RPC message of the session; the Response as it comes. */
export function postRaw(
  url: URL,
  session: RawSession,
  message: unknown,
  signal?: AbortSignal,
): Promise<Response> {
  return loopbackFetch(url, {
    method: 'POST',
    headers: { ...POST_HEADERS, ...clientHeaders(session.client), 'mcp-session-id': session.id },
    body: JSON.stringify(message),
    signal,
  });
}

/** A `tools/call` request. */
export function toolCall(id: number, name: string, args: Record<string, unknown> = {}) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } };
}

/**
 * Starts a call and cuts its response: once `events` SSE events arrived
 * (the priming event counts), or — with `events` 0 — after `afterMs`
 * without reading anything. Returns the id of the priming event when one
 * arrived (what a client resumes from), else undefined.
 */
export async function cutCall(
  url: URL,
  session: RawSession,
  message: unknown,
  cut: { events: number } | { afterMs: number },
): Promise<string | undefined> {
  const controller = new AbortController();
  const response = postRaw(url, session, message, controller.signal);
  if ('afterMs' in cut) {
    await new Promise((resolve) => setTimeout(resolve, cut.afterMs));
    controller.abort();
    await response.catch(() => undefined);
    return undefined;
  }
  const reader = (await response).body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (text.split('\n\n').length - 1 < cut.events) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  controller.abort();
  await reader.cancel().catch(() => undefined);
  return /^id: ([0-9a-f]{16}\.0)\n/.exec(text)?.[1];
}

/** GET resuming the stream after `lastEventId`: the status, and the body read to its end. */
export async function resumeRaw(
  url: URL,
  session: RawSession,
  lastEventId: string,
): Promise<{ status: number; body: string }> {
  const response = await loopbackFetch(url, {
    headers: {
      accept: 'text/event-stream',
      ...clientHeaders(session.client),
      'mcp-session-id': session.id,
      'last-event-id': lastEventId,
    },
  });
  return { status: response.status, body: await response.text() };
}

/** The stable error code of a JSON-RPC error body (`error.data.code`), or undefined. */
export function errorCodeOf(body: string): string | undefined {
  try {
    return (JSON.parse(body) as { error?: { data?: { code?: string } } }).error?.data?.code;
  } catch {
    return undefined;
  }
}
