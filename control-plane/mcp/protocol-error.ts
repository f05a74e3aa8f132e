/**
 * A McphostError as the SDK's protocol layer sends it: the protocol answers a
 * failed handler with `error.code` when it is a number, `error.message` and
 * `error.data`. Throwing the SDK's `McpError` instead would prefix the message
 * with "MCP error -32602:", which clients then prefix once more.
 */
import { jsonRpcErrorOf } from '../errors.js';

/**
 * An Error carrying the JSON-RPC code, plain message and `data.code` the
 * registry gives `error`; anything not a McphostError is ERR_INTERNAL with
 * the generic message (a bug's text never reaches a client).
 */
export function toProtocolError(error: unknown): Error & { code: number; data: unknown } {
  const { code, message, data } = jsonRpcErrorOf(error);
  return Object.assign(new Error(message), { code, data });
}
