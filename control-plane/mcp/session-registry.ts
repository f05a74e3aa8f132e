/**
 * Open MCP sessions: one SDK server and transport each, bound to the hosted
 * server (subdomain) and the caller that opened it. Reusing them is what keeps
 * `tools/call` cheap — nothing is built per request. Idle sessions are closed.
 *
 * Sessions are a shared resource, so they are partitioned: a caller may hold
 * `maxPerCaller` sessions on one server, a server `maxPerServer`, the service
 * `maxSessions`. A new session past a quota takes the place of the least
 * recently used *idle* session of the same server (the same caller's first);
 * when there is none, it is refused. A session answering a request is never
 * evicted. Only at the service-wide cap may a server's idle session make room
 * for another server's, and then only from the server holding the most
 * sessions, when it holds more than the newcomer's server: a flood on one
 * server costs that server its sessions, never a quieter one.
 *
 * This registry counts what this process holds. With replicas (PostgreSQL)
 * the quotas per caller and per server are held where every replica's
 * sessions are: in the store, when a session is created (shared-sessions.ts);
 * here they bound this replica's memory, and a session evicted here (and
 * nowhere else) is only forgotten by this replica — it is still a session
 * within its quotas, which the next request rebuilds.
 */
import { McphostError } from '../errors.js';
import type { ResourceChanges } from './resource-updates.js';

export interface McpSession {
  readonly id: string;
  readonly subdomain: string;
  /** Identity that opened the session; later requests must present the same one. */
  readonly callerKey: string;
  /** Whom the session counts against in the per-caller quota (`quotaKeyOf`). */
  readonly quotaKey: string;
  lastUsed: number;
  /** Requests of this session being answered (calls running); such a session is never evicted. */
  running: number;
  /**
   * Closes the session here; `everywhere` also ends it for every replica
   * (DELETE, its server closed), as opposed to this replica
   * forgetting its copy (idle here, evicted here, shutting down).
   */
  close(everywhere: boolean): Promise<void>;
  /** Tells the client its tool list changed (no-op when it listens on no stream). */
  notifyToolsChanged(): void;
  /** Tells the client its prompt list changed (when the session has prompts). */
  notifyPromptsChanged(): void;
  /** Tells the client its resource or template list changed (when the session has resources). */
  notifyResourcesChanged(): void;
  /** Sends `notifications/resources/updated` for each subscribed URI the changes touched. */
  notifyResourcesUpdated(changes: ResourceChanges): void;
}

export interface SessionRegistryOptions {
  /** A session unused this long (and answering nothing) is closed, in ms. */
  idleMs: number;
  /** Sessions at most, over all servers. */
  maxSessions: number;
  /** Sessions at most on one hosted server. */
  maxPerServer: number;
  /** Sessions at most of one caller on one hosted server. */
  maxPerCaller: number;
  /** Told of every session closed to make room for another (same server). */
  onEvict?: (session: McpSession) => void;
  /**
   * Told when a server's sessions are ended (`closeSubdomain`), so that those
   * held only by other replicas end too.
   */
  onServerClosed?: (subdomain: string) => void;
  now?: () => number;
}

/** A place held for a session being opened; `add` fills it, `release` gives it back. */
export interface SessionAdmission {
  add(session: McpSession): void;
  /** Gives the place back unless `add` used it (call it in `finally`). */
  release(): void;
}

export class SessionRegistry {
  readonly #sessions = new Map<string, McpSession>();
  // Per server, in least-recently-used order (re-inserted on use).
  readonly #byServer = new Map<string, Map<string, McpSession>>();
  // Sessions plus admissions not yet filled, per server, per [server, caller] and in all.
  readonly #serverCounts = new Map<string, number>();
  readonly #callerCounts = new Map<string, number>();
  #pending = 0;
  readonly #options: Required<Omit<SessionRegistryOptions, 'onEvict' | 'onServerClosed'>> &
    Pick<SessionRegistryOptions, 'onEvict' | 'onServerClosed'>;
  #sweeper: NodeJS.Timeout | undefined;

  constructor(options: SessionRegistryOptions) {
    for (const name of ['idleMs', 'maxSessions', 'maxPerServer', 'maxPerCaller'] as const) {
      if (!(options[name] > 0)) throw new TypeError(`SessionRegistry: ${name} must be positive`);
    }
    this.#options = { ...options, now: options.now ?? Date.now };
  }

  /** Starts the periodic sweep of idle sessions. */
  start(): void {
    this.#sweeper = setInterval(() => this.sweep(), Math.min(this.#options.idleMs, 60_000));
    this.#sweeper.unref();
  }

  get size(): number {
    return this.#sessions.size;
  }

  /**
   * Holds a place for a new session of `quotaKey` on `subdomain`, evicting an
   * idle session of the same server when a quota is reached. Throws
   * ERR_SESSION_QUOTA (caller or server quota, all busy) or ERR_NO_CAPACITY
   * (service-wide cap, this server's sessions all busy).
   */
  admit(subdomain: string, quotaKey: string): SessionAdmission {
    const { maxPerCaller, maxPerServer, maxSessions } = this.#options;
    const callerCount = () => this.#callerCounts.get(callerSlot(subdomain, quotaKey)) ?? 0;
    const ownIdle = (s: McpSession) => s.quotaKey === quotaKey;
    if (callerCount() >= maxPerCaller && !this.#evictIdle(subdomain, ownIdle)) {
      throw new McphostError(
        'ERR_SESSION_QUOTA',
        `too many sessions: this caller holds ${maxPerCaller} sessions on this server, all busy; close one or retry later`,
      );
    }
    if (
      (this.#serverCounts.get(subdomain) ?? 0) >= maxPerServer &&
      !this.#evictIdle(subdomain, ownIdle) &&
      !this.#evictIdle(subdomain, () => true)
    ) {
      throw new McphostError(
        'ERR_SESSION_QUOTA',
        `too many sessions: this server holds ${maxPerServer} sessions, all busy; retry later`,
      );
    }
    if (this.#sessions.size + this.#pending >= maxSessions) {
      this.sweep();
      if (
        this.#sessions.size + this.#pending >= maxSessions &&
        !this.#evictIdle(subdomain, ownIdle) &&
        !this.#evictIdle(subdomain, () => true) &&
        !this.#evictFromLargest(subdomain)
      ) {
        throw new McphostError(
          'ERR_NO_CAPACITY',
          'the service holds as many MCP sessions as it may; retry later',
        );
      }
    }
    this.#count(subdomain, quotaKey, 1);
    this.#pending += 1;
    let held = true;
    const giveBack = () => {
      if (!held) return false;
      held = false;
      this.#count(subdomain, quotaKey, -1);
      this.#pending -= 1;
      return true;
    };
    return {
      add: (session) => {
        if (session.subdomain !== subdomain || session.quotaKey !== quotaKey) {
          throw new TypeError('SessionRegistry: a session must fill its own admission');
        }
        if (!giveBack()) throw new TypeError('SessionRegistry: admission already used');
        this.#insert(session);
      },
      release: () => void giveBack(),
    };
  }

  /** The session without marking it used (to check whom it belongs to first). */
  peek(id: string): McpSession | undefined {
    return this.#sessions.get(id);
  }

  /** The session, marked as used; undefined when unknown or expired. */
  use(id: string): McpSession | undefined {
    const session = this.#sessions.get(id);
    if (!session) return undefined;
    if (this.#expired(session, this.#options.now())) {
      void this.#drop(session, false);
      return undefined;
    }
    session.lastUsed = this.#options.now();
    const server = this.#byServer.get(session.subdomain);
    server?.delete(id);
    server?.set(id, session);
    return session;
  }

  /** The ids of every session held. */
  ids(): string[] {
    return [...this.#sessions.keys()];
  }

  /** The ids of the sessions answering a request now. */
  running(): string[] {
    return [...this.#sessions.values()].filter((s) => s.running > 0).map((s) => s.id);
  }

  /** Forgets a session (its transport closed). */
  remove(id: string): void {
    const session = this.#sessions.get(id);
    if (session) this.#forget(session);
  }

  /** Sessions of one hosted server. */
  forSubdomain(subdomain: string): McpSession[] {
    return [...(this.#byServer.get(subdomain)?.values() ?? [])];
  }

  /** Closes sessions idle here for longer than the limit (never one answering a request). */
  sweep(): void {
    const now = this.#options.now();
    for (const session of this.#sessions.values()) {
      if (this.#expired(session, now)) void this.#drop(session, false);
    }
  }

  /** Ends the sessions of one hosted server everywhere (deleted, deactivated, or its security changed). */
  async closeSubdomain(subdomain: string): Promise<void> {
    this.#options.onServerClosed?.(subdomain);
    await Promise.all(this.forSubdomain(subdomain).map((s) => this.#drop(s, true)));
  }

  /** Closes every session held here (shutting down: other replicas go on serving them). */
  async closeAll(): Promise<void> {
    clearInterval(this.#sweeper);
    await Promise.all([...this.#sessions.values()].map((s) => this.#drop(s, false)));
  }

  #expired(session: McpSession, now: number): boolean {
    return session.running === 0 && now - session.lastUsed > this.#options.idleMs;
  }

  /** Closes the least recently used idle session of `subdomain` that `matches`; false if none. */
  #evictIdle(subdomain: string, matches: (session: McpSession) => boolean): boolean {
    for (const session of this.#byServer.get(subdomain)?.values() ?? []) {
      if (session.running === 0 && matches(session)) {
        // Here only: idle here says nothing of a call another replica may be running for it.
        void this.#drop(session, false);
        this.#options.onEvict?.(session);
        return true;
      }
    }
    return false;
  }

  /** Closes an idle session of the server holding the most sessions, if it holds more than `subdomain`. */
  #evictFromLargest(subdomain: string): boolean {
    const own = this.#serverCounts.get(subdomain) ?? 0;
    const largest = [...this.#serverCounts].sort((a, b) => b[1] - a[1]);
    for (const [server, count] of largest) {
      if (count <= own + 1) return false;
      if (this.#evictIdle(server, () => true)) return true;
    }
    return false;
  }

  #insert(session: McpSession): void {
    session.lastUsed = this.#options.now();
    this.#sessions.set(session.id, session);
    let server = this.#byServer.get(session.subdomain);
    if (!server) this.#byServer.set(session.subdomain, (server = new Map()));
    server.set(session.id, session);
    this.#count(session.subdomain, session.quotaKey, 1);
  }

  #forget(session: McpSession): void {
    if (!this.#sessions.delete(session.id)) return;
    const server = this.#byServer.get(session.subdomain);
    server?.delete(session.id);
    if (server?.size === 0) this.#byServer.delete(session.subdomain);
    this.#count(session.subdomain, session.quotaKey, -1);
  }

  #count(subdomain: string, quotaKey: string, delta: 1 | -1): void {
    adjust(this.#serverCounts, subdomain, delta);
    adjust(this.#callerCounts, callerSlot(subdomain, quotaKey), delta);
  }

  #drop(session: McpSession, everywhere: boolean): Promise<void> {
    this.#forget(session);
    return session.close(everywhere).catch(() => undefined);
  }
}

function callerSlot(subdomain: string, quotaKey: string): string {
  return JSON.stringify([subdomain, quotaKey]);
}

function adjust(counts: Map<string, number>, key: string, delta: number): void {
  const next = (counts.get(key) ?? 0) + delta;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}
