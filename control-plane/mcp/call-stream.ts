/**
 * The answer to one POST as a stream of events that can outlive its HTTP
 * response (Streamable HTTP resumability, SEP-1699).
 *
 * Of a session that negotiated 2025-11-25 or later, a POST of one request is
 * resumable: when its response turns into an SSE stream it opens with a
 * priming event (`<stream>.0`, with `retry`), and every later event carries
 * `<stream>.<seq>`. The events are kept in memory while the call runs. When
 * the response goes away before the answer — the client's connection broke,
 * or tool code asked for it (`sdk.closeStream()`) — the call goes on
 * *detached*: its events are still numbered and kept (and, with PostgreSQL,
 * archived so another replica can replay them), and a GET with
 * `Last-Event-ID` attaches a new response that first receives what followed
 * that event. A detached stream is kept until its answer was sent and
 * `resumeWindowMs` passed, then forgotten here and in the archive.
 *
 * Only what a resume can still use is kept. A response cut before its
 * priming event went out left the client no id to resume with: it is
 * abandoned like a stream that is not resumable. A detached stream counts
 * against its caller's and its server's bounds (resume-budget.ts), which may
 * drop it: it is then forgotten, and its call — whose answer nobody can
 * receive any more — cancelled.
 *
 * A plain call is unaffected: an answer sent while the response is still
 * undecided goes out as JSON and nothing is kept. A stream that is not
 * resumable (older protocol versions, batches) behaves as before: when its
 * response goes away, its requests are abandoned (cancelled).
 */
import type { ServerResponse } from 'node:http';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { McphostError } from '../errors.js';
import { eventCost, type ResumeHold } from './resume-budget.js';
import { ResponseStream } from './response-stream.js';
import type { StreamArchive, StreamEvent } from './stream-archive.js';

/** Events kept of one stream; older ones are dropped (a resume from before them is refused). */
const MAX_KEPT_EVENTS = 1000;

/** What a resumable stream needs beyond its response. */
export interface Resumability {
  sessionId: string;
  streamId: string;
  retryMs: number;
  /** How long a detached stream is kept after its answer, in ms. */
  resumeWindowMs: number;
  /** Where a detached stream's events go for other replicas (PostgreSQL); absent with one process. */
  archive?: StreamArchive;
  /** Counts the stream, once detached, against its caller's and server's bounds; `drop` when over. */
  hold(drop: () => void): ResumeHold;
  /** The stream is over and nobody can resume it any more: forget it. */
  onExpired(): void;
}

export class CallStream {
  readonly #sessionId: string;
  readonly #keepAliveMs: number;
  readonly #resumability: Resumability | undefined;
  readonly #onAbandoned: () => void;
  #sink: ResponseStream | undefined;
  readonly #kept: StreamEvent[] = [];
  #seq = 0;
  /** The client holds an id of this stream (a priming event reached it, or it resumed it). */
  #known = false;
  /** While detached: the budget's count of it. */
  #hold: ResumeHold | undefined;
  /** Events up to this one are counted and archived already (a stream may detach, resume here, and detach again). */
  #heldUpTo = -1;
  /** Something of the stream went to the archive (and must be taken out when it ends). */
  #archived = false;
  #finished = false;
  #detached = false;
  #expired = false;
  #expiry: NodeJS.Timeout | undefined;

  constructor(
    res: ServerResponse,
    sessionId: string,
    keepAliveMs: number,
    resumability: Resumability | undefined,
    onAbandoned: () => void,
  ) {
    this.#sessionId = sessionId;
    this.#keepAliveMs = keepAliveMs;
    this.#resumability = resumability;
    this.#onAbandoned = onAbandoned;
    this.#sink = new ResponseStream(
      res,
      sessionId,
      keepAliveMs,
      () => this.#responseGone(),
      resumability && { id: `${resumability.streamId}.0`, retryMs: resumability.retryMs },
    );
  }

  get resumable(): boolean {
    return this.#resumability !== undefined;
  }

  /** Sends a message before the answer. */
  send(message: JSONRPCMessage): void {
    if (this.#finished) return;
    const event = this.#record(message, false);
    this.#sink?.send(message, event && eventIdOf(this.#resumability!, event.seq));
  }

  /** Sends the answer (or nothing, when every request was cancelled) and ends the stream. */
  finish(answer: JSONRPCMessage | JSONRPCMessage[] | undefined): void {
    if (this.#finished) return;
    this.#finished = true;
    const sink = this.#sink;
    if (!this.#resumability || (sink && !sink.streaming && !this.#detached)) {
      // Plain JSON, or a stream nobody will resume: nothing to keep.
      sink?.finish(answer);
      this.#expire();
      return;
    }
    const event = this.#record(Array.isArray(answer) ? undefined : answer, true);
    sink?.finish(answer, event && eventIdOf(this.#resumability, event.seq));
    if (sink && !this.#detached) this.#expire();
    else this.#scheduleExpiry();
  }

  /**
   * Ends the HTTP response now while the call goes on (tool code's
   * `sdk.closeStream()`); the client resumes it. Nothing happens to a stream
   * that cannot be resumed, or that already ended.
   */
  closeResponse(): void {
    if (!this.#resumability || this.#finished || !this.#sink) return;
    const sink = this.#sink;
    // Ending an undecided response primes it first: the client gets the id it resumes with.
    this.#known = true;
    this.#detach();
    sink.end();
  }

  /**
   * Attaches a new response (a GET with `Last-Event-ID` naming event `afterSeq`
   * of this stream): it receives every event after that one, then the rest.
   */
  attach(res: ServerResponse, afterSeq: number): void {
    const first = this.#kept[0]?.seq ?? this.#seq + 1;
    if (this.#expired || afterSeq > this.#seq || (afterSeq + 1 < first && afterSeq < this.#seq)) {
      throw streamNotFound();
    }
    clearTimeout(this.#expiry);
    const previous = this.#sink;
    this.#sink = undefined;
    previous?.end();
    const sink = ResponseStream.eventStream(res, this.#sessionId, this.#keepAliveMs, () =>
      this.#responseGone(),
    );
    this.#sink = sink;
    this.#known = true;
    // Connected again: like any connected stream it costs no budget and no archive
    // until its response goes away again.
    this.#detached = false;
    this.#unhold();
    const resumability = this.#resumability!;
    for (const event of this.#kept) {
      if (event.seq <= afterSeq) continue;
      // An empty final event: every request of the stream was cancelled, nothing to answer.
      if (event.message === '') continue;
      const message = JSON.parse(event.message) as JSONRPCMessage;
      if (event.final) sink.finish(message, eventIdOf(resumability, event.seq));
      else sink.send(message, eventIdOf(resumability, event.seq));
    }
    if (this.#finished) {
      sink.end();
      this.#expire();
    }
  }

  /** Ends the response where it stands (the session closed). */
  end(): void {
    this.#finished = true;
    this.#sink?.end();
    this.#sink = undefined;
    this.#expire();
  }

  #record(message: JSONRPCMessage | undefined, final: boolean): StreamEvent | undefined {
    const resumability = this.#resumability;
    if (!resumability || this.#expired) return undefined;
    this.#seq += 1;
    const event: StreamEvent = {
      seq: this.#seq,
      message: message === undefined ? '' : JSON.stringify(message),
      final,
    };
    this.#kept.push(event);
    if (this.#kept.length > MAX_KEPT_EVENTS) this.#kept.shift();
    if (this.#detached) this.#keep([event]);
    return event;
  }

  #responseGone(): void {
    const primed = this.#sink?.primed ?? false;
    this.#sink = undefined;
    if (this.#finished) return;
    if (!this.#resumability || !(this.#known || primed)) {
      // Nobody can ever receive the answer: the requests are cancelled.
      this.#abandon();
      return;
    }
    this.#known = true;
    this.#detach();
  }

  /** From now on no response carries the stream: what it holds goes where a resume can find it. */
  #detach(): void {
    this.#sink = undefined;
    if (this.#detached) return;
    this.#detached = true;
    this.#hold ??= this.#resumability!.hold(() => this.#droppedByBudget());
    // The opening marker tells another replica that the stream exists even before its first event.
    this.#keep([{ seq: 0, message: '', final: false }, ...this.#kept]);
    this.#scheduleExpiry();
  }

  /** Counts events of a detached stream against the budget, then archives them (unless that dropped it). */
  #keep(events: readonly StreamEvent[]): void {
    const fresh = events.filter((event) => event.seq > this.#heldUpTo);
    if (fresh.length === 0 || !this.#hold) return;
    this.#heldUpTo = fresh[fresh.length - 1]!.seq;
    this.#hold.charge(fresh.reduce((sum, event) => sum + eventCost(event.message), 0));
    if (this.#expired) return;
    const { archive, sessionId, streamId } = this.#resumability!;
    if (!archive) return;
    this.#archived = true;
    archive.save(sessionId, streamId, fresh);
  }

  /** Stops counting and archiving the stream (it is connected again, or over). */
  #unhold(): void {
    this.#hold?.release();
    this.#hold = undefined;
    this.#heldUpTo = -1;
    if (this.#archived) {
      this.#archived = false;
      const { archive, sessionId, streamId } = this.#resumability!;
      archive?.discard(sessionId, streamId);
    }
  }

  /** The budget gave up on the stream: forgotten, and a call still running is cancelled. */
  #droppedByBudget(): void {
    this.#hold = undefined;
    if (this.#finished) this.#expire();
    else this.#abandon();
  }

  /** The call's answer can reach nobody: forget the stream and cancel its requests. */
  #abandon(): void {
    this.#finished = true;
    this.#expire();
    this.#onAbandoned();
  }

  /** A detached stream is kept while its call runs, then for the resume window. */
  #scheduleExpiry(): void {
    clearTimeout(this.#expiry);
    if (!this.#finished || this.#expired) return;
    this.#expiry = setTimeout(() => this.#expire(), this.#resumability!.resumeWindowMs);
    this.#expiry.unref();
  }

  #expire(): void {
    clearTimeout(this.#expiry);
    if (this.#expired) return;
    this.#expired = true;
    this.#kept.length = 0;
    if (this.#resumability) this.#unhold();
    this.#resumability?.onExpired();
  }
}

/** `<stream>.<seq>`: the id of event `seq` of a stream (`.0` is the priming event). */
export function eventIdOf(resumability: Pick<Resumability, 'streamId'>, seq: number): string {
  return `${resumability.streamId}.${seq}`;
}

/** The stream and sequence number a `Last-Event-ID` names; undefined when it is not one of ours. */
export function parseEventId(eventId: string): { streamId: string; seq: number } | undefined {
  const match = /^([0-9a-f]{16})\.(0|[1-9][0-9]{0,9})$/.exec(eventId);
  return match ? { streamId: match[1]!, seq: Number(match[2]) } : undefined;
}

export function streamNotFound(): McphostError {
  return new McphostError(
    'ERR_STREAM_NOT_FOUND',
    'Stream not found: the event it names was never sent in this session, its call ended too long ago to resume, or it was dropped to keep what cut streams hold within bounds',
  );
}
