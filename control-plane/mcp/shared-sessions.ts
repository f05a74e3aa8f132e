/**
 * MCP sessions every replica can serve (PostgreSQL): the session's row is
 * written when its `initialize` arrives — within the caller's and the
 * server's session quotas, counted over every replica's sessions in the
 * store (`admit`) — filled in before the initialize is answered, read by a
 * replica that meets the session for the first time, rewritten when the
 * client changes a setting, and deleted when the session ends anywhere
 * (DELETE, its server's security changed, replaced past a quota). The
 * replicas tell each other through signals (NOTIFY): a session ended,
 * evicted or changed, a client message relayed to the replica that awaits
 * it, events of a detached stream.
 *
 * Nothing here is on the path of a request of a session this replica holds:
 * its use is only noted, and the notes are written in one statement every
 * TOUCH_EVERY_MS; rows unused for MCP_SESSION_IDLE_MS (everywhere) are pruned.
 */
import { JSONRPCMessageSchema } from '@modelcontextprotocol/core';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { McphostError } from '../errors.js';
import type { McpSessionRow, SessionSignal, Store } from '../store/index.js';
import { decodeSessionState, encodeSessionState, type SessionState } from './session-state.js';
import { StoredStreamArchive } from './stream-archive.js';

type SessionStore = Pick<
  Store,
  | 'admitMcpSession'
  | 'getMcpSession'
  | 'updateMcpSessionState'
  | 'deleteMcpSession'
  | 'deleteMcpSessionsOf'
  | 'touchMcpSessions'
  | 'pruneMcpSessions'
  | 'pruneMcpStreamEvents'
  | 'deleteMcpStream'
  | 'relayMcpSessionMessage'
  | 'takeMcpSessionMessage'
  | 'appendMcpStreamEvents'
  | 'readMcpStreamEvents'
  | 'onSessionSignal'
>;

/** What the endpoint does when another replica signals about a session. */
export interface SessionSignalHandlers {
  /** Whether this replica holds the session (only then is anything read for it). */
  holds(sessionId: string): boolean;
  /** Every session this replica holds. */
  held(): string[];
  /** The sessions answering a request here now (kept alive in the store while they run). */
  running(): string[];
  /** The session ended on another replica: close it here. */
  ended(sessionId: string): void;
  /** The session was replaced past a quota: close it here once the requests it is answering end. */
  evicted(sessionId: string): void;
  /** Its settings changed there (or, with `state` undefined, its row is gone). */
  changed(sessionId: string, state: SessionState | undefined): void;
  /** A client message for this replica arrived there. */
  message(sessionId: string, message: JSONRPCMessage): void;
}

export interface SharedSessionsOptions {
  /** Sessions unused this long, on every replica, are deleted; in ms. */
  idleMs: number;
  /** Archived stream events are kept this long after their answer, in ms. */
  resumeWindowMs: number;
  /** Sessions one caller may hold on one server, over every replica. */
  maxPerCaller: number;
  /** Sessions one server may hold, over every replica. */
  maxPerServer: number;
  /** Failures of background work (touch, prune, relay), logged by the caller. */
  onError(error: unknown, what: string): void;
}

/** A stored session: its row and decoded state. */
export interface StoredSession {
  row: McpSessionRow;
  state: SessionState;
}

const TOUCH_EVERY_MS = 15_000;
/** The largest client message relayed to another replica (an elicitation or sampling answer). */
const MAX_RELAYED_CHARACTERS = 256 * 1024;
/** The longest a call runs (a tool's `timeoutMs` at most): a cut stream's events outlive it. */
const LONGEST_CALL_MS = 60 * 60 * 1000;
const PRUNE_EVERY_MS = 60_000;

export class SharedSessions {
  readonly archive: StoredStreamArchive;
  readonly #store: SessionStore;
  readonly #options: SharedSessionsOptions;
  /** How often uses (and the sessions answering requests) are written, in ms. */
  readonly #touchEveryMs: number;
  readonly #touched = new Set<string>();
  /**
   * The last admission of each server here: they run one at a time, so a flood
   * of initializes on one server holds at most one store connection (waiting
   * for the server's lock), never the pool every tenant shares.
   */
  readonly #admitting = new Map<string, Promise<unknown>>();
  readonly #timers: NodeJS.Timeout[] = [];
  #unsubscribe: (() => void) | undefined;

  constructor(store: SessionStore, options: SharedSessionsOptions) {
    this.#store = store;
    this.#options = options;
    this.#touchEveryMs = Math.min(TOUCH_EVERY_MS, Math.max(1000, options.idleMs / 4));
    this.archive = new StoredStreamArchive(store, (error) =>
      options.onError(error, 'archiving a detached stream'),
    );
  }

  /** Starts following the other replicas' signals, writing uses and pruning. */
  start(handlers: SessionSignalHandlers): void {
    this.#unsubscribe = this.#store.onSessionSignal((signal) => this.#signalled(signal, handlers));
    const every = (ms: number, work: () => void) => {
      const timer = setInterval(work, ms);
      timer.unref();
      this.#timers.push(timer);
    };
    every(this.#touchEveryMs, () => this.#flushTouches(handlers));
    every(Math.min(PRUNE_EVERY_MS, this.#options.idleMs), () => this.#prune());
  }

  async close(): Promise<void> {
    for (const timer of this.#timers.splice(0)) clearInterval(timer);
    this.#unsubscribe?.();
    this.archive.close();
    await this.#flushTouches();
  }

  /**
   * Holds a place for a new session in the store, within its caller's and
   * its server's quotas over every replica: past one, older sessions are
   * replaced (see admitMcpSession) and their ids returned; ERR_SESSION_QUOTA
   * when the server's sessions are all in use. The row has no state until
   * `fill` (no replica serves it before).
   */
  admit(row: Omit<McpSessionRow, 'state' | 'createdAt' | 'lastUsedAt'>): Promise<string[]> {
    const { subdomain } = row;
    const admitted = (this.#admitting.get(subdomain) ?? Promise.resolve()).then(() =>
      this.#store.admitMcpSession(
        { ...row, state: '' },
        {
          perCaller: this.#options.maxPerCaller,
          perServer: this.#options.maxPerServer,
          // A session answering a request is written as used at every touch: two
          // intervals without one, and it is neither busy nor in use.
          inUseMs: 2 * this.#touchEveryMs + 1000,
        },
      ),
    );
    const settled = admitted.catch(() => undefined);
    this.#admitting.set(subdomain, settled);
    void settled.then(() => {
      if (this.#admitting.get(subdomain) === settled) this.#admitting.delete(subdomain);
    });
    return admitted;
  }

  /** Records the state of a session `admit` placed (before its initialize is answered). */
  async fill(id: string, state: SessionState): Promise<void> {
    if (!(await this.#store.updateMcpSessionState(id, encodeSessionState(state)))) {
      throw new McphostError(
        'ERR_SESSION_NOT_FOUND',
        'Session not found: it was replaced by a newer session of this caller before it was initialized',
      );
    }
  }

  /** The session as stored; undefined when there is none (or its state is not readable). */
  async load(id: string): Promise<StoredSession | undefined> {
    const row = await this.#store.getMcpSession(id);
    const state = row && decodeSessionState(row.state);
    return row && state ? { row, state } : undefined;
  }

  /** Records changed settings; the other replicas holding the session take them. */
  async save(id: string, state: SessionState): Promise<void> {
    await this.#store.updateMcpSessionState(id, encodeSessionState(state));
  }

  /** Ends the session on every replica. */
  async end(id: string): Promise<void> {
    this.#touched.delete(id);
    await this.#store.deleteMcpSession(id);
  }

  /** Ends every session of a server on every replica (its security changed, or it is gone). */
  endServer(subdomain: string): void {
    this.#store
      .deleteMcpSessionsOf(subdomain)
      .catch((error: unknown) => this.#options.onError(error, 'ending the sessions of a server'));
  }

  /** Notes that the session was used here (written with the next batch). */
  touch(id: string): void {
    this.#touched.add(id);
  }

  /**
   * Sends a message to whichever replica holds `sessionId` (a session, or
   * another relay address such as a parked call's, park-relay.ts); one of more
   * than `maxCharacters` of JSON is dropped, and logged.
   */
  relay(
    sessionId: string,
    message: JSONRPCMessage,
    maxCharacters: number = MAX_RELAYED_CHARACTERS,
  ): void {
    const text = JSON.stringify(message);
    if (text.length > maxCharacters) {
      this.#options.onError(
        new Error(`a message of ${text.length} characters is over ${maxCharacters}`),
        'relaying a message',
      );
      return;
    }
    this.#store
      .relayMcpSessionMessage(sessionId, text)
      .catch((error: unknown) => this.#options.onError(error, 'relaying a client message'));
  }

  async #flushTouches(handlers?: SessionSignalHandlers): Promise<void> {
    for (const id of handlers?.running() ?? []) this.#touched.add(id);
    if (this.#touched.size === 0) return;
    const ids = [...this.#touched];
    this.#touched.clear();
    await this.#store
      .touchMcpSessions(ids)
      .catch((error: unknown) => this.#options.onError(error, 'recording session use'));
  }

  #prune(): void {
    const { idleMs, resumeWindowMs } = this.#options;
    Promise.all([
      this.#store.pruneMcpSessions(idleMs),
      // The replica running a stream takes it out when it is over; this is for
      // replicas that died: answered streams at the resume window, others by their
      // newest event (a cut call may be silent until its answer).
      this.#store.pruneMcpStreamEvents(LONGEST_CALL_MS + resumeWindowMs, resumeWindowMs),
    ]).catch((error: unknown) => this.#options.onError(error, 'pruning sessions'));
  }

  #signalled(signal: SessionSignal, handlers: SessionSignalHandlers): void {
    switch (signal.kind) {
      case 'ended':
        if (handlers.holds(signal.session)) handlers.ended(signal.session);
        return;
      case 'evicted':
        if (handlers.holds(signal.session)) handlers.evicted(signal.session);
        return;
      case 'changed':
        if (handlers.holds(signal.session)) this.#reload(signal.session, handlers);
        return;
      case 'message':
        if (handlers.holds(signal.session)) this.#deliver(signal.session, signal.ref, handlers);
        return;
      case 'resync':
        // Signals may have been missed while the listener was away: every session held is re-read.
        for (const id of handlers.held()) this.#reload(id, handlers);
        return;
      case 'events':
        return; // the archive's followers
    }
  }

  #reload(id: string, handlers: SessionSignalHandlers): void {
    this.load(id).then(
      (stored) => handlers.changed(id, stored?.state),
      (error: unknown) => this.#options.onError(error, 'reloading a session'),
    );
  }

  #deliver(sessionId: string, ref: string, handlers: SessionSignalHandlers): void {
    this.#store.takeMcpSessionMessage(ref).then(
      (relayed) => {
        if (relayed?.sessionId !== sessionId) return;
        const parsed = JSONRPCMessageSchema.safeParse(JSON.parse(relayed.message));
        if (parsed.success) handlers.message(sessionId, parsed.data);
      },
      (error: unknown) => this.#options.onError(error, 'reading a relayed message'),
    );
  }
}
