/**
 * Every failure that can reach an operator or an MCP client is a
 * `McphostError` with a stable `code`, and every code has one entry in
 * `ERROR_REGISTRY`: its HTTP status, its JSON-RPC code, whether it is a
 * failure of mcphost itself, why a container that failed this way leaves its
 * pool, and whether its message may travel to a client as written. Nothing
 * else decides any of these (fastify's `lib/errors.js` is the model); a test
 * holds the registry against the README's table of codes.
 */
import { ProtocolErrorCode as JsonRpc } from '@modelcontextprotocol/server';
import type { ErrorCode } from '../src/protocol/index.js';

/** Why a container whose invocation failed this way leaves its pool (see pool/pooled-instance.ts). */
export type FaultRetireReason = 'timeout' | 'memory' | 'crash' | 'protocol' | 'cancelled';

/** What the service does with one error code. */
export interface ErrorSpec {
  /** HTTP status when the error answers a request. */
  readonly status: number;
  /** JSON-RPC `error.code` when it answers an MCP message outside a tool result. */
  readonly jsonRpc: number;
  /** A failure of mcphost or its engine, not of the tool or the caller: logged as a warning. */
  readonly infrastructure: boolean;
  /** Set for failures after which the container is not trusted again. */
  readonly retire?: FaultRetireReason;
  /** False: the message may name host details; a client sees a generic message instead. */
  readonly exposable: boolean;
  /** One line for the documentation (the README's table is checked against these). */
  readonly meaning: string;
  /**
   * True when the specification shapes this error's `data` itself: the
   * error's details are sent as `data`, without mcphost's `code` beside them
   * (a client recognises "resource not found" by `data` being exactly `{uri}`).
   */
  readonly specData?: boolean;
}

// Shorthands for the table below; a spec without `infrastructure`/`exposable` is neither/yes.
function spec(
  status: number,
  jsonRpc: number,
  meaning: string,
  extra: Partial<Pick<ErrorSpec, 'infrastructure' | 'retire' | 'exposable' | 'specData'>> = {},
): ErrorSpec {
  return Object.freeze({
    status,
    jsonRpc,
    meaning,
    infrastructure: false,
    exposable: true,
    ...extra,
  });
}
// Transport errors use the codes the SDK's own transport uses (-32000 for request
// problems, -32001 for an unknown session): clients already know what they mean.
const REQUEST = -32000; // the SDK transport's "bad request"
const SESSION = -32001; // the SDK transport's "session not found"
const INTERNAL = JsonRpc.InternalError;

/** Codes that exist only on the control-plane side (never on the stdio wire). */
const CONTROL_PLANE = {
  ERR_VALIDATION: spec(
    400,
    JsonRpc.InvalidParams,
    'A request body, parameter or setting is invalid; `details` lists each problem.',
  ),
  ERR_PAYLOAD_TOO_LARGE: spec(413, REQUEST, 'A request body is larger than allowed.'),
  ERR_NOT_FOUND: spec(404, REQUEST, 'No such server, tool, version, path or record.'),
  ERR_METHOD_NOT_ALLOWED: spec(405, REQUEST, 'The path exists but not for this HTTP method.'),
  ERR_CONFLICT: spec(409, REQUEST, 'The record already exists or changed meanwhile.'),
  ERR_UNAUTHORIZED: spec(
    401,
    REQUEST,
    'No valid credential was sent: an admin token, personal token or session; or a hosted server’s API key.',
  ),
  ERR_FORBIDDEN: spec(
    403,
    REQUEST,
    'The caller may not do this (its role, or an Origin not allowed, for example).',
  ),
  ERR_CSRF: spec(
    403,
    REQUEST,
    'A dashboard-session request that changes something lacked its CSRF token or came from another origin.',
  ),
  ERR_SIGN_IN_FAILED: spec(
    401,
    REQUEST,
    'The e-mail or password is wrong, or the sign-in was refused.',
  ),
  ERR_SIGN_IN_THROTTLED: spec(
    429,
    REQUEST,
    'Too many failed sign-ins for this account or from this address; retry later.',
  ),
  ERR_SERVER_INACTIVE: spec(503, REQUEST, 'The hosted server is deactivated.'),
  ERR_OAUTH_METADATA: spec(
    422,
    JsonRpc.InvalidParams,
    "The Authorization Server's metadata is missing or invalid (when saving OAuth settings).",
  ),
  ERR_AUTH_SERVER_UNAVAILABLE: spec(
    503,
    REQUEST,
    "The Authorization Server's metadata or keys cannot be fetched or used now: tokens cannot be checked.",
    { infrastructure: true },
  ),
  ERR_INVALID_TOKEN: spec(
    401,
    REQUEST,
    'A bearer token is missing, expired, of another audience or badly signed.',
  ),
  ERR_INSUFFICIENT_SCOPE: spec(403, REQUEST, 'A bearer token lacks a required scope.'),
  ERR_RATE_LIMITED: spec(
    429,
    REQUEST,
    'The caller sent more requests than its rate allows; retry after `Retry-After`.',
  ),
  ERR_SESSION_QUOTA: spec(
    429,
    REQUEST,
    'The caller or the server holds as many MCP sessions as it may, all busy (with replicas: used within the last half minute).',
  ),
  ERR_INPUT_QUOTA: spec(
    429,
    REQUEST,
    'The caller or the server has as many modern-era calls waiting for client input as it may.',
  ),
  ERR_SUBSCRIPTION_QUOTA: spec(
    429,
    REQUEST,
    'The caller or the server holds as many `subscriptions/listen` streams as it may.',
  ),
  ERR_NO_CAPACITY: spec(503, REQUEST, 'No container (or MCP session place) could be had in time.', {
    infrastructure: true,
  }),
  ERR_SANDBOX_UNAVAILABLE: spec(
    503,
    REQUEST,
    'The Docker engine does not answer or refused to start a container.',
    { infrastructure: true },
  ),
  ERR_RUNTIME_UNAVAILABLE: spec(
    422,
    JsonRpc.InvalidParams,
    'The container runtime asked for (e.g. runsc) is not registered with the engine.',
  ),
  ERR_LIMIT_ABOVE_CEILING: spec(
    422,
    JsonRpc.InvalidParams,
    "A limit being saved is above its ceiling: the server's limits (for a tool, prompt or resource) or the host's TOOL_MAX_*; `details` names each.",
  ),
  ERR_SHUTTING_DOWN: spec(
    503,
    REQUEST,
    'The service is stopping; retry on another replica or later.',
    { infrastructure: true },
  ),
  ERR_IMAGE_BUILD: spec(500, INTERNAL, 'The runner image could not be built.', {
    infrastructure: true,
  }),
  // Hidden: a driver's message can name hosts and users of the database.
  ERR_STORE: spec(503, INTERNAL, 'The configuration store failed or does not answer.', {
    infrastructure: true,
    exposable: false,
  }),
  ERR_NOT_YET_SERVED: spec(
    503,
    INTERNAL,
    'A change was saved, but this replica could not load it yet (it retries; the log has the cause).',
    { infrastructure: true },
  ),
  ERR_NOT_AUDITED: spec(
    503,
    INTERNAL,
    'A change was made, but its audit entry could not be written in time (the log has the entry and the cause).',
    { infrastructure: true },
  ),
  ERR_CONFIG: spec(500, INTERNAL, 'A configuration value is invalid (at start-up).', {
    exposable: false,
  }),
  ERR_PORT_UNAVAILABLE: spec(
    500,
    INTERNAL,
    'A listener cannot open its port at start-up (in use by another program, not permitted, or LISTEN_HOST is not an address of this machine); the message names the setting.',
    { infrastructure: true },
  ),
  // MCP Streamable HTTP transport: the statuses the specification names.
  ERR_PARSE: spec(400, JsonRpc.ParseError, 'An MCP request body is not JSON.'),
  ERR_INVALID_REQUEST: spec(
    400,
    JsonRpc.InvalidRequest,
    'An MCP message is not a valid JSON-RPC message.',
  ),
  ERR_BAD_REQUEST: spec(
    400,
    REQUEST,
    'A request breaks the rules of its protocol (MCP transport: missing session id, unsupported protocol version; RFC 6750: a token in the query string, an empty bearer token).',
  ),
  ERR_CLIENT_DECLARATION: spec(
    400,
    JsonRpc.InvalidParams,
    "A request's client capabilities or client info (`_meta` in 2026-07-28, `initialize` before) are larger than 16 KiB of JSON or nest deeper than 16 levels.",
  ),
  ERR_NOT_ACCEPTABLE: spec(
    406,
    REQUEST,
    'An MCP request does not accept the media types the transport answers with.',
  ),
  ERR_UNSUPPORTED_MEDIA_TYPE: spec(415, REQUEST, 'An MCP request body is not `application/json`.'),
  ERR_SESSION_NOT_FOUND: spec(
    404,
    SESSION,
    'The MCP session is unknown, expired or closed; start a new one with initialize.',
  ),
  ERR_STREAM_NOT_FOUND: spec(
    // Not 404: clients read a 404 on a request with a session id as "session gone".
    400,
    REQUEST,
    'A `Last-Event-ID` names no event of this session that can still be resumed (never sent, its call ended longer ago than MCP_RESUME_WINDOW_MS, or the stream was dropped past MCP_RESUME_MAX_BYTES*).',
  ),
  ERR_UNKNOWN_TOOL: spec(404, JsonRpc.InvalidParams, 'The hosted server has no tool of this name.'),
  ERR_UNKNOWN_PROMPT: spec(
    404,
    JsonRpc.InvalidParams,
    'The hosted server has no prompt of this name (or no template of this URI template, for a completion).',
  ),
  // MCP 2026-07-28 answers a resource that does not exist with -32602 and `data: {uri}`
  // (SEP-2164); the SDK sends the same in the 2025 era, where -32002 was used before.
  ERR_UNKNOWN_RESOURCE: spec(
    404,
    JsonRpc.InvalidParams,
    'No static resource of the hosted server has this URI and no resource template matches it; `data` is `{uri}`.',
    { specData: true },
  ),
} as const satisfies Record<string, ErrorSpec>;

export type ControlPlaneErrorCode = keyof typeof CONTROL_PLANE;
export type McphostErrorCode = ErrorCode | ControlPlaneErrorCode;

/** The one table of every code (the stdio wire's codes first). */
export const ERROR_REGISTRY: Readonly<Record<McphostErrorCode, ErrorSpec>> = Object.freeze({
  ERR_TOOL_ERROR: spec(422, INTERNAL, 'The tool threw; the message is what it threw.'),
  ERR_TOOL_SYNTAX: spec(
    422,
    JsonRpc.InvalidParams,
    'The tool code does not compile; line and column are given.',
  ),
  ERR_TOOL_TIMEOUT: spec(504, INTERNAL, 'The invocation ran past its time limit.', {
    retire: 'timeout',
  }),
  ERR_TOOL_MEMORY: spec(507, INTERNAL, 'The invocation ran out of its memory limit.', {
    retire: 'memory',
  }),
  ERR_RESULT_NOT_SERIALISABLE: spec(
    422,
    INTERNAL,
    'The returned value cannot become JSON (cycle, BigInt, function, …).',
  ),
  ERR_RESULT_TOO_LARGE: spec(422, INTERNAL, 'The serialised result is larger than allowed.'),
  ERR_CANCELLED: spec(499, REQUEST, 'The caller cancelled the invocation.', {
    retire: 'cancelled',
  }),
  ERR_INVALID_ARGUMENT: spec(
    400,
    JsonRpc.InvalidParams,
    "Arguments do not match the tool's parameters or an sdk call's shape.",
  ),
  ERR_EGRESS_DENIED: spec(
    403,
    INTERNAL,
    'The egress policy refused the destination of an outbound request.',
  ),
  ERR_HTTP_FAILED: spec(502, INTERNAL, 'An outbound HTTP request failed (refused, DNS, TLS, …).'),
  ERR_HTTP_TIMEOUT: spec(504, INTERNAL, 'An outbound HTTP request ran past its time limit.'),
  ERR_HTTP_TOO_LARGE: spec(502, INTERNAL, 'An outbound HTTP response was larger than allowed.'),
  ERR_HTTP_TOO_MANY_REDIRECTS: spec(
    502,
    INTERNAL,
    'An outbound HTTP request was redirected too often.',
  ),
  ERR_TOO_MANY_CALLS: spec(
    429,
    INTERNAL,
    'An invocation has as many sdk calls in flight as it may.',
  ),
  ERR_REPLY_TOO_LARGE: spec(
    502,
    INTERNAL,
    'A brokered answer (HTTP body, rows) is too large to hand to the tool.',
  ),
  ERR_DB_FAILED: spec(
    502,
    INTERNAL,
    "A database refused a statement or a connection; the message is the database's.",
  ),
  ERR_DB_IDENTIFIER: spec(
    400,
    JsonRpc.InvalidParams,
    'A table or column name is not a plain identifier.',
  ),
  ERR_CLIENT_UNSUPPORTED: spec(
    422,
    JsonRpc.InvalidRequest,
    'The tool asked the calling client for elicitation, sampling or its roots, which it does not offer (or a test run, which has no client; or a request that cannot wait for input, such as completion/complete).',
  ),
  ERR_CLIENT_FAILED: spec(
    502,
    INTERNAL,
    'The calling client answered an elicitation or sampling request with an error.',
  ),
  ERR_OUTPUT_INVALID: spec(
    422,
    INTERNAL,
    "The tool's result does not match its `outputSchema`; the message names the path.",
  ),
  ERR_PROTOCOL: spec(502, INTERNAL, 'The harness or the control plane broke the stdio contract.', {
    infrastructure: true,
    retire: 'protocol',
  }),
  ERR_CONTAINER_CRASHED: spec(502, INTERNAL, 'The container died while running the invocation.', {
    infrastructure: true,
    retire: 'crash',
  }),
  ERR_INTERNAL: spec(
    500,
    INTERNAL,
    'An unexpected failure inside mcphost (the log has the detail).',
    { infrastructure: true, exposable: false },
  ),
  ...CONTROL_PLANE,
});

/** The message a client sees for an error whose own message may not travel. */
export const GENERIC_MESSAGE = 'internal error; see the control plane log';

export class McphostError extends Error {
  readonly code: McphostErrorCode;
  /** Structured detail safe to show the caller (never a secret). */
  readonly details?: unknown;

  constructor(
    code: McphostErrorCode,
    message: string,
    options?: { details?: unknown; cause?: unknown },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'McphostError';
    this.code = code;
    this.details = options?.details;
  }
}

/** ERR_CANCELLED for `what` (an invocation, an HTTP request, a database call), worded alike everywhere. */
export function cancelledError(what: string): McphostError {
  return new McphostError('ERR_CANCELLED', `${what} was cancelled`);
}

/** True when `error` is a McphostError, optionally with the given code. */
export function isMcphostError(error: unknown, code?: McphostErrorCode): error is McphostError {
  return error instanceof McphostError && (code === undefined || error.code === code);
}

/** The registry entry of a code; an unknown code (from an old row, say) is ERR_INTERNAL's. */
export function errorSpecOf(code: string): ErrorSpec {
  return Object.hasOwn(ERROR_REGISTRY, code)
    ? ERROR_REGISTRY[code as McphostErrorCode]
    : ERROR_REGISTRY.ERR_INTERNAL;
}

/** A failure as a client may see it: its code, and its message unless the code hides it. */
export interface PublicError {
  code: McphostErrorCode;
  message: string;
  details?: unknown;
}

/** Any thrown value as a client may see it; anything not a McphostError is ERR_INTERNAL. */
export function publicErrorOf(error: unknown): PublicError {
  if (!isMcphostError(error)) return { code: 'ERR_INTERNAL', message: GENERIC_MESSAGE };
  const spec = ERROR_REGISTRY[error.code];
  if (!spec.exposable) return { code: error.code, message: GENERIC_MESSAGE };
  return error.details === undefined
    ? { code: error.code, message: error.message }
    : { code: error.code, message: error.message, details: error.details };
}

/**
 * A JSON-RPC error object for any thrown value; the stable code travels in
 * `data.code`, except where the specification shapes `data` (`specData`).
 */
export function jsonRpcErrorOf(error: unknown): {
  code: number;
  message: string;
  data: Record<string, unknown>;
} {
  const shown = publicErrorOf(error);
  const spec = ERROR_REGISTRY[shown.code];
  if (spec.specData === true && shown.details !== null && typeof shown.details === 'object') {
    return {
      code: spec.jsonRpc,
      message: shown.message,
      data: shown.details as Record<string, unknown>,
    };
  }
  const data: { code: McphostErrorCode; details?: unknown } = { code: shown.code };
  if (shown.details !== undefined) data.details = shown.details;
  return { code: spec.jsonRpc, message: shown.message, data };
}
