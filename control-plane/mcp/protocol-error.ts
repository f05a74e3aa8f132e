/**
 * A McphostError as the SDK's protocol layer sends it: the protocol answers a
 * failed handler with `error.code` when it is a number, `error.message` and
 * `error.data`. Throwing the SDK's `McpError` instead would prefix the message
 * with "MCP error -32602:", which clients then prefix once more.
 */
import { jsonRpcErrorOf, type McphostError } from '../errors.js';

/** An Error carrying the JSON-RPC code, plain message and `data.code` the registry gives `error`. */
export function toProtocolError(error: McphostError): Error & { code: number; data: unknown } {
  const { code, message, data } = jsonRpcErrorOf(error);
  return Object.assign(new Error(message), { code, data });
}
