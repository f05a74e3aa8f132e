/**
 * Who is calling, as strings that key maps: the identity a session is bound
 * to, and the identity that quotas and rate limits count against. Both are
 * JSON arrays, so no choice of subject or client id can make two different
 * callers produce the same key (a `:`-joined key could: sub `x:y` + client
 * `z` equals sub `x` + client `y:z`).
 */
import { clientNetworkOf } from '../http/index.js';
import type { Caller } from '../identity/index.js';

/**
 * Identity a session is bound to: the same subject and client must come
 * back; with an API key, the same key (another key of the same server is
 * another caller, so a session id leaked with one key is no use with another).
 */
export function callerKeyOf(caller: Caller): string {
  switch (caller.kind) {
    case 'oauth':
      return JSON.stringify(['oauth', caller.subject ?? null, caller.clientId ?? null]);
    case 'apikey':
      return JSON.stringify(['apikey', caller.keyId]);
    default:
      return JSON.stringify([caller.kind]);
  }
}

/**
 * Whom session quotas and rate limits count against: an API-key caller by its
 * key; an OAuth caller by its subject (by its client when the token names no
 * subject); anyone else by the client's network (`clientNetworkOf`).
 */
export function quotaKeyOf(caller: Caller, remoteAddress: string | undefined): string {
  if (caller.kind === 'apikey') return JSON.stringify(['key', caller.keyId]);
  if (caller.kind === 'oauth') {
    if (caller.subject !== undefined) return JSON.stringify(['sub', caller.subject]);
    if (caller.clientId !== undefined) return JSON.stringify(['client', caller.clientId]);
  }
  return JSON.stringify(['ip', clientNetworkOf(remoteAddress)]);
}
