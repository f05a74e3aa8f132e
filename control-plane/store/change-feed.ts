/**
 * Tells everyone who caches configuration that it changed: listeners in this
 * process after every committed write, and — with PostgreSQL — the other
 * control-plane replicas, through NOTIFY on a channel that each store LISTENs
 * to on a dedicated connection. A change names what it touched (a server, and
 * the one tool, prompt or resource when it was one), so a save costs every
 * replica a reload of that alone. A lost listener connection is re-established
 * and then reported as "everything changed", since notifications may have been
 * missed meanwhile. The same connection LISTENs to a second channel for
 * signals about MCP sessions (see session-records.ts), which go to other
 * replicas only.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import {
  decodeSessionSignal,
  encodeSessionSignal,
  type SentSessionSignal,
  type SessionSignal,
} from './session-records.js';
import { messageOf } from './store-dialect.js';

/** What part of a server's configuration changed; `resync` means anything may have. */
export type StoreChangeKind =
  | 'server'
  | 'tools'
  | 'prompts'
  | 'resources'
  | 'secrets'
  | 'pool'
  | 'meta'
  | 'api-keys'
  | 'resync';

/**
 * One change notification; `subdomain: null` means every server. `name`
 * names the one tool, prompt or resource a write of that kind changed, so a
 * cache reloads it alone; absent, any of the server's of that kind may have.
 */
export interface StoreChange {
  readonly subdomain: string | null;
  readonly kind: StoreChangeKind;
  readonly name?: string;
}

/** Default PostgreSQL NOTIFY channel of configuration changes. */
export const DEFAULT_CHANGE_CHANNEL = 'mcphost_config_changed';

/** Appended to the change channel to name the channel of session signals. */
const SESSION_CHANNEL_SUFFIX = '_sessions';

/** Longest change channel whose session channel is still a PostgreSQL identifier (63 bytes). */
export const CHANGE_CHANNEL_MAX_LENGTH = 63 - SESSION_CHANNEL_SUFFIX.length;

/** The NOTIFY channel of session signals beside a change channel. */
export function sessionChannelOf(changeChannel: string): string {
  return `${changeChannel}${SESSION_CHANNEL_SUFFIX}`;
}

const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 30_000;

/** Fan-out of store changes to in-process listeners, plus the optional PostgreSQL listener. */
export class ChangeFeed {
  /** Identifies this store's own notifications so they are not delivered twice. */
  readonly origin = randomUUID();
  readonly #listeners = new Set<(change: StoreChange) => void>();
  readonly #sessionListeners = new Set<(signal: SessionSignal) => void>();
  readonly #log: (message: string) => void;
  #remote: PostgresChangeListener | undefined;

  constructor(log: (message: string) => void) {
    this.#log = log;
  }

  /** Adds a listener; returns its removal. */
  subscribe(listener: (change: StoreChange) => void): () => void {
    if (typeof listener !== 'function') throw new TypeError('onChange needs a listener function');
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Delivers a change to every listener; a throwing listener is logged, not propagated. */
  emit(change: StoreChange): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(change);
      } catch (error) {
        this.#log(`store: a change listener failed: ${messageOf(error)}`);
      }
    }
  }

  /** Adds a listener of other replicas' session signals; returns its removal. */
  subscribeToSessions(listener: (signal: SessionSignal) => void): () => void {
    if (typeof listener !== 'function') {
      throw new TypeError('onSessionSignal needs a listener function');
    }
    this.#sessionListeners.add(listener);
    return () => this.#sessionListeners.delete(listener);
  }

  /** The NOTIFY payload of a session signal sent by this store. */
  sessionPayload(signal: SentSessionSignal): string {
    return encodeSessionSignal(this.origin, signal);
  }

  /** The NOTIFY payload of a change made by this store. */
  payload(change: StoreChange): string {
    // Well under NOTIFY's 8000 bytes: a subdomain is at most 63 characters, a name 128.
    return JSON.stringify({
      origin: this.origin,
      subdomain: change.subdomain,
      kind: change.kind,
      ...(change.name === undefined ? {} : { name: change.name }),
    });
  }

  /**
   * Starts listening to other replicas' changes on `channel` and their
   * session signals on its session channel; resolves once LISTEN is in place.
   */
  async listenToPostgres(databaseUrl: string, channel: string): Promise<void> {
    const receivers = new Map<string, (payload: string | undefined) => void>([
      [channel, (payload) => this.#receive(payload)],
      [sessionChannelOf(channel), (payload) => this.#receiveSessionSignal(payload)],
    ]);
    this.#remote = new PostgresChangeListener(databaseUrl, receivers, this.#log);
    await this.#remote.start();
  }

  /** Stops the PostgreSQL listener and forgets every listener. */
  async close(): Promise<void> {
    this.#listeners.clear();
    this.#sessionListeners.clear();
    await this.#remote?.stop();
  }

  #receiveSessionSignal(payload: string | undefined): void {
    if (payload === undefined) {
      this.#emitSessionSignal({ kind: 'resync' });
      return;
    }
    const decoded = decodeSessionSignal(payload);
    if (decoded === undefined) {
      // Another writer on the channel (or a newer version): not ours to act on.
      this.#log(`store: ignored a malformed session signal: ${payload.slice(0, 200)}`);
      return;
    }
    if (decoded.origin !== this.origin) this.#emitSessionSignal(decoded.signal);
  }

  #emitSessionSignal(signal: SessionSignal): void {
    for (const listener of [...this.#sessionListeners]) {
      try {
        listener(signal);
      } catch (error) {
        this.#log(`store: a session signal listener failed: ${messageOf(error)}`);
      }
    }
  }

  #receive(payload: string | undefined): void {
    if (payload === undefined) {
      this.emit({ subdomain: null, kind: 'resync' });
      return;
    }
    try {
      const parsed = JSON.parse(payload) as {
        origin?: unknown;
        subdomain?: unknown;
        kind?: unknown;
        name?: unknown;
      };
      if (parsed.origin === this.origin) return;
      const subdomain = typeof parsed.subdomain === 'string' ? parsed.subdomain : null;
      const kind = typeof parsed.kind === 'string' ? (parsed.kind as StoreChangeKind) : 'resync';
      // A change without a name (an older replica's) reloads the whole kind.
      const name = typeof parsed.name === 'string' ? { name: parsed.name } : {};
      this.emit({ subdomain, kind, ...name });
    } catch {
      this.emit({ subdomain: null, kind: 'resync' });
    }
  }
}

/** One dedicated connection that LISTENs to every channel and reconnects with backoff when lost. */
class PostgresChangeListener {
  #client: pg.Client | undefined;
  #stopped = false;
  #retryTimer: NodeJS.Timeout | undefined;
  #delayMs = RECONNECT_MIN_MS;

  constructor(
    private readonly databaseUrl: string,
    /**
     * What each channel's payloads are delivered to; each is called with
     * undefined after a reconnect (anything may have changed).
     */
    private readonly receivers: ReadonlyMap<string, (payload: string | undefined) => void>,
    private readonly log: (message: string) => void,
  ) {}

  async start(): Promise<void> {
    await this.#connect();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#retryTimer);
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => undefined);
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.databaseUrl });
    client.on('notification', (message) => {
      this.receivers.get(message.channel)?.(message.payload ?? '');
    });
    client.on('error', (error) => this.#lost(client, error));
    client.on('end', () => this.#lost(client, new Error('connection ended')));
    try {
      await client.connect();
      for (const channel of this.receivers.keys()) {
        await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      }
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.#stopped) {
      await client.end();
      return;
    }
    this.#client = client;
    this.#delayMs = RECONNECT_MIN_MS;
  }

  #lost(client: pg.Client, error: Error): void {
    if (this.#stopped || this.#client !== client) return;
    this.#client = undefined;
    client.end().catch(() => undefined);
    this.log(`store: lost the PostgreSQL change listener (${error.message}); reconnecting`);
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    this.#retryTimer = setTimeout(() => {
      this.#connect().then(
        () => {
          for (const deliver of this.receivers.values()) deliver(undefined);
        },
        (error) => {
          this.log(
            `store: cannot re-establish the PostgreSQL change listener: ${messageOf(error)}`,
          );
          this.#delayMs = Math.min(this.#delayMs * 2, RECONNECT_MAX_MS);
          if (!this.#stopped) this.#scheduleReconnect();
        },
      );
    }, this.#delayMs);
    this.#retryTimer.unref();
  }
}
