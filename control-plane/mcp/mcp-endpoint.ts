/**
 * `/mcp` of a hosted server, in both protocol eras, decided per request as
 * the specification's backward-compatibility section says: a POST is read
 * once (incoming-request.ts) and classified by the SDK's own classifier
 * (`classifyInboundRequest`, or its certain verdicts without it: era-routing.ts):
 * a request whose `_meta` claims a protocol
 * version — or whose `MCP-Protocol-Version` header names a modern one — is
 * the modern era's (modern-endpoint.ts, stateless); `initialize`, requests
 * of a session and everything without a claim are the legacy era's
 * (legacy-sessions.ts); what the classifier refuses (a header that
 * contradicts the body, a malformed envelope) is answered with its own
 * status and code. GET and DELETE are session operations of the legacy era.
 *
 * Every error answer carries the request's id when it could be read, and is
 * a McphostError with the registry's status and code, never a 500.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SUPPORTED_PROTOCOL_VERSIONS, type RequestId } from '@modelcontextprotocol/server';
import { isMcphostError, McphostError } from '../errors.js';
import { sendJson, sendJsonRpcError } from '../http/index.js';
import { checkClientDeclarations } from './client-declarations.js';
import { classifierRefusal, routeOf } from './era-routing.js';
import { readPost, type IncomingPost } from './incoming-request.js';
import { LegacySessions, type LegacySessionsOptions } from './legacy-sessions.js';
import { unsupportedRevision, type LadderAnswer, type ModernEndpoint } from './modern-endpoint.js';
import type { ParkRelay } from './park-relay.js';
import type { RequestScope } from './request-scope.js';
import type { SessionSignalHandlers } from './shared-sessions.js';

export interface McpEndpointOptions extends LegacySessionsOptions {
  /** Largest request body, in bytes. */
  maxBodyBytes: number;
  /** The modern era (2026-07-28); absent: this endpoint speaks the legacy era only (tests of it). */
  modern?: ModernEndpoint;
}

export class McpEndpoint {
  readonly #options: McpEndpointOptions;
  readonly #legacy: LegacySessions;

  constructor(options: McpEndpointOptions) {
    this.#options = options;
    this.#legacy = new LegacySessions(options);
  }

  /**
   * What this replica does with the other replicas' signals (see
   * SharedSessions.start): the legacy era's sessions, and the park relay's
   * addresses (park-relay.ts).
   */
  signalHandlers(relay?: ParkRelay): SessionSignalHandlers {
    const legacy = this.#legacy.signalHandlers();
    if (relay === undefined) return legacy;
    return {
      ...legacy,
      holds: (id) => relay.holds(id) || legacy.holds(id),
      message: (id, message) =>
        relay.holds(id) ? relay.deliver(id, message) : legacy.message(id, message),
    };
  }

  /**
   * Answers one request to `/mcp`. `chargeBatch(requests)` is told how many
   * JSON-RPC messages a POST holds before any is answered, and throws
   * (ERR_RATE_LIMITED) when the caller may not send that many.
   */
  async handle(
    req: IncomingMessage,
    res: ServerResponse,
    subdomain: string,
    scope: RequestScope,
    chargeBatch: (requests: number) => void = () => undefined,
  ): Promise<void> {
    let id: RequestId | null = null;
    try {
      if (req.method !== 'POST' && req.method !== 'GET' && req.method !== 'DELETE') {
        throw new McphostError('ERR_METHOD_NOT_ALLOWED', 'Method not allowed.');
      }
      if (req.method !== 'POST') {
        await this.#legacy.handleSessionRequest({ req, res, subdomain, scope });
        return;
      }
      const post = await readPost(req, this.#options.maxBodyBytes);
      id = singleRequestId(post);
      // Every message counts: a client answer or cancellation may be relayed to another replica.
      chargeBatch(post.messages.length);
      // Before the SDK's schemas read what the client declares of itself (client-declarations.ts).
      for (const message of post.messages) checkClientDeclarations(message);
      const { outcome, envelopeUnchecked } = routeOf(req, post);
      switch (outcome.kind) {
        case 'reject':
          answerLadder(res, ladderAnswerOf(outcome, id));
          return;
        case 'modern': {
          const modern = this.#options.modern;
          const refused =
            modern === undefined
              ? legacyOnly(outcome.classification.revision, id)
              : await modern.serve(outcome, {
                  req,
                  res,
                  subdomain,
                  scope,
                  // Routed without the classifier's envelope rung: its refusal stands in for the SDK's.
                  ...(envelopeUnchecked ? { refusalOf: () => ladderRefusalOf(req, post, id) } : {}),
                });
          if (refused !== undefined) answerLadder(res, refused);
          return;
        }
        case 'legacy':
          await this.#legacy.handlePost({ req, res, subdomain, scope }, post);
          return;
      }
    } catch (error) {
      if (!isMcphostError(error) || res.headersSent) throw error;
      req.resume();
      sendJsonRpcError(res, error, headersOf(error), id);
    }
  }
}

/** The id of a POST that holds one request, to echo in an error answer; null otherwise. */
function singleRequestId(post: IncomingPost): RequestId | null {
  const [first] = post.messages;
  return !post.batch && first !== undefined && 'method' in first && 'id' in first ? first.id : null;
}

/** The classifier's refusal of a POST routed without it, as the ladder answers it; undefined when it accepts it. */
function ladderRefusalOf(
  req: IncomingMessage,
  post: IncomingPost,
  id: RequestId | null,
): LadderAnswer | undefined {
  const refusal = classifierRefusal(req, post);
  return refusal === undefined ? undefined : ladderAnswerOf(refusal, id);
}

function ladderAnswerOf(
  outcome: Extract<ReturnType<typeof routeOf>['outcome'], { kind: 'reject' }>,
  id: RequestId | null,
): LadderAnswer {
  return {
    status: outcome.httpStatus,
    id,
    error: {
      code: outcome.code,
      message: outcome.message,
      ...(outcome.data === undefined ? {} : { data: outcome.data }),
    },
  };
}

/** The answer of an endpoint without the modern era to a modern request. */
function legacyOnly(revision: string | undefined, id: RequestId | null): LadderAnswer {
  return unsupportedRevision(revision, id, SUPPORTED_PROTOCOL_VERSIONS);
}

function answerLadder(res: ServerResponse, answer: LadderAnswer): void {
  sendJson(res, answer.status, { jsonrpc: '2.0', id: answer.id, error: answer.error });
}

const ALLOW = { allow: 'GET, POST, DELETE' };

/** Headers an error answer carries: Allow for a wrong method, Retry-After for a refused batch or session. */
function headersOf(error: McphostError): Record<string, string> {
  if (error.code === 'ERR_METHOD_NOT_ALLOWED') return ALLOW;
  if (
    error.code === 'ERR_SESSION_QUOTA' ||
    error.code === 'ERR_NO_CAPACITY' ||
    error.code === 'ERR_SUBSCRIPTION_QUOTA'
  ) {
    return { 'retry-after': '1' };
  }
  const retry = (error.details as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
  return error.code === 'ERR_RATE_LIMITED' && typeof retry === 'number'
    ? { 'retry-after': String(retry) }
    : {};
}
