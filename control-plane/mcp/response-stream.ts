/**
 * One HTTP response of the Streamable HTTP transport, written on Node's
 * `ServerResponse` directly (no web Request/Response conversion: that cost
 * ~0.65 ms a request here).
 *
 * The answer to a POST starts undecided: when the only thing the server sends
 * is the response, it goes out as plain `application/json` (the cheapest for
 * every client); the first message sent before it — a log line, progress, a
 * server→client request such as elicitation — turns the response into an SSE
 * stream, as the specification allows for any request. A response that has
 * sent nothing for `keepAliveMs` turns into a stream too and then carries a
 * comment every `keepAliveMs`, so proxies and idle timeouts do not cut a long
 * call. A GET stream is an SSE stream from the start.
 *
 * A response of a resumable stream (call-stream.ts) opens its SSE stream with
 * a priming event — an id and a `retry` interval, no data (SEP-1699) — and
 * gives every event the id its call stream numbered it with, so a client that
 * loses the response can resume it with `Last-Event-ID`.
 */
import type { ServerResponse } from 'node:http';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';

const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  // Reverse proxies must pass events on as they come, not buffer them.
  'x-accel-buffering': 'no',
} as const;

/** The first event of a resumable SSE stream: its id and how long a client waits before resuming. */
export interface PrimingEvent {
  id: string;
  retryMs: number;
}

export class ResponseStream {
  readonly #res: ServerResponse;
  /** The `Mcp-Session-Id` every response carries; undefined for sessionless (modern-era) requests. */
  readonly #sessionId: string | undefined;
  readonly #keepAliveMs: number;
  readonly #priming: PrimingEvent | undefined;
  #mode: 'undecided' | 'sse' | 'ended' = 'undecided';
  #primed = false;
  #keepAlive: NodeJS.Timeout | undefined;

  /** `onGone` runs once when the client goes away before the response ended. */
  constructor(
    res: ServerResponse,
    sessionId: string | undefined,
    keepAliveMs: number,
    onGone: () => void,
    priming?: PrimingEvent,
  ) {
    this.#res = res;
    this.#sessionId = sessionId;
    this.#keepAliveMs = keepAliveMs;
    this.#priming = priming;
    res.once('close', () => {
      if (this.#mode === 'ended') return;
      this.#stop();
      onGone();
    });
    this.#keepAlive = setTimeout(() => this.#startSse(), keepAliveMs).unref();
  }

  /** A GET stream: SSE at once. */
  static eventStream(
    res: ServerResponse,
    sessionId: string | undefined,
    keepAliveMs: number,
    onGone: () => void,
  ): ResponseStream {
    const stream = new ResponseStream(res, sessionId, keepAliveMs, onGone);
    stream.#startSse();
    return stream;
  }

  get ended(): boolean {
    return this.#mode === 'ended';
  }

  /** True once the response is an event stream (its answer can no longer be plain JSON). */
  get streaming(): boolean {
    return this.#mode === 'sse';
  }

  /**
   * True once the priming event went out: from then on the client holds an
   * event id, the only thing it can resume the stream with.
   */
  get primed(): boolean {
    return this.#primed;
  }

  /** Sends a message before the final answer (turns the response into a stream). */
  send(message: JSONRPCMessage, eventId?: string): void {
    if (this.#mode === 'ended') return;
    if (this.#mode === 'undecided') this.#startSse();
    const id = eventId === undefined ? '' : `id: ${eventId}\n`;
    this.#res.write(`event: message\n${id}data: ${JSON.stringify(message)}\n\n`);
  }

  /**
   * Sends the final answer — one response, or the responses of a batch — and
   * ends; `eventId` names it when it goes out as an event, `status` is the
   * HTTP status when it goes out as plain JSON (default 200; an event stream
   * has begun with 200 already).
   */
  finish(
    answer: JSONRPCMessage | JSONRPCMessage[] | undefined,
    eventId?: string,
    status = 200,
  ): void {
    if (this.#mode === 'ended') return;
    if (this.#mode === 'undecided' && answer !== undefined) {
      this.#stop();
      const text = JSON.stringify(answer);
      this.#res.writeHead(status, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(text),
        ...this.#sessionHeader(),
      });
      this.#res.end(text);
      return;
    }
    for (const message of answer === undefined ? [] : [answer].flat()) this.send(message, eventId);
    // Nothing to answer (every request was cancelled): an empty stream ends the POST.
    if (this.#mode === 'undecided') this.#startSse();
    this.#stop();
    this.#res.end();
  }

  /** Ends the response where it stands (session closed, stream replaced). */
  end(): void {
    if (this.#mode === 'ended') return;
    if (this.#mode === 'undecided') this.#startSse();
    this.#stop();
    this.#res.end();
  }

  #startSse(): void {
    if (this.#mode !== 'undecided') return;
    this.#mode = 'sse';
    this.#res.writeHead(200, { ...SSE_HEADERS, ...this.#sessionHeader() });
    if (this.#priming) {
      this.#res.write(`id: ${this.#priming.id}\nretry: ${this.#priming.retryMs}\ndata: \n\n`);
      this.#primed = true;
    } else {
      // Headers go out now: a client sees the stream open before the first event.
      this.#res.flushHeaders();
    }
    clearTimeout(this.#keepAlive);
    this.#keepAlive = setInterval(() => this.#res.write(': keepalive\n\n'), this.#keepAliveMs);
    this.#keepAlive.unref();
  }

  #sessionHeader(): Record<string, string> {
    return this.#sessionId === undefined ? {} : { 'mcp-session-id': this.#sessionId };
  }

  #stop(): void {
    this.#mode = 'ended';
    clearTimeout(this.#keepAlive);
    clearInterval(this.#keepAlive);
  }
}
