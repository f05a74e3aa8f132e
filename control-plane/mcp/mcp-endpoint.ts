/**
 * `/mcp` of a hosted server: finds the request's session (or opens one for an
 * `initialize`), then hands the request to that session's transport
 * (streamable-http-transport.ts), whose messages the SDK's `Server` handles.
 * Every MCP request takes this one path. Transport errors — headers, body
 * size, JSON, unknown sessions — are McphostErrors answered as JSON-RPC
 * errors with the registry's status and code, never a 500.
 *
 * With `shared` (PostgreSQL), a session is any replica's: one this replica
 * has not seen is read from the store and rebuilt here (same checks, same
 * quotas as a new one); what the client changes is written back; signals
 * from the other replicas end, update or reach the sessions held here.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  isInitializeRequest,
  type JSONRPCMessage,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import { isMcphostError, McphostError } from '../errors.js';
import { sendJsonRpcError } from '../http/index.js';
import type { Caller } from '../invocation/index.js';
import { callerKeyOf } from './caller-identity.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { checkGetHeaders, checkProtocolVersion, readPost } from './incoming-request.js';
import type { ResourceSubscriptions } from './resource-subscriptions.js';
import type { McpSession, SessionRegistry } from './session-registry.js';
import { DEFAULT_SETTINGS, type SessionSettings, type SessionState } from './session-state.js';
import type { SharedSessions, SessionSignalHandlers, StoredSession } from './shared-sessions.js';
import { StreamableHttpTransport, type ClientHello } from './streamable-http-transport.js';

/** Silence on an open response before it turns into a stream with keep-alive comments (the SDK's own interval). */
const SSE_KEEP_ALIVE_MS = 15_000;

export interface McpEndpointOptions {
  sessions: SessionRegistry;
  /** Largest request body, in bytes. */
  maxBodyBytes: number;
  /**
   * The SDK server of a session, with its resource subscriptions and settings
   * when it keeps any (app: createHostedMcpServer; tests: servers of their
   * own); `features` are those a session being restored was opened with.
   */
  serverFor(subdomain: string, caller: Caller, features?: ServerCapabilities): SessionParts;
  /** Counts a new session refused (`reason`: session_quota or session_capacity). */
  onRefused?: (subdomain: string, reason: string) => void;
  /** See SSE_KEEP_ALIVE_MS; tests shorten it. */
  keepAliveMs?: number;
  /** The `retry` a resumable stream announces, in ms. */
  retryMs?: number;
  /** How long a detached stream stays resumable after its answer, in ms. */
  resumeWindowMs?: number;
  /** Sessions shared with the other replicas (PostgreSQL); absent with one process. */
  shared?: SharedSessions;
}

/** What `serverFor` gives: the SDK server and what the session keeps beside it. */
export interface SessionParts {
  server: Server;
  subscriptions?: ResourceSubscriptions;
  settings?(): SessionSettings;
  applySettings?(settings: SessionSettings): void;
  onSettingsChanged?: () => Promise<void>;
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

/** A session as the endpoint keeps it: registry entry, transport and server parts. */
interface TransportSession extends McpSession {
  readonly transport: StreamableHttpTransport;
  readonly parts: SessionParts;
}

export class McpEndpoint {
  readonly #options: McpEndpointOptions;
  /** Sessions being read from the store, so that concurrent requests rebuild one. */
  readonly #restoring = new Map<string, Promise<TransportSession | undefined>>();
  /** Sessions another replica ended while this one was rebuilding them. */
  readonly #endedWhileRestoring = new Set<string>();

  constructor(options: McpEndpointOptions) {
    this.#options = options;
  }

  /** What this replica does with the other replicas' signals (see SharedSessions.start). */
  signalHandlers(): SessionSignalHandlers {
    const held = (id: string) => this.#options.sessions.peek(id) as TransportSession | undefined;
    return {
      holds: (id) => held(id) !== undefined || this.#restoring.has(id),
      held: () => this.#options.sessions.ids(),
      running: () => this.#options.sessions.running(),
      ended: (id) => {
        if (this.#restoring.has(id)) this.#endedWhileRestoring.add(id);
        const session = held(id);
        if (session) void this.#closeHere(session);
      },
      changed: (id, state) => {
        const session = held(id);
        if (!session) return;
        if (state === undefined) void this.#closeHere(session);
        else session.parts.applySettings?.(state);
      },
      message: (id, message: JSONRPCMessage) => held(id)?.transport.deliverRelayed(message),
    };
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
    if (req.method === 'GET') checkGetHeaders(req);
    else checkProtocolVersion(req);
    const session = await this.#sessionFor(sessionId, subdomain, caller);
    if (req.method === 'GET') {
      const lastEventId = req.headers['last-event-id'];
      await session.transport.handleGet(
        res,
        typeof lastEventId === 'string' ? lastEventId : undefined,
      );
      return;
    }
    if (req.method === 'DELETE') {
      req.resume();
      this.#options.sessions.remove(session.id);
      await session.close(true);
      res.writeHead(200).end();
      return;
    }
    const post = await readPost(req, this.#options.maxBodyBytes);
    // Every message counts: a client answer or cancellation may be relayed to another replica.
    request.chargeBatch(post.messages.length);
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
   * not kept alive by it: only a matching request marks it used). With shared
   * sessions, one this replica does not hold is read from the store.
   */
  async #sessionFor(
    id: string | string[],
    subdomain: string,
    caller: Caller,
  ): Promise<TransportSession> {
    const { sessions, shared } = this.#options;
    let session =
      typeof id === 'string' ? (sessions.peek(id) as TransportSession | undefined) : undefined;
    if (!session && shared && typeof id === 'string' && isSessionId(id)) {
      session = await this.#restore(id, subdomain, caller);
    }
    if (
      !session ||
      session.subdomain !== subdomain ||
      session.callerKey !== callerKeyOf(caller) ||
      session.transport.closed ||
      !sessions.use(session.id)
    ) {
      throw new McphostError(
        'ERR_SESSION_NOT_FOUND',
        'Session not found; start a new session with initialize',
      );
    }
    shared?.touch(session.id);
    return session;
  }

  /** Rebuilds a session another replica opened; undefined when it is not this server's and caller's. */
  #restore(id: string, subdomain: string, caller: Caller): Promise<TransportSession | undefined> {
    let restoring = this.#restoring.get(id);
    if (!restoring) {
      restoring = this.#load(id, subdomain, caller).finally(() => this.#restoring.delete(id));
      this.#restoring.set(id, restoring);
    }
    return restoring;
  }

  async #load(
    id: string,
    subdomain: string,
    caller: Caller,
  ): Promise<TransportSession | undefined> {
    const stored: StoredSession | undefined = await this.#options.shared!.load(id);
    if (
      !stored ||
      stored.row.subdomain !== subdomain ||
      stored.row.callerKey !== callerKeyOf(caller)
    ) {
      return undefined;
    }
    // Another request may have rebuilt it meanwhile.
    const held = this.#options.sessions.peek(id) as TransportSession | undefined;
    if (held) return held;
    const admission = this.#admit(subdomain, stored.row.quotaKey);
    try {
      const session = this.#build(id, subdomain, caller, stored.row.quotaKey, stored.state);
      session.running = 0;
      await session.parts.server.connect(session.transport);
      await session.transport.restore(stored.state.hello);
      session.parts.applySettings?.(stored.state);
      admission.add(session);
      return session;
    } finally {
      admission.release();
    }
  }

  /** Opens a session for an `initialize` POST, within the caller's and the server's quotas. */
  async #open(request: McpRequest): Promise<void> {
    const { req, res, subdomain, caller, quotaKey } = request;
    const post = await readPost(req, this.#options.maxBodyBytes);
    if (post.messages.length !== 1 || !isInitializeRequest(post.messages[0])) {
      throw new McphostError(
        'ERR_BAD_REQUEST',
        'Bad Request: Mcp-Session-Id header is required (only initialize opens a session)',
      );
    }
    const admission = this.#admit(subdomain, quotaKey);
    try {
      const session = this.#build(randomUUID(), subdomain, caller, quotaKey, undefined);
      res.once('close', () => (session.running -= 1));
      await session.parts.server.connect(session.transport);
      admission.add(session);
      session.transport.handlePost(req, res, post);
    } finally {
      admission.release();
    }
  }

  /** A place for a session of `quotaKey` on `subdomain`; a refusal is counted and thrown. */
  #admit(subdomain: string, quotaKey: string) {
    try {
      return this.#options.sessions.admit(subdomain, quotaKey);
    } catch (error) {
      if (isMcphostError(error, 'ERR_SESSION_QUOTA') || isMcphostError(error, 'ERR_NO_CAPACITY')) {
        this.#options.onRefused?.(
          subdomain,
          error.code === 'ERR_SESSION_QUOTA' ? 'session_quota' : 'session_capacity',
        );
      }
      throw error;
    }
  }

  /**
   * The registry entry, transport and server of a session: new (`restored`
   * undefined; its own initialize is being answered, so it is busy) or rebuilt
   * from what the store holds.
   */
  #build(
    id: string,
    subdomain: string,
    caller: Caller,
    quotaKey: string,
    restored: SessionState | undefined,
  ): TransportSession {
    const { sessions, shared } = this.#options;
    let hello: ClientHello | undefined = restored?.hello;
    const parts = this.#options.serverFor(subdomain, caller, restored?.features);
    const stateOf = (): SessionState => ({
      hello: hello!,
      ...(parts.settings?.() ?? DEFAULT_SETTINGS),
    });
    const callerKey = callerKeyOf(caller);
    const transport = new StreamableHttpTransport({
      sessionId: id,
      keepAliveMs: this.#options.keepAliveMs ?? SSE_KEEP_ALIVE_MS,
      retryMs: this.#options.retryMs,
      resumeWindowMs: this.#options.resumeWindowMs,
      archive: shared?.archive,
      relay: shared && ((message) => shared.relay(id, message)),
      onInitialized: async (clientHello) => {
        hello = clientHello;
        await shared?.create({ id, subdomain, callerKey, quotaKey }, stateOf());
      },
    });
    if (shared) parts.onSettingsChanged = () => shared.save(id, stateOf());
    const { server, subscriptions } = parts;
    const session: TransportSession = {
      id,
      subdomain,
      callerKey,
      quotaKey,
      running: 1,
      lastUsed: Date.now(),
      transport,
      parts,
      close: async (everywhere) => {
        await server.close();
        if (everywhere) await shared?.end(id);
      },
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
    // However the session ends here (DELETE, idle, eviction, mode change), the registry forgets it.
    transport.onclose = () => sessions.remove(session.id);
    return session;
  }

  /** Closes this replica's copy of a session that ended elsewhere. */
  async #closeHere(session: TransportSession): Promise<void> {
    this.#options.sessions.remove(session.id);
    await session.close(false).catch(() => undefined);
  }
}

/** Session ids are the UUIDs `#open` makes: anything else is not looked up in the store. */
function isSessionId(id: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id);
}

const ALLOW = { allow: 'GET, POST, DELETE' };

/** Headers an error answer carries: Allow for a wrong method, Retry-After for a refused batch or session. */
function headersOf(error: McphostError): Record<string, string> {
  if (error.code === 'ERR_METHOD_NOT_ALLOWED') return ALLOW;
  if (error.code === 'ERR_SESSION_QUOTA' || error.code === 'ERR_NO_CAPACITY') {
    return { 'retry-after': '1' };
  }
  const retry = (error.details as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
  return error.code === 'ERR_RATE_LIMITED' && typeof retry === 'number'
    ? { 'retry-after': String(retry) }
    : {};
}
