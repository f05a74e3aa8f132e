/**
 * The one connection between a hosted server's modern-era SDK `Server` and
 * every modern request to that server (MCP 2026-07-28 is stateless: no
 * request depends on another, so one instance serves them all). Each request
 * is handed in with its own response (response-stream.ts: plain JSON, or SSE
 * once a progress or log notification comes before the answer) and its
 * caller (`authInfo`); the SDK's protocol layer validates the request against
 * the 2026-07-28 schemas, runs the handler and encodes the result
 * (`resultType`, `serverInfo`, cache hints), and its answer and the
 * notifications related to it come back here to that response.
 *
 * Request ids are the clients' own and may collide between clients: each
 * request gets an id of this connection's on the way in, and its own back on
 * the way out. A response that closes before its answer cancels the request
 * (2026-07-28: "closing the SSE response stream MUST be treated as
 * cancellation"), through the protocol layer's own cancellation.
 *
 * Why not the SDK's `createMcpHandler`: it builds a server instance, a web
 * `Request` and a web `Response` per request — 0.42 ms of CPU per call here,
 * against 0.07 ms for this connection (docs/decisions.md).
 * The SDK binds a server to the modern era when it connects to a
 * `PerRequestHTTPServerTransport` classified at that revision; this
 * transport is one (by inheritance) so that binding holds, and overrides
 * everything that transport does for a single exchange.
 */
import type { ServerResponse } from 'node:http';
import {
  PerRequestHTTPServerTransport,
  type AuthInfo,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageClassification,
  type RequestId,
  type TransportSendOptions,
} from '@modelcontextprotocol/server';
import { ResponseStream } from './response-stream.js';

/** HTTP statuses of errors the protocol layer answers before a handler runs (the SDK's ladder table). */
const LADDER_STATUS: Readonly<Record<number, number>> = {
  [-32700]: 400,
  [-32600]: 400,
  [-32601]: 404,
  [-32022]: 400,
  [-32021]: 400,
  [-32020]: 400,
};
/** MissingRequiredClientCapability: 400 wherever it comes from (the specification says so of the error itself). */
const MISSING_CAPABILITY = -32021;

/**
 * Where one request's answer goes: a response of this replica
 * (response-stream.ts), or, for a retry another replica received, the relay
 * back to it (park-relay.ts).
 */
export interface AnswerSink {
  /** A notification before the answer. */
  send(message: JSONRPCMessage): void;
  /** The answer, with the HTTP status it goes with. */
  finish(answer: JSONRPCMessage, eventId: undefined, status: number): void;
  /** Ends without an answer (the connection closed). */
  end(): void;
}

interface Exchange {
  readonly clientId: RequestId;
  readonly stream: AnswerSink;
  /** True while the request is being handed to the protocol layer (its pre-handler gates answer then). */
  dispatching: boolean;
  /** What answers in place of a pre-handler refusal, when anything does (ModernRequest.refusalOf). */
  readonly refusalOf?: () => LadderRefusal | undefined;
}

/** A refusal answered in place of the protocol layer's, with its HTTP status. */
export interface LadderRefusal {
  status: number;
  error: { code: number; message: string; data?: unknown };
}

export interface ModernTransportOptions {
  /** The classification every request of this connection carries (revision 2026-07-28). */
  classification: MessageClassification;
  /** Silence on an open response before it becomes a stream with keep-alive comments, in ms. */
  keepAliveMs: number;
}

export class ModernTransport extends PerRequestHTTPServerTransport {
  readonly #classification: MessageClassification;
  readonly #keepAliveMs: number;
  readonly #exchanges = new Map<number, Exchange>();
  #nextId = 1;
  #closed = false;

  constructor(options: ModernTransportOptions) {
    super({ classification: options.classification });
    this.#classification = options.classification;
    this.#keepAliveMs = options.keepAliveMs;
  }

  /** Requests in flight on this connection. */
  get inFlight(): number {
    return this.#exchanges.size;
  }

  override async start(): Promise<void> {}

  /**
   * Serves one request on `res`; `authInfo` carries the caller to the
   * handlers; `refusalOf` gives what answers in place of a refusal before
   * any handler, if anything does.
   */
  serve(
    request: JSONRPCRequest,
    res: ServerResponse,
    authInfo: AuthInfo,
    refusalOf?: () => LadderRefusal | undefined,
  ): void {
    this.serveTo(
      request,
      (onGone) => new ResponseStream(res, undefined, this.#keepAliveMs, onGone),
      authInfo,
      refusalOf,
    );
  }

  /**
   * Serves one request whose answer goes to the sink `open` makes; the sink
   * calls `onGone` when its reader went away before the answer (the request
   * is then cancelled). Returns a function that cancels the request too.
   */
  serveTo(
    request: JSONRPCRequest,
    open: (onGone: () => void) => AnswerSink,
    authInfo: AuthInfo,
    refusalOf?: () => LadderRefusal | undefined,
  ): () => void {
    const id = this.#nextId++;
    const exchange: Exchange = {
      clientId: request.id,
      stream: open(() => this.#cancel(id)),
      dispatching: true,
      ...(refusalOf === undefined ? {} : { refusalOf }),
    };
    this.#exchanges.set(id, exchange);
    try {
      this.onmessage?.({ ...request, id }, { classification: this.#classification, authInfo });
    } finally {
      exchange.dispatching = false;
    }
    return () => this.#cancel(id);
  }

  override async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const isAnswer = 'result' in message || 'error' in message;
    const id = isAnswer ? (message as { id?: RequestId }).id : options?.relatedRequestId;
    const exchange = typeof id === 'number' ? this.#exchanges.get(id) : undefined;
    // Anything unrelated to a request in flight has nowhere to go in this era: dropped.
    if (exchange === undefined) return;
    if (!isAnswer) {
      // A request to the client is not a modern-era message (input travels in results): never sent.
      if ('method' in message && 'id' in message) return;
      exchange.stream.send(message);
      return;
    }
    this.#exchanges.delete(id as number);
    const replaced =
      'error' in message && exchange.dispatching ? exchange.refusalOf?.() : undefined;
    if (replaced !== undefined) {
      const refusal = { jsonrpc: '2.0' as const, id: exchange.clientId, error: replaced.error };
      exchange.stream.finish(refusal, undefined, replaced.status);
      return;
    }
    const answer = { ...message, id: exchange.clientId } as JSONRPCMessage;
    const code = 'error' in message ? message.error.code : undefined;
    const status =
      code !== undefined && (exchange.dispatching || code === MISSING_CAPABILITY)
        ? (LADDER_STATUS[code] ?? 200)
        : 200;
    exchange.stream.finish(answer, undefined, status);
  }

  override async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const exchange of this.#exchanges.values()) exchange.stream.end();
    this.#exchanges.clear();
    this.onclose?.();
  }

  /** The client went away before the answer: the protocol layer aborts the handler's signal. */
  #cancel(id: number): void {
    if (!this.#exchanges.delete(id)) return;
    this.onmessage?.({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: id, reason: 'the client closed the response' },
    });
  }
}
