/**
 * Sorts one `tools/call` outcome into a kind: its own token back (`ok`),
 * another call's token (`mixed-up`: the failure the suite exists to catch),
 * a tool-level error with its stable code, a JSON-RPC error, a client-side
 * timeout, or a transport failure. An error without a code or message is
 * `unclear`, which the suite also fails on.
 */
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** Prefix of every token the load generates; an answer carrying one that is not ours is a mix-up. */
export const TOKEN_PREFIX = 'tok-';

/** One classified outcome: `kind` is what the figures count, `message` what a user would read. */
export interface ClassifiedAnswer {
  kind: string;
  message?: string;
}

/** Classifies a result the client received for the call that sent `token`. */
export function classifyResult(result: CallToolResult, token: string): ClassifiedAnswer {
  const first = result.content[0];
  const text = first?.type === 'text' ? first.text : '';
  if (!result.isError) {
    if (text === token) return { kind: 'ok' };
    if (text.includes(TOKEN_PREFIX)) return { kind: 'mixed-up', message: text };
    return { kind: 'wrong-answer', message: text.slice(0, 200) };
  }
  if (text.includes(TOKEN_PREFIX)) return { kind: 'mixed-up', message: text };
  const code = result._meta?.['mcphost/errorCode'];
  if (typeof code !== 'string' || text.trim() === '') return { kind: 'unclear', message: text };
  return { kind: `tool-error:${code}`, message: text };
}

/** Classifies what the client threw for a call. */
export function classifyThrown(error: unknown): ClassifiedAnswer {
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout) return { kind: 'timeout', message: error.message };
    return { kind: `rpc-error:${error.code}`, message: error.message };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { kind: 'transport', message };
}
