/**
 * Detached response streams in PostgreSQL, so that a client resumes a call
 * on whichever replica its GET reaches (call-stream.ts keeps the events in
 * memory; this is the copy the other replicas read).
 *
 * Only detached streams are archived — a response that stays connected costs
 * no write. The replica running the call appends their events in order,
 * batched, and each batch signals the other replicas (NOTIFY); a replica
 * serving a resumed GET replays what the archive holds after the client's
 * `Last-Event-ID`, then reads on at each signal (and every
 * FOLLOW_POLL_MS, in case a signal was lost) until the answer — or until the
 * stream is gone from the archive. The running replica takes a stream out
 * (`discard`) when it is over: its resume window passed, it was resumed to
 * its end there, or the resume budget dropped it.
 */
import type { ServerResponse } from 'node:http';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import type { SessionSignal, Store } from '../store/index.js';
import { ResponseStream } from './response-stream.js';

/** One event of a stream: its number, the JSON text of its message ('' for the opening marker), whether it is the answer. */
export interface StreamEvent {
  seq: number;
  message: string;
  final: boolean;
}

export interface StreamArchive {
  /** Appends events of a detached stream (in order, after those saved before). */
  save(sessionId: string, streamId: string, events: readonly StreamEvent[]): void;
  /** Takes every event of a stream out (after the appends queued before). */
  discard(sessionId: string, streamId: string): void;
  /**
   * Serves a resume of a stream another replica runs: everything after
   * `afterSeq`, then the rest as it comes. False (nothing written) when the
   * archive holds no event `afterSeq` of that stream.
   */
  follow(
    sessionId: string,
    streamId: string,
    afterSeq: number,
    res: ServerResponse,
    keepAliveMs: number,
  ): Promise<boolean>;
}

type ArchiveStore = Pick<
  Store,
  'appendMcpStreamEvents' | 'readMcpStreamEvents' | 'deleteMcpStream' | 'onSessionSignal'
>;

/** An event to append. */
type EventWrite = { kind: 'event'; sessionId: string; streamId: string } & StreamEvent;
/** What the writer does next, in order: append an event, or take a stream out. */
type ArchiveWrite = EventWrite | { kind: 'discard'; sessionId: string; streamId: string };

/** Events read at a time while following. */
const READ_BATCH = 200;
/** A follower reads again this often even without a signal, in ms. */
const FOLLOW_POLL_MS = 1000;
/** A follower that saw nothing new for this long ends its response (the longest call is 1 h). */
const FOLLOW_SILENCE_MS = 60 * 60 * 1000;

export class StoredStreamArchive implements StreamArchive {
  readonly #store: ArchiveStore;
  readonly #log: (error: unknown) => void;
  #queue: ArchiveWrite[] = [];
  #flushing = false;
  readonly #followers = new Map<string, { readOn(): void; stop(): void }>();
  readonly #unsubscribe: () => void;

  constructor(store: ArchiveStore, log: (error: unknown) => void) {
    this.#store = store;
    this.#log = log;
    this.#unsubscribe = store.onSessionSignal((signal) => this.#signalled(signal));
  }

  save(sessionId: string, streamId: string, events: readonly StreamEvent[]): void {
    for (const event of events) this.#queue.push({ kind: 'event', sessionId, streamId, ...event });
    this.#startFlush();
  }

  discard(sessionId: string, streamId: string): void {
    // Events of the stream still waiting need not be written at all.
    this.#queue = this.#queue.filter(
      (write) => write.sessionId !== sessionId || write.streamId !== streamId,
    );
    this.#queue.push({ kind: 'discard', sessionId, streamId });
    this.#startFlush();
  }

  async follow(
    sessionId: string,
    streamId: string,
    afterSeq: number,
    res: ServerResponse,
    keepAliveMs: number,
  ): Promise<boolean> {
    // The event the client saw must be there: otherwise this is not a stream we can continue.
    const first = await this.#store.readMcpStreamEvents(
      sessionId,
      streamId,
      afterSeq - 1,
      READ_BATCH,
    );
    if (first[0]?.seq !== afterSeq) return false;
    let gone = false;
    const sink = ResponseStream.eventStream(res, sessionId, keepAliveMs, () => (gone = true));
    let last = afterSeq;
    let lastEventAt = Date.now();
    const write = (events: readonly StreamEvent[]): boolean => {
      for (const event of events) {
        if (event.seq <= last) continue;
        last = event.seq;
        lastEventAt = Date.now();
        // An empty final event: every request of the stream was cancelled, nothing to answer.
        if (event.final && event.message === '') {
          sink.end();
          return true;
        }
        if (event.message === '') continue;
        const message = JSON.parse(event.message) as JSONRPCMessage;
        const id = `${streamId}.${event.seq}`;
        if (event.final) {
          sink.finish(message, id);
          return true;
        }
        sink.send(message, id);
      }
      return false;
    };
    if (write(first)) return true;
    const key = followerKey(sessionId, streamId);
    // One follower per stream: a client that resumes again replaces the earlier one.
    this.#followers.get(key)?.stop();
    let reading = false;
    let again = false;
    const stop = () => {
      clearInterval(poll);
      sink.end();
      if (this.#followers.get(key)?.readOn === readOn) this.#followers.delete(key);
    };
    const readOn = () => {
      // A call that sends nothing for this long ran out or its replica is gone.
      if (gone || sink.ended || Date.now() - lastEventAt > FOLLOW_SILENCE_MS) return stop();
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      this.#store
        .readMcpStreamEvents(sessionId, streamId, last, READ_BATCH)
        .then(async (events) => {
          if (write(events)) stop();
          else if (events.length === READ_BATCH) again = true;
          // Nothing new: the stream may have been taken out (its call ended long ago, or was dropped).
          else if (events.length === 0 && !(await this.#exists(sessionId, streamId))) stop();
        })
        .catch((error: unknown) => this.#log(error))
        .finally(() => {
          reading = false;
          if (again) {
            again = false;
            readOn();
          }
        });
    };
    this.#followers.set(key, { readOn, stop });
    const poll = setInterval(readOn, FOLLOW_POLL_MS);
    poll.unref();
    readOn();
    return true;
  }

  close(): void {
    this.#unsubscribe();
    for (const follower of [...this.#followers.values()]) follower.stop();
  }

  /** Whether the archive still holds the opening marker of a stream. */
  async #exists(sessionId: string, streamId: string): Promise<boolean> {
    return (await this.#store.readMcpStreamEvents(sessionId, streamId, -1, 1)).length > 0;
  }

  #startFlush(): void {
    if (this.#flushing) return;
    this.#flushing = true;
    void this.#flush();
  }

  /**
   * Writes the queue in order: appends a batch of events at a time, takes
   * streams out between them; a failed write is logged (a resume of its
   * stream will be refused, a leftover is pruned).
   */
  async #flush(): Promise<void> {
    while (this.#queue.length > 0) {
      const next = this.#queue[0]!;
      try {
        if (next.kind === 'discard') {
          this.#queue.shift();
          await this.#store.deleteMcpStream(next.sessionId, next.streamId);
          continue;
        }
        const end = this.#queue.findIndex((write) => write.kind === 'discard');
        const batch = this.#queue.splice(0, Math.min(READ_BATCH, end < 0 ? Infinity : end));
        await this.#store.appendMcpStreamEvents(
          batch.filter((write): write is EventWrite => write.kind === 'event'),
          true,
        );
      } catch (error) {
        this.#log(error);
      }
    }
    this.#flushing = false;
  }

  #signalled(signal: SessionSignal): void {
    if (signal.kind === 'resync') {
      for (const follower of this.#followers.values()) follower.readOn();
      return;
    }
    if (signal.kind !== 'events') return;
    this.#followers.get(followerKey(signal.session, signal.stream))?.readOn();
  }
}

function followerKey(sessionId: string, streamId: string): string {
  return `${sessionId}/${streamId}`;
}
