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
 *   nowhere when none is open (those are hints — list changes, resource
 *   updates — and are not replayed).
 * - A response of a session at 2025-11-25 or later is resumable (call-stream.ts):
 *   a GET with `Last-Event-ID` continues it, here or — through the archive —
 *   on another replica. What is kept of cut streams counts against the
 *   session's caller and server (`holdDetachedStream`, resume-budget.ts).
 * - `notifications/cancelled` ends the cancelled request's response at once
 *   with nothing for that request (the protocol layer sends no response for
 *   it, as the specification says it should not).
 * - A client that closes a non-resumable response before its answers cancels
 *   those requests: nothing could ever deliver them. So does one that closes
 *   a resumable response before it got an event id to resume with, and a cut
 *   stream the budget had to drop.
 * - With several replicas, a client message meant for another replica — the
 *   answer to an elicitation or sampling request a call there made, or the
 *   cancellation of a call running there — is relayed (`relay`), and arrives
 *   there through `deliverRelayed`. So that such answers can be told apart,
 *   the ids of server→client requests carry a tag of this transport's own (each replica builds its own transport of a session).
 * - A request id still being answered cannot be used again in the session.
 * - Closing the session ends every open response; a request still running gets
 *   an ERR_SESSION_NOT_FOUND error rather than a stream that just stops.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { CancelledNotificationSchema } from '@modelcontextprotocol/core';
import type {
  ClientCapabilities,
  Implementation,
  JSONRPCMessage,
  JSONRPCRequest,
  MessageExtraInfo,
  RequestId,
  Transport,
} from '@modelcontextprotocol/server';
import { jsonRpcErrorOf, McphostError } from '../errors.js';
import { CallStream, parseEventId, streamNotFound } from './call-stream.js';
import type { IncomingPost } from './incoming-request.js';
import { authInfoOf, type RequestScope } from './request-scope.js';
import type { ResumeHold } from './resume-budget.js';
import { ResponseStream } from './response-stream.js';
import type { StreamArchive } from './stream-archive.js';

/** The largest `initialize` params a session keeps (capabilities and client info). */
const MAX_HELLO_CHARACTERS = 16 * 1024;

/** The first protocol version whose clients resume streams (SEP-1699 priming events). */
const RESUMABLE_VERSION = '2025-11-25';

/** The requests of one POST and the response that answers them. */
interface PendingPost {
  readonly stream: CallStream;
  /** Ids still to be answered (or cancelled). */
  readonly open: Set<RequestId>;
  /** Answers so far, in request order once complete (a batch is answered as an array). */
  readonly answers: Map<RequestId, JSONRPCMessage>;
  readonly order: readonly RequestId[];
  readonly batch: boolean;
}

/** What the client said of itself when the session began, and the version agreed on. */
export interface ClientHello {
  protocolVersion: string;
  capabilities: ClientCapabilities;
  clientInfo: Implementation;
}

export interface StreamableHttpTransportOptions {
  sessionId: string;
  /** Longest silence on an open response before it becomes a stream with keep-alive comments, in ms. */
  keepAliveMs: number;
  /** The `retry` a resumable stream announces: how long a client waits before resuming, in ms. */
  retryMs?: number;
  /** How long a detached stream stays resumable after its answer, in ms. */
  resumeWindowMs?: number;
  /** Where detached streams go for other replicas to resume (PostgreSQL). */
  archive?: StreamArchive;
  /**
   * Counts a detached stream of this session against its caller's and
   * server's bounds (ResumeBudget.hold); `drop` runs when the budget gives up on it.
   */
  holdDetachedStream: (drop: () => void) => ResumeHold;
  /** Sends a client message meant for another replica there. */
  relay?: (message: JSONRPCMessage) => void;
  /**
   * Runs before the answer to `initialize` goes out (the session is recorded
   * where every replica finds it); a failure fails the initialize instead.
   */
  onInitialized?: (hello: ClientHello) => Promise<void>;
}

export class StreamableHttpTransport implements Transport {
  readonly sessionId: string;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  readonly #options: StreamableHttpTransportOptions;
  /** Names this transport's server→client requests (see `#toWire`): one per session per replica. */
  readonly #tag = randomBytes(6).toString('hex');
  readonly #postOf = new Map<RequestId, PendingPost>();
  /** Resumable streams still running or within their resume window, by stream id. */
  readonly #streams = new Map<string, CallStream>();
  /** Wire ids of this transport's server→client requests awaiting the client's answer. */
  readonly #outgoing = new Set<string>();
  /** Requests this transport made up itself (restoring a session), with what waits for their answer. */
  readonly #internal = new Map<RequestId, () => void>();
  #standalone: ResponseStream | undefined;
  #initialize: { id: RequestId; hello: Omit<ClientHello, 'protocolVersion'> } | undefined;
  #initialized = false;
  /** The protocol version agreed at initialize (`sdk.client`); undefined until then. */
  #protocolVersion: string | undefined;
  #resumable = false;
  #closed = false;

  constructor(options: StreamableHttpTransportOptions) {
    this.sessionId = options.sessionId;
    this.#options = options;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** The protocol version the session agreed on; undefined before its initialize is answered. */
  get protocolVersion(): string | undefined {
    return this.#protocolVersion;
  }

  async start(): Promise<void> {}

  /**
   * Makes a new transport of an existing session ready, as if its client had
   * just initialised it: the SDK server learns the client's capabilities and
   * version from an `initialize` of the transport's own, whose answer nobody sees.
   */
  async restore(hello: ClientHello): Promise<void> {
    this.#initialized = true;
    this.#protocolVersion = hello.protocolVersion;
    this.#resumable = hello.protocolVersion >= RESUMABLE_VERSION;
    const id = `mcphost-restore-${this.#tag}`;
    await new Promise<void>((resolve) => {
      this.#internal.set(id, resolve);
      this.onmessage?.({
        jsonrpc: '2.0',
        id,
        method: 'initialize',
        params: {
          protocolVersion: hello.protocolVersion,
          capabilities: hello.capabilities,
          clientInfo: hello.clientInfo,
        },
      });
    });
    this.onmessage?.({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }

  /**
   * Hands a checked POST's messages to the protocol layer and answers on
   * `res`; `scope` is who sent them (the handlers read it, request-scope.ts).
   */
  handlePost(res: ServerResponse, post: IncomingPost, scope: RequestScope): void {
    if (this.#closed) throw sessionGone();
    const initializing = post.messages.find((message) => methodOf(message) === 'initialize');
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
    if (initializing && isRequest(initializing)) {
      // The hello is kept with the session (and, with replicas, in the store): bounded.
      const helloCharacters = JSON.stringify(initializing.params ?? {}).length;
      if (helloCharacters > MAX_HELLO_CHARACTERS) {
        throw new McphostError(
          'ERR_INVALID_REQUEST',
          `Invalid Request: initialize params are ${helloCharacters} characters of JSON; at most ${MAX_HELLO_CHARACTERS}`,
        );
      }
      this.#initialized = true;
      const params = initializing.params as Partial<ClientHello> | undefined;
      this.#initialize = {
        id: initializing.id,
        hello: {
          capabilities: params?.capabilities ?? {},
          clientInfo: params?.clientInfo ?? { name: 'unknown', version: 'unknown' },
        },
      };
    }
    // The SDK passes it on to handlers as `ctx.http.authInfo` (request-scope.ts).
    const extra: MessageExtraInfo = { authInfo: authInfoOf(scope) };
    if (requestIds.length === 0) {
      res.writeHead(202).end();
    } else {
      this.#openPost(res, requestIds, post.batch);
    }
    for (const message of post.messages) this.#receive(message, extra);
  }

  /**
   * A GET: resumes the stream `Last-Event-ID` names when it names one of this
   * session's (here, or through the archive on another replica), otherwise
   * opens the session's stream for messages unrelated to any request (one at a time).
   */
  async handleGet(res: ServerResponse, lastEventId?: string): Promise<void> {
    if (this.#closed) throw sessionGone();
    const resume = lastEventId === undefined ? undefined : parseEventId(lastEventId);
    if (lastEventId !== undefined && resume === undefined) throw streamNotFound();
    if (resume) {
      const local = this.#streams.get(resume.streamId);
      if (local) {
        local.attach(res, resume.seq);
        return;
      }
      const archive = this.#options.archive;
      const found =
        archive !== undefined &&
        (await archive.follow(
          this.sessionId,
          resume.streamId,
          resume.seq,
          res,
          this.#options.keepAliveMs,
        ));
      if (!found) throw streamNotFound();
      return;
    }
    if (this.#standalone && !this.#standalone.ended) {
      throw new McphostError(
        'ERR_CONFLICT',
        'Conflict: Only one SSE stream is allowed per session',
      );
    }
    const stream = ResponseStream.eventStream(
      res,
      this.sessionId,
      this.#options.keepAliveMs,
      () => {
        if (this.#standalone === stream) this.#standalone = undefined;
      },
    );
    this.#standalone = stream;
  }

  /**
   * A client message another replica could not use (see `relay`): taken here
   * only when it answers a request this transport made, or cancels a request
   * it is answering.
   */
  deliverRelayed(message: JSONRPCMessage): void {
    if (this.#closed) return;
    if (isAnswer(message)) {
      if (typeof message.id === 'string' && this.#outgoing.has(message.id)) {
        this.#receive(message, undefined);
      }
      return;
    }
    const cancelled = clientCancelledRequestOf(message);
    if (cancelled !== undefined && this.#postOf.has(cancelled)) this.#receive(message, undefined);
  }

  /**
   * Ends the response carrying `requestId` while its call goes on (the
   * client resumes it); nothing for a response that cannot be resumed.
   */
  closeStream(requestId: RequestId): void {
    this.#postOf.get(requestId)?.stream.closeResponse();
  }

  async send(message: JSONRPCMessage, options?: { relatedRequestId?: RequestId }): Promise<void> {
    if (!isAnswer(message)) {
      const requestId = options?.relatedRequestId;
      const wire = this.#toWire(message);
      if (requestId === undefined) this.#standalone?.send(wire);
      // Unknown id: the request was cancelled or its client went away; nothing to deliver.
      else this.#postOf.get(requestId)?.stream.send(wire);
      return;
    }
    const finishInternal = this.#internal.get(message.id);
    if (finishInternal) {
      this.#internal.delete(message.id);
      finishInternal();
      return;
    }
    const pending = this.#postOf.get(message.id);
    if (!pending) return;
    const answer =
      this.#initialize?.id === message.id && 'result' in message
        ? await this.#initialized_(message.result as { protocolVersion?: unknown })
        : message;
    pending.answers.set(message.id, answer);
    this.#settle(pending, message.id);
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
    for (const stream of [...this.#streams.values()]) stream.end();
    this.#standalone?.end();
    this.#standalone = undefined;
    this.onclose?.();
  }

  #openPost(res: ServerResponse, requestIds: RequestId[], batch: boolean): void {
    const { retryMs = 1000, resumeWindowMs = 60_000, archive } = this.#options;
    const streamId = randomBytes(8).toString('hex');
    // One request of a session whose client resumes: its answer may outlive the response.
    const resumable = this.#resumable && !batch && requestIds.length === 1;
    const pending: PendingPost = {
      stream: new CallStream(
        res,
        this.sessionId,
        this.#options.keepAliveMs,
        resumable
          ? {
              sessionId: this.sessionId,
              streamId,
              retryMs,
              resumeWindowMs,
              archive,
              hold: this.#options.holdDetachedStream,
              onExpired: () => this.#streams.delete(streamId),
            }
          : undefined,
        () => this.#forget(pending),
      ),
      open: new Set(requestIds),
      answers: new Map(),
      order: requestIds,
      batch,
    };
    if (resumable) this.#streams.set(streamId, pending.stream);
    for (const id of requestIds) this.#postOf.set(id, pending);
  }

  /** One client message into the protocol layer — or to the replica it is meant for. */
  #receive(message: JSONRPCMessage, extra: MessageExtraInfo | undefined): void {
    if (isAnswer(message)) {
      const ours = typeof message.id === 'string' && this.#outgoing.delete(message.id);
      if (!ours) {
        // Only an answer to another replica's request is worth relaying: anything else
        // goes to the protocol layer, which reports it as an answer to nothing.
        if (this.#options.relay && this.#isOthersRequestId(message.id))
          this.#options.relay(message);
        else this.onmessage?.(message, extra);
        return;
      }
      this.onmessage?.({ ...message, id: fromWire(message.id as string) }, extra);
      return;
    }
    const cancelled = clientCancelledRequestOf(message);
    if (cancelled !== undefined) {
      const pending = this.#postOf.get(cancelled);
      if (pending) this.#settle(pending, cancelled);
      else this.#options.relay?.(message);
    }
    this.onmessage?.(message, extra);
  }

  /** The session is recorded before the client learns it exists; a failure fails its initialize. */
  async #initialized_(result: { protocolVersion?: unknown }): Promise<JSONRPCMessage> {
    const { id, hello } = this.#initialize!;
    const protocolVersion = String(result.protocolVersion);
    this.#protocolVersion = protocolVersion;
    this.#resumable = protocolVersion >= RESUMABLE_VERSION;
    try {
      await this.#options.onInitialized?.({ protocolVersion, ...hello });
      return { jsonrpc: '2.0', id, result: result as Record<string, unknown> };
    } catch (error) {
      // Not recorded, so no other replica knows it: the session ends once this is answered.
      queueMicrotask(() => void this.close());
      return { jsonrpc: '2.0', id, error: jsonRpcErrorOf(error) };
    }
  }

  /** True for the wire id of a server→client request another replica's transport made. */
  #isOthersRequestId(id: RequestId): boolean {
    return (
      typeof id === 'string' &&
      /^[0-9a-f]{12}\.[0-9]{1,16}$/.test(id) &&
      !id.startsWith(`${this.#tag}.`)
    );
  }

  /**
   * Server→client requests (and cancellations of them) leave with ids that
   * name this transport, so that an answer arriving at another replica is
   * relayed here and never mistaken for one of that replica's requests. The
   * ids are strings, which also keeps them clear of SDK clients' falsy check
   * of a cancelled request id 0 (typescript-sdk#2283).
   */
  #toWire(message: JSONRPCMessage): JSONRPCMessage {
    if (isRequest(message)) {
      const id = `${this.#tag}.${String(message.id)}`;
      this.#outgoing.add(id);
      return { ...message, id };
    }
    const cancelled = cancelledRequestOf(message);
    if (cancelled === undefined || !('params' in message)) return message;
    const id = `${this.#tag}.${String(cancelled)}`;
    if (!this.#outgoing.delete(id)) return message;
    return { ...message, params: { ...message.params, requestId: id } };
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

  /**
   * The client went away before the answers of a response it cannot resume
   * (or the budget dropped what it could have resumed): nothing could ever deliver them, so the requests are cancelled (their
   * invocations stop, as the newer specification drafts require of a
   * disconnect). The protocol layer sends nothing for a cancelled request, so
   * a reused id can never receive an old call's answer.
   */
  #forget(pending: PendingPost): void {
    for (const id of [...pending.open]) {
      this.onmessage?.({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: id, reason: 'the client closed the response' },
      });
      // An aborted handler sends nothing; id 0 or "" (see clientCancelledRequestOf) still answers,
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

function isAnswer(message: JSONRPCMessage): message is JSONRPCMessage & { id: RequestId } {
  return 'result' in message || 'error' in message;
}

/** The request a `notifications/cancelled` names. */
function cancelledRequestOf(message: JSONRPCMessage): RequestId | undefined {
  if (methodOf(message) !== 'notifications/cancelled' || isRequest(message)) return undefined;
  const parsed = CancelledNotificationSchema.safeParse(message);
  return parsed.success ? parsed.data.params.requestId : undefined;
}

/**
 * The client's request a `notifications/cancelled` from the client stops.
 * SDK 1.32's protocol ignores a cancellation of id 0 or "" (typescript-sdk#2283):
 * that handler runs on and answers, so its response stays open for it — such
 * an id counts as none.
 */
function clientCancelledRequestOf(message: JSONRPCMessage): RequestId | undefined {
  return cancelledRequestOf(message) || undefined;
}

/** The SDK's own id of a server→client request, from its wire id (`<tag>.<n>`). */
function fromWire(id: string): RequestId {
  const own = id.slice(id.indexOf('.') + 1);
  return /^(0|[1-9][0-9]{0,15})$/.test(own) ? Number(own) : own;
}

function sessionGone(): McphostError {
  return new McphostError(
    'ERR_SESSION_NOT_FOUND',
    'Session not found: it was closed; start a new session with initialize',
  );
}
