/**
 * Open MCP sessions: one SDK server and transport each, bound to the hosted
 * server (subdomain) and the caller that opened it. Reusing them is what keeps
 * `tools/call` lean — nothing is built per request. Idle sessions are closed;
 * past the cap the least recently used one goes.
 */

export interface McpSession {
  readonly id: string;
  readonly subdomain: string;
  /** Identity that opened the session; later requests must present the same one. */
  readonly callerKey: string;
  lastUsed: number;
  close(): Promise<void>;
  /** Tells the client its tool list changed (no-op when it listens on no stream). */
  notifyToolsChanged(): void;
}

export interface SessionRegistryOptions {
  /** A session unused this long is closed, in ms. */
  idleMs: number;
  /** Sessions at most; the least recently used is closed past it. */
  maxSessions: number;
  now?: () => number;
}

export class SessionRegistry {
  // A Map keeps insertion order; re-inserting on use makes it an LRU list.
  readonly #sessions = new Map<string, McpSession>();
  readonly #idleMs: number;
  readonly #maxSessions: number;
  readonly #now: () => number;
  #sweeper: NodeJS.Timeout | undefined;

  constructor(options: SessionRegistryOptions) {
    if (!(options.idleMs > 0) || !(options.maxSessions > 0)) {
      throw new TypeError('SessionRegistry: idleMs and maxSessions must be positive');
    }
    this.#idleMs = options.idleMs;
    this.#maxSessions = options.maxSessions;
    this.#now = options.now ?? Date.now;
  }

  /** Starts the periodic sweep of idle sessions. */
  start(): void {
    this.#sweeper = setInterval(() => this.sweep(), Math.min(this.#idleMs, 60_000));
    this.#sweeper.unref();
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** The session without marking it used (to check whom it belongs to first). */
  peek(id: string): McpSession | undefined {
    return this.#sessions.get(id);
  }

  /** The session, marked as used; undefined when unknown or expired. */
  use(id: string): McpSession | undefined {
    const session = this.#sessions.get(id);
    if (!session) return undefined;
    if (this.#now() - session.lastUsed > this.#idleMs) {
      this.#drop(session);
      return undefined;
    }
    session.lastUsed = this.#now();
    this.#sessions.delete(id);
    this.#sessions.set(id, session);
    return session;
  }

  add(session: McpSession): void {
    session.lastUsed = this.#now();
    this.#sessions.set(session.id, session);
    while (this.#sessions.size > this.#maxSessions) {
      const oldest = this.#sessions.values().next().value;
      if (!oldest) break;
      this.#drop(oldest);
    }
  }

  /** Forgets a session (its transport closed). */
  remove(id: string): void {
    this.#sessions.delete(id);
  }

  /** Sessions of one hosted server. */
  forSubdomain(subdomain: string): McpSession[] {
    return [...this.#sessions.values()].filter((s) => s.subdomain === subdomain);
  }

  /** Closes sessions idle for longer than the limit. */
  sweep(): void {
    const now = this.#now();
    for (const session of this.#sessions.values()) {
      if (now - session.lastUsed > this.#idleMs) this.#drop(session);
    }
  }

  /** Closes the sessions of one hosted server (deleted, deactivated, or its security changed). */
  async closeSubdomain(subdomain: string): Promise<void> {
    await Promise.all(this.forSubdomain(subdomain).map((s) => this.#drop(s)));
  }

  async closeAll(): Promise<void> {
    clearInterval(this.#sweeper);
    await Promise.all([...this.#sessions.values()].map((s) => this.#drop(s)));
  }

  #drop(session: McpSession): Promise<void> {
    this.#sessions.delete(session.id);
    return session.close().catch(() => undefined);
  }
}
