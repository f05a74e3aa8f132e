/**
 * Bounds on what a client says of itself, checked where a POST enters and
 * before the SDK reads it: the capabilities and implementation info a
 * request's `_meta` declares (2026-07-28) or `initialize` carries (earlier
 * revisions). The SDK checks capabilities against recursive JSON-value
 * schemas whose cost grows far faster than their size (a 3.6 MB
 * `elicitation` object took seconds of the main thread, and deep nesting
 * overflowed its stack), and every tenant's requests share that thread, so
 * a declaration past what any client sends is refused at once. The same
 * 16 KiB is what tool code may read of it (`sdk.client`).
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  type JSONRPCMessage,
} from '@modelcontextprotocol/server';
import { McphostError } from '../errors.js';
import { jsonBytesAtMost, jsonDeeperThan, jsonTextDeeperThan } from '../json-size.js';

/** Largest client declaration (capabilities or implementation info), in JSON bytes. */
export const MAX_CLIENT_DECLARATION_BYTES = 16 * 1024;
/** Deepest client declaration: capabilities nest three or four levels in practice. */
const MAX_CLIENT_DECLARATION_DEPTH = 16;
/**
 * Deepest message of any kind: no MCP message nests near this, and the
 * SDK's recursive schemas (and JSON Schema validation of arguments) must
 * not meet a nesting that overflows their stack.
 */
const MAX_MESSAGE_DEPTH = 64;

/**
 * Refuses a POST body (JSON text, before it is parsed) nesting deeper than
 * any message may (ERR_INVALID_REQUEST); a batch's array is one level more.
 */
export function checkBodyDepth(text: string): void {
  if (jsonTextDeeperThan(text, MAX_MESSAGE_DEPTH + 1)) {
    throw new McphostError(
      'ERR_INVALID_REQUEST',
      `Invalid Request: the message nests deeper than ${MAX_MESSAGE_DEPTH} levels`,
    );
  }
}

/** Refuses a request whose client declarations are too large or too deep (ERR_CLIENT_DECLARATION). */
export function checkClientDeclarations(message: JSONRPCMessage): void {
  if (!('method' in message)) return;
  const params = message.params as Record<string, unknown> | undefined;
  if (params === undefined || params === null || typeof params !== 'object') return;
  const meta = params._meta as Record<string, unknown> | undefined;
  const declared: [string, unknown][] = [];
  if (meta !== null && typeof meta === 'object') {
    declared.push(
      [`_meta["${CLIENT_CAPABILITIES_META_KEY}"]`, meta[CLIENT_CAPABILITIES_META_KEY]],
      [`_meta["${CLIENT_INFO_META_KEY}"]`, meta[CLIENT_INFO_META_KEY]],
    );
  }
  if (message.method === 'initialize') {
    declared.push(['capabilities', params.capabilities], ['clientInfo', params.clientInfo]);
  }
  for (const [where, value] of declared) {
    if (value === undefined) continue;
    if (jsonBytesAtMost(value, MAX_CLIENT_DECLARATION_BYTES) > MAX_CLIENT_DECLARATION_BYTES) {
      throw new McphostError(
        'ERR_CLIENT_DECLARATION',
        `${where} is larger than ${MAX_CLIENT_DECLARATION_BYTES} bytes of JSON`,
      );
    }
    if (jsonDeeperThan(value, MAX_CLIENT_DECLARATION_DEPTH)) {
      throw new McphostError(
        'ERR_CLIENT_DECLARATION',
        `${where} nests deeper than ${MAX_CLIENT_DECLARATION_DEPTH} levels`,
      );
    }
  }
}
