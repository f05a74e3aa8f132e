/**
 * Which era a POST to `/mcp` belongs to. The SDK's classifier
 * (`classifyInboundRequest`) is the authority; it runs four zod guards on
 * every body (three of them failing ones, which build their issues) and
 * validates the `_meta` envelope, ~10–30 µs a request. Two common requests
 * are decided without it, each only where its verdict is certain:
 *
 * - a session's plain request (no claim, no modern header, not
 *   `initialize`): the classifier's last rule, "no claim", says legacy;
 * - a modern request whose shape leaves the classifier one answer: a single
 *   JSON-RPC request (the SDK's own guard), not `initialize`, whose `_meta`
 *   claims this server's revision and whose `MCP-Protocol-Version` and
 *   `Mcp-Method` headers say exactly the same. The one rung left unread is
 *   the envelope's schema, and the SDK's protocol layer checks the very same
 *   schema before any handler runs: when it refuses, the request is
 *   classified after all and the classifier's own refusal is the answer
 *   (`classifierRefusal`), so a client sees what it always saw.
 *
 * Everything else (batches, notifications, answers, retries carrying a
 * `requestState`, listen streams, `initialize`, any header with optional
 * whitespace) goes to the classifier. `test/control-plane/mcp/era-routing.unit.test.ts`
 * holds the fast verdicts to the classifier's on generated requests.
 */
import type { IncomingMessage } from 'node:http';
import {
  classifyInboundRequest,
  isJSONRPCRequest,
  PROTOCOL_VERSION_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
  type InboundClassificationOutcome as InboundRoute,
  type JSONRPCRequest,
} from '@modelcontextprotocol/server';
import { MODERN_PROTOCOL_VERSION } from './hosted-mcp-server.js';
import type { IncomingPost } from './incoming-request.js';

/** An era decided: the classifier's outcome, and whether its envelope rung is still to run. */
export interface EraRoute {
  outcome: InboundRoute;
  /**
   * True when the route was decided without the classifier's envelope check:
   * a refusal by the protocol layer's own check of it must then be answered
   * with `classifierRefusal`.
   */
  envelopeUnchecked: boolean;
}

const LEGACY: InboundRoute = { kind: 'legacy', reason: 'no-claim' };

/** The revisions before the modern era that the SDK speaks. */
const LEGACY_VERSIONS: ReadonlySet<string> = new Set(
  SUPPORTED_PROTOCOL_VERSIONS.filter((version) => version < MODERN_PROTOCOL_VERSION),
);

/** The era of a POST (see the module comment). */
export function routeOf(req: IncomingMessage, post: IncomingPost): EraRoute {
  if (plainLegacyRequest(req, post)) return { outcome: LEGACY, envelopeUnchecked: false };
  const modern = plainModernRequest(req, post);
  if (modern !== undefined) {
    return {
      outcome: {
        kind: 'modern',
        messageKind: 'request',
        message: modern,
        classification: { era: 'modern', revision: MODERN_PROTOCOL_VERSION },
      },
      envelopeUnchecked: true,
    };
  }
  return { outcome: classify(req, post), envelopeUnchecked: false };
}

/**
 * The classifier's refusal of a POST routed without it, when it refuses it;
 * undefined when it would have routed it as it was.
 */
export function classifierRefusal(
  req: IncomingMessage,
  post: IncomingPost,
): Extract<InboundRoute, { kind: 'reject' }> | undefined {
  const outcome = classify(req, post);
  return outcome.kind === 'reject' ? outcome : undefined;
}

function classify(req: IncomingMessage, post: IncomingPost): InboundRoute {
  return classifyInboundRequest({
    httpMethod: 'POST',
    protocolVersionHeader: header(req, 'mcp-protocol-version'),
    mcpMethodHeader: header(req, 'mcp-method'),
    mcpNameHeader: header(req, 'mcp-name'),
    body: post.batch ? post.messages : post.messages[0],
  });
}

/**
 * True for the commonest request of a session, which the classifier would
 * route to the legacy era by its last rule ("no claim"): one request, not
 * `initialize`, no `_meta` protocol-version claim, no modern
 * `MCP-Protocol-Version` header.
 */
function plainLegacyRequest(req: IncomingMessage, post: IncomingPost): boolean {
  const [message] = post.messages;
  if (post.batch || message === undefined || !('method' in message) || !('id' in message)) {
    return false;
  }
  if (message.method === 'initialize') return false;
  // Absent, or exactly an earlier revision: any other value (one with optional
  // whitespace the classifier strips, one it does not know) is the classifier's to read.
  const version = req.headers['mcp-protocol-version'];
  if (version !== undefined && !(typeof version === 'string' && LEGACY_VERSIONS.has(version))) {
    return false;
  }
  const meta = (message.params as { _meta?: unknown } | undefined)?._meta;
  return !(isPlainObject(meta) && PROTOCOL_VERSION_META_KEY in meta);
}

/** The request of a POST whose only possible verdict is "modern, at this revision"; else undefined. */
function plainModernRequest(req: IncomingMessage, post: IncomingPost): JSONRPCRequest | undefined {
  const [message] = post.messages;
  if (post.batch || message === undefined || post.messages.length !== 1) return undefined;
  // Neither an answer's keys (the classifier's first guards) nor anything but a request.
  if ('result' in message || 'error' in message || !isJSONRPCRequest(message)) return undefined;
  const { method, params } = message;
  if (method === 'initialize' || method === 'subscriptions/listen') return undefined;
  if (!isPlainObject(params) || 'requestState' in params) return undefined;
  const meta = params._meta;
  if (!isPlainObject(meta) || meta[PROTOCOL_VERSION_META_KEY] !== MODERN_PROTOCOL_VERSION) {
    return undefined;
  }
  // Exactly equal: a value with optional whitespace is the classifier's to read.
  if (req.headers['mcp-protocol-version'] !== MODERN_PROTOCOL_VERSION) return undefined;
  const methodHeader = req.headers['mcp-method'];
  if (methodHeader !== undefined && methodHeader !== method) return undefined;
  return message;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
