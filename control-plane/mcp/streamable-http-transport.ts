/**
 * The MCP Streamable HTTP transport of one session, on Node's request and
 * response (the SDK's `Transport` interface, so the SDK's `Server`/`Protocol`
 * does dispatch, cancellation, progress and result validation for every
 * request; this file only moves messages).
 *
 * - A POST's requests are answered on that POST's response (response-stream.ts:
 *   JSON when only the answer is sent, SSE as soon as anything comes first);
 *   notifications and client responses (to elicitation or sampling requests
 *   the server made inside a call) are accepted with 202.
 * - Everything the server sends for a request (`relatedRequestId`) travels on
 *   that request's response; everything else on the session's GET stream, or
 *   nowhere when none is open (there is no event store: nothing is replayed).
 * - `notifications/cancelled` ends the cancelled request's response at once
 *   with nothing for that request (the protocol layer sends no response for
 *   it, as the specification says it should not).
 * - A client that closes a response before its answers cancels those requests:
 *   with no event store, nothing could ever deliver them.
 * - A request id still being answered cannot be used again in the session.
 * - Closing the session ends every open response; a request still running gets
 *   an ERR_SESSION_NOT_FOUND error rather than a stream that just stops.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CancelledNotificationSchema,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { jsonRpcErrorOf, McphostError } from '../errors.js';
import type { IncomingPost } from './incoming-request.js';
import { ResponseStream } from './response-stream.js';

/** The requests of one POST and the response that answers them. */
interface PendingPost {
  readonly stream: ResponseStream;
  /** Ids still to be answered (or cancelled). */
  readonly open: Set<RequestId>;
  /** Answers so far, in request order once complete (a batch is answered as an array). */
  readonly answers: Map<RequestId, JSONRPCMessage>;
  readonly order: readonly RequestId[];
  readonly batch: boolean;
}

export interface StreamableHttpTransportOptions {
  sessionId: string;
  /** Longest silence on an open response before it becomes a stream with keep-alive comments, in ms. */
  keepAliveMs: number;
}

export class StreamableHttpTransport implements Transport {
  readonly sessionId: string;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  readonly #keepAliveMs: number;
  readonly #postOf = new Map<RequestId, PendingPost>();
  #standalone: ResponseStream | undefined;
  #initialized = false;
  #closed = false;

  constructor(options: StreamableHttpTransportOptions) {
    this.sessionId = options.sessionId;
    this.#keepAliveMs = options.keepAliveMs;
  }

  get closed(): boolean {
    return this.#closed;
  }

  async start(): Promise<void> {}

  /** Hands a checked POST's messages to the protocol layer and answers on `res`. */
  handlePost(req: IncomingMessage, res: ServerResponse, post: IncomingPost): void {
    if (this.#closed) throw sessionGone();
    const initializing = post.messages.some((message) => methodOf(message) === 'initialize');
    if (initializing && (this.#initialized || post.messages.length > 1)) {
      throw new McphostError(
        'ERR_INVALID_REQUEST',
        this.#initialized
          ? 'Invalid Request: Server already initialized'
          : 'Invalid Request: Only one initialization request is allowed',
      );
    }
    const requestIds = post.messages.filter(isRequest).map((message) => message.id);
    // An id still being answered in this session would take over the earlier
    // request's response (and its cancellation): JSON-RPC ids must be unique.
    const inUse = requestIds.find(
      (id, index) => this.#postOf.has(id) || requestIds.indexOf(id) !== index,
    );
    if (inUse !== undefined) {
      throw new McphostError(
        'ERR_INVALID_REQUEST',
        `Invalid Request: request id ${JSON.stringify(inUse)} is already in use in this session`,
      );
    }
    this.#initialized ||= initializing;
    // The SDK passes these on to handlers as `extra.requestInfo` (the request id lives there).
    const extra: MessageExtraInfo = { requestInfo: { headers: req.headers } };
    if (requestIds.length === 0) {
      res.writeHead(202).end();
    } else {
      const pending: PendingPost = {
        stream: new ResponseStream(res, this.sessionId, this.#keepAliveMs, () =>
          this.#forget(pending),
        ),
        open: new Set(requestIds),
        answers: new Map(),
        order: requestIds,
        batch: post.batch,
      };
      for (const id of requestIds) this.#postOf.set(id, pending);
    }
    for (const message of post.messages) {
      if (methodOf(message) === 'notifications/cancelled' && !isRequest(message)) {
        this.#cancelled(message);
      }
      this.onmessage?.(message, extra);
    }
  }

  /** Opens the session's stream for messages unrelated to any request (one at a time). */
  handleGet(res: ServerResponse): void {
    if (this.#closed) throw sessionGone();
    if (this.#standalone && !this.#standalone.ended) {
      throw new McphostError(
        'ERR_CONFLICT',
        'Conflict: Only one SSE stream is allowed per session',
      );
    }
    const stream = ResponseStream.eventStream(res, this.sessionId, this.#keepAliveMs, () => {
      if (this.#standalone === stream) this.#standalone = undefined;
    });
    this.#standalone = stream;
  }

  async send(message: JSONRPCMessage, options?: { relatedRequestId?: RequestId }): Promise<void> {
    const isAnswer = 'result' in message || 'error' in message;
    const requestId = isAnswer ? message.id : options?.relatedRequestId;
    if (requestId === undefined) {
      this.#standalone?.send(message);
      return;
    }
    // Unknown id: the request was cancelled or its client went away; nothing to deliver.
    const pending = this.#postOf.get(requestId);
    if (!pending) return;
    if (!isAnswer) {
      pending.stream.send(message);
      return;
    }
    pending.answers.set(requestId, message);
    this.#settle(pending, requestId);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const pending of new Set(this.#postOf.values())) {
      for (const id of pending.open) {
        pending.answers.set(id, { jsonrpc: '2.0', id, error: jsonRpcErrorOf(sessionGone()) });
      }
      for (const id of [...pending.open]) this.#settle(pending, id);
    }
    this.#standalone?.end();
    this.#standalone = undefined;
    this.onclose?.();
  }

  /** The request is answered or cancelled; the response ends once all of its POST's are. */
  #settle(pending: PendingPost, requestId: RequestId): void {
    pending.open.delete(requestId);
    if (this.#postOf.get(requestId) === pending) this.#postOf.delete(requestId);
    if (pending.open.size > 0) return;
    const answers = pending.order.flatMap((id) => pending.answers.get(id) ?? []);
    if (answers.length === 0) pending.stream.finish(undefined);
    else pending.stream.finish(pending.batch ? answers : answers[0]);
  }

  #cancelled(message: JSONRPCMessage): void {
    const parsed = CancelledNotificationSchema.safeParse(message);
    const requestId = parsed.success ? parsed.data.params.requestId : undefined;
    // SDK 1.32's protocol ignores a cancellation of id 0 or "" (typescript-sdk
    // #2283): that handler runs on and answers, so its response stays open for it.
    if (!requestId) return;
    const pending = this.#postOf.get(requestId);
    if (pending) this.#settle(pending, requestId);
  }

  /**
   * The client went away before its answers. With no event store nothing could
   * ever deliver them, so the requests are cancelled (their invocations stop,
   * as the newer specification drafts require of a disconnect). The protocol
   * layer sends nothing for a cancelled request, so a reused id can never
   * receive an old call's answer.
   */
  #forget(pending: PendingPost): void {
    for (const id of [...pending.open]) {
      this.onmessage?.({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: id, reason: 'the client closed the response' },
      });
      // An aborted handler sends nothing; id 0 or "" (see #cancelled) still answers,
      // and keeps its id until then.
      if (id) this.#settle(pending, id);
    }
  }
}

// The messages were validated by the SDK's JSON-RPC schema on the way in (or
// come from the SDK's protocol layer): their kind shows in their fields. The
// SDK's own guards are zod parses, and failing ones cost several µs each.

/** The method of a request or notification; undefined for a response. */
function methodOf(message: JSONRPCMessage): string | undefined {
  return 'method' in message ? message.method : undefined;
}

function isRequest(message: JSONRPCMessage): message is JSONRPCRequest {
  return 'method' in message && 'id' in message;
}

function sessionGone(): McphostError {
  return new McphostError(
    'ERR_SESSION_NOT_FOUND',
    'Session not found: it was closed; start a new session with initialize',
  );
}
