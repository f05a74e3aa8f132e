/**
 * `/mcp` of a hosted server: MCP Streamable HTTP through the official SDK
 * transport, one transport and server per session. A POST without a session
 * id opens a session (the transport answers anything but `initialize` with the
 * error the specification names). In a session, POST bodies are read once,
 * here: a single `tools/call` takes the lean path (lean-tool-call.ts), anything
 * else goes to the session's transport with the parsed body. Body size,
 * content type and JSON errors get JSON-RPC errors, never a 500.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isMcphostError, type McphostError } from '../errors.js';
import { httpStatusFor, sendJson } from '../http/error-response.js';
import { BodyTooLarge, readBody } from '../http/read-body.js';
import type { Caller } from '../invocation/tool-invoker.js';
import { callerKeyOf } from './caller-identity.js';
import { createHostedMcpServer, type HostedServerContext } from './hosted-mcp-server.js';
import { tryLeanPath, type LeanSession } from './lean-tool-call.js';
import type { McpSession, SessionAdmission, SessionRegistry } from './session-registry.js';
import type { SessionState } from './tool-call.js';

export interface McpEndpointOptions {
  sessions: SessionRegistry;
  /** Largest request body, in bytes. */
  maxBodyBytes: number;
  context: Omit<HostedServerContext, 'subdomain' | 'caller'>;
  /** Counts a new session refused (`reason`: session_quota or session_capacity). */
  onRefused?: (subdomain: string, reason: string) => void;
}

/** A session as the endpoint keeps it: registry entry, SDK transport, lean-path state. */
interface TransportSession extends McpSession, LeanSession {
  readonly transport: StreamableHTTPServerTransport;
  /** Set once the session closed, whoever closed it. */
  closed: boolean;
}

/** A JSON-RPC error response outside any session (the transport is not involved). */
export function sendJsonRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null });
}

/**
 * A refusal outside any session as a JSON-RPC error: the status comes from the
 * error's code (error-response.ts), the code travels in `error.data.code`.
 */
export function sendJsonRpcRefusal(
  res: ServerResponse,
  error: McphostError,
  headers: Record<string, string> = {},
): void {
  sendJson(
    res,
    httpStatusFor(error.code),
    {
      jsonrpc: '2.0',
      error: { code: -32000, message: error.message, data: { code: error.code } },
      id: null,
    },
    headers,
  );
}

export class McpEndpoint {
  readonly #options: McpEndpointOptions;

  constructor(options: McpEndpointOptions) {
    this.#options = options;
  }

  async handle(
    req: IncomingMessage,
    res: ServerResponse,
    subdomain: string,
    caller: Caller,
    quotaKey: string,
  ): Promise<void> {
    const sessionId = headerValue(req.headers['mcp-session-id']);
    if (sessionId === undefined) {
      if (req.method !== 'POST') {
        sendJsonRpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
        return;
      }
      let admission: SessionAdmission;
      try {
        admission = this.#options.sessions.admit(subdomain, quotaKey);
      } catch (error) {
        if (!isMcphostError(error)) throw error;
        this.#options.onRefused?.(
          subdomain,
          error.code === 'ERR_SESSION_QUOTA' ? 'session_quota' : 'session_capacity',
        );
        req.resume();
        sendJsonRpcRefusal(res, error, { 'retry-after': '1' });
        return;
      }
      try {
        await this.#openSession(req, res, subdomain, caller, quotaKey, admission);
      } finally {
        admission.release();
      }
      return;
    }
    const session = this.#options.sessions.peek(sessionId) as TransportSession | undefined;
    // A session of another server or another caller is as unknown as a made-up id
    // (and is not kept alive by it: only a matching request marks it used).
    if (
      !session ||
      session.subdomain !== subdomain ||
      session.callerKey !== callerKeyOf(caller) ||
      !this.#options.sessions.use(sessionId)
    ) {
      sendJsonRpcError(res, 404, -32001, 'Session not found; start a new session with initialize');
      return;
    }
    if (req.method !== 'POST') {
      await session.transport.handleRequest(req, res);
      return;
    }
    // Until its response ends, the session is answering a request (a call may be
    // running): it is neither evicted nor swept.
    session.running += 1;
    res.once('close', () => (session.running -= 1));
    let message: unknown;
    try {
      message = JSON.parse((await readBody(req, this.#options.maxBodyBytes)).toString('utf8'));
    } catch (error) {
      // What the transport answers for these when it reads the body itself.
      if (error instanceof BodyTooLarge) sendJsonRpcError(res, 413, -32000, error.message);
      else sendJsonRpcError(res, 400, -32700, 'Parse error: Invalid JSON');
      return;
    }
    // The session may have closed while the body arrived (server deleted, mode changed).
    if (session.closed) {
      sendJsonRpcError(res, 404, -32001, 'Session not found; start a new session with initialize');
      return;
    }
    if (await tryLeanPath(req, res, session, message)) return;
    await session.transport.handleRequest(req, res, message);
  }

  async #openSession(
    req: IncomingMessage,
    res: ServerResponse,
    subdomain: string,
    caller: Caller,
    quotaKey: string,
    admission: SessionAdmission,
  ): Promise<void> {
    const { sessions, maxBodyBytes, context } = this.#options;
    const callContext = { ...context, subdomain, caller };
    const state: SessionState = { minimumLevel: 'debug' };
    const server = createHostedMcpServer(callContext, state);
    let session: TransportSession | undefined;
    const inFlight = new Map<string | number, AbortController>();
    // However the session ends (DELETE, idle, mode change), its lean calls stop
    // as the SDK's own handlers do.
    const abortAll = () => {
      if (session) session.closed = true;
      for (const controller of inFlight.values()) controller.abort('session closed');
    };
    let initializeAnswered = false;
    res.once('close', () => {
      initializeAnswered = true;
      if (session) session.running -= 1;
    });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      maxRequestBodySize: maxBodyBytes,
      onsessioninitialized: (id) => {
        session = {
          id,
          subdomain,
          callerKey: callerKeyOf(caller),
          quotaKey,
          // Its own initialize is still being answered: not evictable yet.
          running: initializeAnswered ? 0 : 1,
          lastUsed: Date.now(),
          transport,
          state,
          context: callContext,
          inFlight,
          closed: false,
          close: async () => {
            abortAll();
            await server.close();
          },
          notifyToolsChanged: () => void server.sendToolListChanged().catch(() => undefined),
        };
        admission.add(session);
      },
      onsessionclosed: (id) => {
        abortAll();
        sessions.remove(id);
      },
    });
    transport.onclose = () => {
      abortAll();
      if (session) sessions.remove(session.id);
    };
    await server.connect(transport);
    try {
      await transport.handleRequest(req, res);
    } finally {
      // Not an initialize request: the transport has answered with an error; nothing to keep.
      if (!session) await server.close();
    }
  }
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
