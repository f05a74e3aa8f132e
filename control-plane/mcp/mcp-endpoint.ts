/**
 * `/mcp` of a hosted server: finds the request's session (or opens one for an
 * `initialize`), then hands the request to that session's transport
 * (streamable-http-transport.ts), whose messages the SDK's `Server` handles.
 * Every MCP request takes this one path. Transport errors — headers, body
 * size, JSON, unknown sessions — are McphostErrors answered as JSON-RPC
 * errors with the registry's status and code, never a 500.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isInitializeRequest, isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { isMcphostError, McphostError } from '../errors.js';
import { sendJsonRpcError } from '../http/index.js';
import type { Caller } from '../invocation/index.js';
import { callerKeyOf } from './caller-identity.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { checkGetHeaders, checkProtocolVersion, readPost } from './incoming-request.js';
import type { ResourceSubscriptions } from './resource-subscriptions.js';
import type { McpSession, SessionRegistry } from './session-registry.js';
import { StreamableHttpTransport } from './streamable-http-transport.js';

/** Silence on an open response before it turns into a stream with keep-alive comments (the SDK's own interval). */
const SSE_KEEP_ALIVE_MS = 15_000;

export interface McpEndpointOptions {
  sessions: SessionRegistry;
  /** Largest request body, in bytes. */
  maxBodyBytes: number;
  /**
   * The SDK server of a new session, with its resource subscriptions when it
   * takes any (app: createHostedMcpServer; tests: servers of their own).
   */
  serverFor(
    subdomain: string,
    caller: Caller,
  ): { server: Server; subscriptions?: ResourceSubscriptions };
  /** Counts a new session refused (`reason`: session_quota or session_capacity). */
  onRefused?: (subdomain: string, reason: string) => void;
  /** See SSE_KEEP_ALIVE_MS; tests shorten it. */
  keepAliveMs?: number;
}

/** One request to `/mcp`, with what the hosted side established about it. */
interface McpRequest {
  req: IncomingMessage;
  res: ServerResponse;
  subdomain: string;
  caller: Caller;
  /** Whom quotas count the request against (see caller-identity.ts). */
  quotaKey: string;
  chargeBatch(requests: number): void;
}

/** A session as the endpoint keeps it: registry entry and its transport. */
interface TransportSession extends McpSession {
  readonly transport: StreamableHttpTransport;
}

export class McpEndpoint {
  readonly #options: McpEndpointOptions;

  constructor(options: McpEndpointOptions) {
    this.#options = options;
  }

  /**
   * Answers one request to `/mcp`. `chargeBatch(requests)` is told how many
   * JSON-RPC requests a POST holds before any is answered, and throws
   * (ERR_RATE_LIMITED) when the caller may not make that many.
   */
  async handle(
    req: IncomingMessage,
    res: ServerResponse,
    subdomain: string,
    caller: Caller,
    quotaKey: string,
    chargeBatch: (requests: number) => void = () => undefined,
  ): Promise<void> {
    try {
      await this.#route({ req, res, subdomain, caller, quotaKey, chargeBatch });
    } catch (error) {
      if (!isMcphostError(error) || res.headersSent) throw error;
      req.resume();
      sendJsonRpcError(res, error, headersOf(error));
    }
  }

  async #route(request: McpRequest): Promise<void> {
    const { req, res, subdomain, caller } = request;
    if (req.method !== 'POST' && req.method !== 'GET' && req.method !== 'DELETE') {
      throw new McphostError('ERR_METHOD_NOT_ALLOWED', 'Method not allowed.');
    }
    const sessionId = req.headers['mcp-session-id'];
    if (sessionId === undefined) {
      if (req.method !== 'POST') {
        throw new McphostError('ERR_BAD_REQUEST', 'Bad Request: Mcp-Session-Id header is required');
      }
      await this.#open(request);
      return;
    }
    const session = this.#sessionFor(sessionId, subdomain, caller);
    if (req.method === 'GET') {
      checkGetHeaders(req);
      session.transport.handleGet(res);
      return;
    }
    checkProtocolVersion(req);
    if (req.method === 'DELETE') {
      req.resume();
      await session.close();
      this.#options.sessions.remove(session.id);
      res.writeHead(200).end();
      return;
    }
    const post = await readPost(req, this.#options.maxBodyBytes);
    request.chargeBatch(post.messages.filter(isJSONRPCRequest).length);
    // Until its response ends, the session is answering a request (a call may be
    // running): it is neither evicted nor swept. Counted once the body is in, so
    // a body that never finishes arriving does not pin the session.
    session.running += 1;
    res.once('close', () => (session.running -= 1));
    session.transport.handlePost(req, res, post);
  }

  /**
   * The session `id` names, if it belongs to this server and this caller: a
   * session of another server or caller is as unknown as a made-up id (and is
   * not kept alive by it: only a matching request marks it used).
   */
  #sessionFor(id: string | string[], subdomain: string, caller: Caller): TransportSession {
    const session =
      typeof id === 'string'
        ? (this.#options.sessions.peek(id) as TransportSession | undefined)
        : undefined;
    if (
      !session ||
      session.subdomain !== subdomain ||
      session.callerKey !== callerKeyOf(caller) ||
      session.transport.closed ||
      !this.#options.sessions.use(session.id)
    ) {
      throw new McphostError(
        'ERR_SESSION_NOT_FOUND',
        'Session not found; start a new session with initialize',
      );
    }
    return session;
  }

  /** Opens a session for an `initialize` POST, within the caller's and the server's quotas. */
  async #open({ req, res, subdomain, caller, quotaKey }: McpRequest): Promise<void> {
    const { sessions, maxBodyBytes } = this.#options;
    const post = await readPost(req, maxBodyBytes);
    if (post.messages.length !== 1 || !isInitializeRequest(post.messages[0])) {
      throw new McphostError(
        'ERR_BAD_REQUEST',
        'Bad Request: Mcp-Session-Id header is required (only initialize opens a session)',
      );
    }
    let admission;
    try {
      admission = sessions.admit(subdomain, quotaKey);
    } catch (error) {
      if (isMcphostError(error, 'ERR_SESSION_QUOTA') || isMcphostError(error, 'ERR_NO_CAPACITY')) {
        this.#options.onRefused?.(
          subdomain,
          error.code === 'ERR_SESSION_QUOTA' ? 'session_quota' : 'session_capacity',
        );
        sendJsonRpcError(res, error, { 'retry-after': '1' });
        return;
      }
      throw error;
    }
    try {
      const transport = new StreamableHttpTransport({
        sessionId: randomUUID(),
        keepAliveMs: this.#options.keepAliveMs ?? SSE_KEEP_ALIVE_MS,
      });
      const { server, subscriptions } = this.#options.serverFor(subdomain, caller);
      const session: TransportSession = {
        id: transport.sessionId,
        subdomain,
        callerKey: callerKeyOf(caller),
        quotaKey,
        // Its own initialize is being answered: not evictable until that ends.
        running: 1,
        lastUsed: Date.now(),
        transport,
        close: () => server.close(),
        // Each on the session's GET stream; a session whose capabilities lack the
        // feature refuses the send (the SDK checks), which is nothing to report.
        notifyToolsChanged: () => void server.sendToolListChanged().catch(() => undefined),
        notifyPromptsChanged: () => void server.sendPromptListChanged().catch(() => undefined),
        notifyResourcesChanged: () => void server.sendResourceListChanged().catch(() => undefined),
        notifyResourcesUpdated: (changes) => {
          for (const uri of subscriptions?.affected(changes) ?? []) {
            void server.sendResourceUpdated({ uri }).catch(() => undefined);
          }
        },
      };
      res.once('close', () => (session.running -= 1));
      // However the session ends (DELETE, idle, eviction, mode change), the registry forgets it.
      transport.onclose = () => sessions.remove(session.id);
      await server.connect(transport);
      admission.add(session);
      transport.handlePost(req, res, post);
    } finally {
      admission.release();
    }
  }
}

const ALLOW = { allow: 'GET, POST, DELETE' };

/** Headers an error answer carries: Allow for a wrong method, Retry-After for a refused batch. */
function headersOf(error: McphostError): Record<string, string> {
  if (error.code === 'ERR_METHOD_NOT_ALLOWED') return ALLOW;
  const retry = (error.details as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
  return error.code === 'ERR_RATE_LIMITED' && typeof retry === 'number'
    ? { 'retry-after': String(retry) }
    : {};
}
