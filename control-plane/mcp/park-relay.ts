/**
 * Retries of parked calls across replicas (PostgreSQL): a modern call that
 * waits for its client's input is parked on the replica whose container runs
 * it, and its `requestState` names that replica. A retry that lands on
 * another one is sent there as it came (the request and what the hosted side
 * established about it: caller, quota key, request id), served there like
 * any request — the same checks of the state, the same handler — and its
 * notifications and answer come back to the replica holding the client's
 * response. The client closing that response cancels the call there.
 *
 * The messages travel through the store's relay (shared-sessions.ts: a row,
 * then a NOTIFY naming it), to addresses only the right replica holds:
 * `mcphost-resume:<replica>`, `mcphost-reply:<id>`, `mcphost-cancel:<replica>`.
 * Replicas trust each other as they trust the store they share.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { JSONRPCMessage, JSONRPCRequest } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { McphostError } from '../errors.js';
import { recordedCaller, type Caller } from '../identity/index.js';
import type { AnswerSink } from './modern-transport.js';
import type { RequestScope } from './request-scope.js';
import { ResponseStream } from './response-stream.js';

const RELAY_METHOD = 'notifications/mcphost/park-relay';
const RESUME = 'mcphost-resume:';
const REPLY = 'mcphost-reply:';
const CANCEL = 'mcphost-cancel:';

/** How a replica relays and hears relayed messages (SharedSessions). */
export interface RelayChannel {
  relay(address: string, message: JSONRPCMessage, maxCharacters: number): void;
}

export interface ParkRelayOptions {
  channel: RelayChannel;
  /** This replica's id (LiveReplicas), as states name it. */
  replica: string;
  /** Serves a retry relayed here, its answer going to `open`'s sink; returns its cancellation. */
  serve(
    subdomain: string,
    request: JSONRPCRequest,
    scope: RequestScope,
    open: (onGone: () => void) => AnswerSink,
  ): Promise<() => void>;
  /** Longest a relayed retry waits for its answer (the longest call), in ms. */
  timeoutMs: number;
  /**
   * Longest a relayed retry waits for the holder to say it took it, in ms: a
   * holder that stopped (its calls with it) is known in this, not in `timeoutMs`.
   */
  acceptTimeoutMs: number;
  /** Largest relayed message, in JSON characters (a call's whole result must fit). */
  maxCharacters: number;
  keepAliveMs: number;
  onError(error: unknown, what: string): void;
}

const scopeSchema = z.object({
  caller: z.custom<Caller>((value) => typeof value === 'object' && value !== null),
  quotaKey: z.string(),
  requestId: z.string(),
  clientAddress: z.string().optional(),
});

const relayedSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('resume'),
    reply: z.string().uuid(),
    from: z.string(),
    subdomain: z.string(),
    request: z.custom<JSONRPCRequest>((value) => typeof value === 'object' && value !== null),
    scope: scopeSchema,
  }),
  z.object({
    kind: z.literal('frame'),
    /** Frames are numbered: relayed messages may be read back out of order. */
    seq: z.number().int().nonnegative(),
    message: z.custom<JSONRPCMessage>((value) => typeof value === 'object' && value !== null),
    final: z.boolean(),
    status: z.number().int(),
  }),
  z.object({ kind: z.literal('cancel'), reply: z.string().uuid() }),
  /** The holder took a relayed retry (sent before it is served, which may take long). */
  z.object({ kind: z.literal('accepted') }),
]);
type Relayed = z.infer<typeof relayedSchema>;

/** A relayed retry this replica waits for: its client's response, and frames come early. */
interface Waiting {
  stream: ResponseStream;
  timer: NodeJS.Timeout;
  /** Until the holder accepts: on expiry the call is taken as gone with its replica. */
  acceptTimer: NodeJS.Timeout | undefined;
  next: number;
  early: Map<number, Extract<Relayed, { kind: 'frame' }>>;
}

export class ParkRelay {
  readonly #options: ParkRelayOptions;
  /** Relayed retries this replica waits for, by reply id: where their frames go. */
  readonly #waiting = new Map<string, Waiting>();
  /** Retries served here for another replica, by reply id: how to cancel them. */
  readonly #serving = new Map<string, () => void>();

  constructor(options: ParkRelayOptions) {
    this.#options = options;
  }

  /** True for the relay addresses this replica answers. */
  holds(address: string): boolean {
    const { replica } = this.#options;
    return (
      address === `${RESUME}${replica}` ||
      address === `${CANCEL}${replica}` ||
      (address.startsWith(REPLY) && this.#waiting.has(address.slice(REPLY.length)))
    );
  }

  /** A relayed message for this replica. */
  deliver(address: string, message: JSONRPCMessage): void {
    const parsed = relayedSchema.safeParse((message as { params?: unknown }).params);
    if (!parsed.success) return;
    const relayed = parsed.data;
    if (relayed.kind === 'resume') void this.#serveHere(relayed);
    else if (relayed.kind === 'cancel') this.#serving.get(relayed.reply)?.();
    else if (relayed.kind === 'accepted') this.#accepted(address.slice(REPLY.length));
    else this.#frame(address.slice(REPLY.length), relayed);
  }

  /**
   * Sends a retry of a call parked on `replica` there, and answers `res` with
   * what comes back.
   */
  forward(
    replica: string,
    subdomain: string,
    request: JSONRPCRequest,
    scope: RequestScope,
    res: ServerResponse,
  ): void {
    const reply = randomUUID();
    const stream = new ResponseStream(res, undefined, this.#options.keepAliveMs, () => {
      // The client went away: the call it was retrying is cancelled where it runs.
      this.#forget(reply);
      this.#send(`${CANCEL}${replica}`, { kind: 'cancel', reply });
    });
    const giveUp = (error: { code: number; message: string; data?: unknown }) => {
      this.#forget(reply);
      stream.finish({ jsonrpc: '2.0', id: request.id, error }, undefined, 200);
    };
    const timer = setTimeout(
      () =>
        giveUp({ code: -32603, message: 'the replica holding this call did not answer in time' }),
      this.#options.timeoutMs,
    );
    timer.unref();
    // The same refusal as a state whose call has ended: the client starts the call again.
    const acceptTimer = setTimeout(
      () =>
        giveUp({
          code: -32602,
          message:
            'Invalid or expired requestState: its call is on no replica now (the replica holding it does not answer)',
          data: { reason: 'invalid_request_state' },
        }),
      this.#options.acceptTimeoutMs,
    );
    acceptTimer.unref();
    this.#waiting.set(reply, { stream, timer, acceptTimer, next: 0, early: new Map() });
    this.#send(`${RESUME}${replica}`, {
      kind: 'resume',
      reply,
      from: this.#options.replica,
      subdomain,
      request,
      // Who, not what their token said: the store relays it, and a resume needs only the caller's key.
      scope: { ...scope, caller: recordedCaller(scope.caller) },
    });
  }

  async #serveHere(relayed: Extract<Relayed, { kind: 'resume' }>): Promise<void> {
    const back = `${REPLY}${relayed.reply}`;
    this.#send(back, { kind: 'accepted' });
    let finished = false;
    let seq = 0;
    const sink: AnswerSink = {
      send: (message) =>
        this.#send(back, { kind: 'frame', seq: seq++, message, final: false, status: 200 }),
      finish: (answer, _eventId, status) => {
        finished = true;
        this.#serving.delete(relayed.reply);
        this.#send(back, { kind: 'frame', seq: seq++, message: answer, final: true, status });
      },
      end: () => {
        if (finished) return;
        finished = true;
        this.#serving.delete(relayed.reply);
        this.#send(back, {
          kind: 'frame',
          seq: seq++,
          message: {
            jsonrpc: '2.0',
            id: relayed.request.id,
            error: { code: -32603, message: 'the call ended without an answer' },
          },
          final: true,
          status: 200,
        });
      },
    };
    try {
      const cancel = await this.#options.serve(
        relayed.subdomain,
        relayed.request,
        relayed.scope as RequestScope,
        () => sink,
      );
      if (!finished) this.#serving.set(relayed.reply, cancel);
    } catch (error) {
      this.#options.onError(error, 'serving a relayed retry');
      const failure = error instanceof McphostError ? error.message : 'internal error';
      sink.finish(
        { jsonrpc: '2.0', id: relayed.request.id, error: { code: -32603, message: failure } },
        undefined,
        200,
      );
    }
  }

  #accepted(reply: string): void {
    const waiting = this.#waiting.get(reply);
    if (waiting === undefined) return;
    clearTimeout(waiting.acceptTimer);
    waiting.acceptTimer = undefined;
  }

  #frame(reply: string, frame: Extract<Relayed, { kind: 'frame' }>): void {
    const waiting = this.#waiting.get(reply);
    if (waiting === undefined) return;
    // A frame proves the holder took the retry even if its acceptance is read later.
    this.#accepted(reply);
    waiting.early.set(frame.seq, frame);
    for (let next = waiting.early.get(waiting.next); next; next = waiting.early.get(waiting.next)) {
      waiting.early.delete(waiting.next);
      waiting.next += 1;
      if (!next.final) {
        waiting.stream.send(next.message);
        continue;
      }
      this.#forget(reply);
      waiting.stream.finish(next.message, undefined, next.status);
      return;
    }
  }

  #forget(reply: string): void {
    const waiting = this.#waiting.get(reply);
    if (waiting === undefined) return;
    clearTimeout(waiting.timer);
    clearTimeout(waiting.acceptTimer);
    this.#waiting.delete(reply);
  }

  #send(address: string, params: Relayed): void {
    this.#options.channel.relay(
      address,
      { jsonrpc: '2.0', method: RELAY_METHOD, params } as JSONRPCMessage,
      this.#options.maxCharacters,
    );
  }
}
