/**
 * The legacy era of `/mcp` (MCP 2025-11-25 and earlier): requests that name a
 * session (`Mcp-Session-Id`) go to that session's transport
 * (streamable-http-transport.ts), whose messages its SDK `Server` handles;
 * an `initialize` opens a session. Transport errors — headers, unknown
 * sessions — are McphostErrors the endpoint answers as JSON-RPC errors with
 * the registry's status and code, never a 500.
 *
 * With `shared` (PostgreSQL), a session is any replica's: a new one takes
 * its place in the store within the caller's and the server's quotas counted
 * over every replica (the store replaces older sessions past one); one this
 * replica has not seen is read from the store and rebuilt here (the same
 * checks; it counts against this replica's memory as a new one does); what
 * the client changes is written back; signals from the other replicas end,
 * evict, update or reach the sessions held here. A session replaced past a
 * quota answers no new request, and closes once those it is answering end:
 * a running call is never cut by another session's arrival.
 *
 * A session ends with the credential of its caller (stream-credential.ts):
 * its API key revoked or deleted closes it everywhere (the key can open
 * nothing again, and the store's place is given back); its credential's end
 * passed (a token's `exp`, a key's `expiresAt`; each request of the session
 * moves it to its own credential's, so a refreshed token keeps the session)
 * retires this replica's copy, its GET stream at once, its running calls
 * once they end. Either way the next request to it here is the standard 404
 * "session not found" (with shared sessions, a request with a fresh token of
 * the same caller rebuilds it).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  isInitializeRequest,
  type JSONRPCMessage,
  type Server,
  type ServerCapabilities,
} from '@modelcontextprotocol/server';
import { isMcphostError, McphostError } from '../errors.js';
import { callerKeyOf } from './caller-identity.js';
import { checkGetHeaders, checkProtocolVersion, type IncomingPost } from './incoming-request.js';
import type { ResourceSubscriptions } from './resource-subscriptions.js';
import type { ResumeBudget } from './resume-budget.js';
import type { McpSession, SessionRegistry } from './session-registry.js';
import { DEFAULT_SETTINGS, type SessionSettings, type SessionState } from './session-state.js';
import type { SharedSessions, SessionSignalHandlers, StoredSession } from './shared-sessions.js';
import {
  CredentialExpiry,
  type AdmittedScope,
  type StreamCredential,
} from './stream-credential.js';
import { StreamableHttpTransport, type ClientHello } from './streamable-http-transport.js';

/** Silence on an open response before it turns into a stream with keep-alive comments (the SDK's own interval). */
const SSE_KEEP_ALIVE_MS = 15_000;

export interface LegacySessionsOptions {
  sessions: SessionRegistry;
  /**
   * The SDK server of a session, with its resource subscriptions and settings
   * when it keeps any (app: createHostedMcpServer; tests: servers of their
   * own); `features` are those a session being restored was opened with.
   */
  serverFor(subdomain: string, features?: ServerCapabilities): SessionParts;
  /** Counts a new session refused (`reason`: session_quota or session_capacity). */
  onRefused?: (subdomain: string, reason: string) => void;
  /** Counts a stored session replaced by a newer one past a quota (shared sessions). */
  onEvicted?: (subdomain: string) => void;
  /** What cut response streams may keep, per caller and per server (resume-budget.ts). */
  resumeBudget: ResumeBudget;
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

/** One legacy request to `/mcp`, with what the hosted side established about it. */
export interface LegacyRequest {
  req: IncomingMessage;
  res: ServerResponse;
  subdomain: string;
  scope: AdmittedScope;
}

/** A session as the endpoint keeps it: registry entry, transport and server parts. */
interface TransportSession extends McpSession {
  readonly transport: StreamableHttpTransport;
  readonly parts: SessionParts;
  /** The credential of the caller that opened it (its API key); the session ends with it. */
  readonly credential: StreamCredential | undefined;
  /** Closes this copy when the latest credential used with the session ends. */
  readonly expiry: CredentialExpiry;
  /** Closes it everywhere: the API key it was opened with was revoked or deleted. */
  credentialRevoked(): void;
  /** Replaced past a quota: closes once the requests it is answering end. */
  retiring?: boolean;
}

export class LegacySessions {
  readonly #options: LegacySessionsOptions;
  /** Sessions being read from the store, so that concurrent requests rebuild one. */
  readonly #restoring = new Map<string, Promise<TransportSession | undefined>>();
  /** Sessions another replica ended while this one was rebuilding them. */
  readonly #endedWhileRestoring = new Set<string>();

  constructor(options: LegacySessionsOptions) {
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
      evicted: (id) => this.#evicted(id),
      changed: (id, state) => {
        const session = held(id);
        if (!session) return;
        if (state === undefined) void this.#closeHere(session);
        else session.parts.applySettings?.(state);
      },
      message: (id, message: JSONRPCMessage) => held(id)?.transport.deliverRelayed(message),
    };
  }

  /** A GET or DELETE of a session (the legacy era's only methods besides POST). */
  async handleSessionRequest(request: LegacyRequest): Promise<void> {
    const { req, res, subdomain, scope } = request;
    const sessionId = req.headers['mcp-session-id'];
    if (sessionId === undefined) {
      throw new McphostError('ERR_BAD_REQUEST', 'Bad Request: Mcp-Session-Id header is required');
    }
    if (req.method === 'GET') checkGetHeaders(req);
    else checkProtocolVersion(req);
    const session = await this.#sessionFor(sessionId, subdomain, scope);
    if (req.method === 'GET') {
      const lastEventId = req.headers['last-event-id'];
      await session.transport.handleGet(
        res,
        typeof lastEventId === 'string' ? lastEventId : undefined,
      );
      return;
    }
    req.resume();
    this.#options.sessions.remove(session.id);
    await session.close(true);
    res.writeHead(200).end();
  }

  /** A POST of the legacy era: to its session, or an `initialize` that opens one. */
  async handlePost(request: LegacyRequest, post: IncomingPost): Promise<void> {
    const { req, res, subdomain, scope } = request;
    const sessionId = req.headers['mcp-session-id'];
    if (sessionId === undefined) {
      await this.#open(request, post);
      return;
    }
    checkProtocolVersion(req);
    const session = await this.#sessionFor(sessionId, subdomain, scope);
    // Until its response ends, the session is answering a request (a call may be
    // running): it is neither evicted nor swept. Counted once the body is in, so
    // a body that never finishes arriving does not pin the session.
    session.running += 1;
    res.once('close', () => this.#answered(session));
    session.transport.handlePost(res, post, scope);
  }

  /** A response of the session ended; a retiring session closes with its last one. */
  #answered(session: TransportSession): void {
    session.running -= 1;
    if (session.retiring && session.running === 0) void this.#closeHere(session);
  }

  /**
   * The session was replaced past a quota: no new request reaches it (the
   * store no longer has it), and it closes here once it answers nothing.
   */
  #retire(session: TransportSession): void {
    this.#options.sessions.remove(session.id);
    session.retiring = true;
    if (session.running === 0) void this.#closeHere(session);
  }

  /**
   * The session `id` names, if it belongs to this server and this caller: a
   * session of another server or caller is as unknown as a made-up id (and is
   * not kept alive by it: only a matching request marks it used). With shared
   * sessions, one this replica does not hold is read from the store. The
   * request's credential ends the session no earlier than its own end.
   */
  async #sessionFor(
    id: string | string[],
    subdomain: string,
    scope: AdmittedScope,
  ): Promise<TransportSession> {
    const { sessions, shared } = this.#options;
    const caller = scope.caller;
    let session =
      typeof id === 'string' ? (sessions.peek(id) as TransportSession | undefined) : undefined;
    if (!session && shared && typeof id === 'string' && isSessionId(id)) {
      session = await this.#restore(id, subdomain, scope);
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
    session.expiry.extend(scope.credential?.expiresAt);
    return session;
  }

  /** Rebuilds a session another replica opened; undefined when it is not this server's and caller's. */
  #restore(
    id: string,
    subdomain: string,
    scope: AdmittedScope,
  ): Promise<TransportSession | undefined> {
    let restoring = this.#restoring.get(id);
    if (!restoring) {
      restoring = this.#load(id, subdomain, scope).finally(() => {
        this.#restoring.delete(id);
        this.#endedWhileRestoring.delete(id);
      });
      this.#restoring.set(id, restoring);
    }
    return restoring;
  }

  async #load(
    id: string,
    subdomain: string,
    scope: AdmittedScope,
  ): Promise<TransportSession | undefined> {
    const caller = scope.caller;
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
      const session = this.#build(id, subdomain, scope, stored.row.quotaKey, stored.state);
      session.running = 0;
      await session.parts.server.connect(session.transport);
      await session.transport.restore(stored.state.hello);
      if (this.#endedWhileRestoring.has(id)) {
        // Read just before another replica ended or replaced it: it is no session any more.
        await session.close(false);
        return undefined;
      }
      session.parts.applySettings?.(stored.state);
      admission.add(session);
      return session;
    } finally {
      admission.release();
    }
  }

  /** Opens a session for an `initialize` POST, within the caller's and the server's quotas. */
  async #open(request: LegacyRequest, post: IncomingPost): Promise<void> {
    const { res, subdomain, scope } = request;
    const { caller, quotaKey } = scope;
    const { shared } = this.#options;
    if (post.messages.length !== 1 || !isInitializeRequest(post.messages[0])) {
      throw new McphostError(
        'ERR_BAD_REQUEST',
        'Bad Request: Mcp-Session-Id header is required (only initialize opens a session)',
      );
    }
    const admission = this.#admit(subdomain, quotaKey);
    const id = randomUUID();
    // Until the session is in the registry, a place held in the store is given back on failure.
    let placed = false;
    try {
      if (shared) {
        await this.#place(id, subdomain, callerKeyOf(caller), quotaKey);
        placed = true;
      }
      const session = this.#build(id, subdomain, scope, quotaKey, undefined);
      session.expiry.extend(scope.credential?.expiresAt);
      res.once('close', () => this.#answered(session));
      await session.parts.server.connect(session.transport);
      admission.add(session);
      placed = false;
      try {
        session.transport.handlePost(res, post, scope);
      } catch (error) {
        // An initialize the transport refuses (its hello too large) leaves no session behind.
        this.#options.sessions.remove(id);
        await session.close(true);
        throw error;
      }
    } finally {
      admission.release();
      if (placed) await shared?.end(id).catch(() => undefined);
    }
  }

  /**
   * Takes the new session's place in the store, within the quotas over every
   * replica; the sessions it replaced retire here (the other replicas hear a
   * signal). A refusal is counted and thrown.
   */
  async #place(id: string, subdomain: string, callerKey: string, quotaKey: string): Promise<void> {
    let evicted: string[];
    try {
      evicted = await this.#options.shared!.admit({ id, subdomain, callerKey, quotaKey });
    } catch (error) {
      if (isMcphostError(error, 'ERR_SESSION_QUOTA')) {
        this.#options.onRefused?.(subdomain, 'session_quota');
      }
      throw error;
    }
    for (const gone of evicted) {
      this.#options.onEvicted?.(subdomain);
      this.#evicted(gone);
    }
  }

  /** A session was replaced past a quota (here or on another replica): it retires here. */
  #evicted(id: string): void {
    if (this.#restoring.has(id)) this.#endedWhileRestoring.add(id);
    const session = this.#options.sessions.peek(id) as TransportSession | undefined;
    if (session) this.#retire(session);
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
   * from what the store holds; `scope` is the request's that opens or rebuilds it.
   */
  #build(
    id: string,
    subdomain: string,
    scope: AdmittedScope,
    quotaKey: string,
    restored: SessionState | undefined,
  ): TransportSession {
    const { sessions, shared } = this.#options;
    const caller = scope.caller;
    let hello: ClientHello | undefined = restored?.hello;
    const parts = this.#options.serverFor(subdomain, restored?.features);
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
      holdDetachedStream: (drop) => this.#options.resumeBudget.hold(subdomain, quotaKey, drop),
      relay: shared && ((message) => shared.relay(id, message)),
      onInitialized: async (clientHello) => {
        hello = clientHello;
        await shared?.fill(id, stateOf());
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
      credential: scope.credential,
      // Only this copy retires (a request elsewhere may have moved the end on), and
      // the calls it is answering finish: they were admitted while the credential held.
      expiry: new CredentialExpiry(() => this.#retire(session)),
      // The key opens nothing again: the session ends for every replica, its place too.
      credentialRevoked: () => {
        sessions.remove(session.id);
        void session.close(true).catch(() => undefined);
      },
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
    transport.onclose = () => {
      session.expiry.cancel();
      sessions.remove(session.id);
    };
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
