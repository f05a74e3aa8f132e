/**
 * Stable codes of the failures that travel over stdio (in `result` and `reply`).
 * Tests and clients match on these; messages may be reworded, codes may not.
 */
export const ERROR_CODES = [
  /** Tool code threw; the message is the thrown error's message. */
  'ERR_TOOL_ERROR',
  /** Tool code does not compile; line and column are set. */
  'ERR_TOOL_SYNTAX',
  /** The invocation ran past its time limit. */
  'ERR_TOOL_TIMEOUT',
  /** The invocation ran out of its memory limit. */
  'ERR_TOOL_MEMORY',
  /** The returned value cannot be turned into JSON (cycle, BigInt, function…). */
  'ERR_RESULT_NOT_SERIALISABLE',
  /** The serialised result is larger than allowed. */
  'ERR_RESULT_TOO_LARGE',
  /** The invocation was cancelled by the caller. */
  'ERR_CANCELLED',
  /** Arguments of an sdk call are not of the documented shape. */
  'ERR_INVALID_ARGUMENT',
  /** The egress policy refused the destination. */
  'ERR_EGRESS_DENIED',
  /** An outbound HTTP request failed (connection refused, DNS, TLS…). */
  'ERR_HTTP_FAILED',
  /** An outbound HTTP request ran past its time limit. */
  'ERR_HTTP_TIMEOUT',
  /** An outbound HTTP response was larger than allowed. */
  'ERR_HTTP_TOO_LARGE',
  /** An outbound HTTP request was redirected more often than allowed. */
  'ERR_HTTP_TOO_MANY_REDIRECTS',
  /** An invocation has as many sdk calls in flight as it may; this one was not made. */
  'ERR_TOO_MANY_CALLS',
  /** A brokered answer (HTTP body, database rows) is too large to send to the runner. */
  'ERR_REPLY_TOO_LARGE',
  /** A database refused a statement or a connection; the message is the database's. */
  'ERR_DB_FAILED',
  /** A table or column name is not a plain identifier. */
  'ERR_DB_IDENTIFIER',
  /**
   * The calling client cannot take a request the tool made (elicitation or
   * sampling it did not announce, or a test run with no client at all).
   */
  'ERR_CLIENT_UNSUPPORTED',
  /** The calling client answered an elicitation or sampling request with an error, or not at all. */
  'ERR_CLIENT_FAILED',
  /** The tool's result does not match its declared `outputSchema`; the message names the path. */
  'ERR_OUTPUT_INVALID',
  /** The harness or the control plane broke the stdio contract. */
  'ERR_PROTOCOL',
  /** The container died while running the invocation. */
  'ERR_CONTAINER_CRASHED',
  /** An unexpected failure inside mcphost; the message says where. */
  'ERR_INTERNAL',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];
