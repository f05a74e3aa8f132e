/**
 * `/mcp` of a hosted server: MCP Streamable HTTP through the official SDK
 * transport, one transport and server per session. A request with a session
 * id goes to that session's transport; a POST without one opens a session
 * (the transport itself answers anything but `initialize` with the error the
 * specification names). Body size, content type and JSON errors are the
 * transport's to answer, with JSON-RPC errors, never a 500.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Caller } from '../invocation/tool-invoker.js';
import { sendJson } from '../http/error-response.js';
import { createHostedMcpServer, type HostedServerContext } from './hosted-mcp-server.js';
import type { SessionRegistry } from './session-registry.js';

export interface McpEndpointOptions {
  sessions: SessionRegistry;
  /** Largest request body, in bytes. */
  maxBodyBytes: number;
  context: Omit<HostedServerContext, 'subdomain' | 'caller'>;
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

/** Identity a session is bound to: the same subject (and client) must come back. */
export function callerKeyOf(caller: Caller): string {
  return caller.kind === 'oauth'
    ? `oauth:${caller.subject ?? ''}:${caller.clientId ?? ''}`
    : caller.kind;
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
  ): Promise<void> {
    const sessionId = headerValue(req.headers['mcp-session-id']);
    if (sessionId !== undefined) {
      const session = this.#options.sessions.use(sessionId);
      // A session of another server or another caller is as unknown as a made-up id.
      if (
        !session ||
        session.subdomain !== subdomain ||
        session.callerKey !== callerKeyOf(caller)
      ) {
        sendJsonRpcError(
          res,
          404,
          -32001,
          'Session not found; start a new session with initialize',
        );
        return;
      }
      await (session as TransportSession).transport.handleRequest(req, res);
      return;
    }
    if (req.method !== 'POST') {
      sendJsonRpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
      return;
    }
    await this.#openSession(req, res, subdomain, caller);
  }

  async #openSession(
    req: IncomingMessage,
    res: ServerResponse,
    subdomain: string,
    caller: Caller,
  ): Promise<void> {
    const { sessions, maxBodyBytes, context } = this.#options;
    const server = createHostedMcpServer({ ...context, subdomain, caller });
    let session: TransportSession | undefined;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      maxRequestBodySize: maxBodyBytes,
      onsessioninitialized: (id) => {
        session = {
          id,
          subdomain,
          callerKey: callerKeyOf(caller),
          lastUsed: Date.now(),
          transport,
          close: () => server.close(),
          notifyToolsChanged: () => void server.sendToolListChanged().catch(() => undefined),
        };
        sessions.add(session);
      },
      onsessionclosed: (id) => sessions.remove(id),
    });
    transport.onclose = () => {
      if (session) sessions.remove(session.id);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res);
    // Not an initialize request: the transport has answered with an error; nothing to keep.
    if (!session) await server.close();
  }
}

interface TransportSession {
  id: string;
  subdomain: string;
  callerKey: string;
  lastUsed: number;
  transport: StreamableHTTPServerTransport;
  close(): Promise<void>;
  notifyToolsChanged(): void;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
