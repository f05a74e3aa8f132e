/**
 * Who is calling, as strings that key maps: the identity a session is bound
 * to, and the identity that quotas and rate limits count against. Both are
 * JSON arrays, so no choice of subject or client id can make two different
 * callers produce the same key (a `:`-joined key could: sub `x:y` + client
 * `z` equals sub `x` + client `y:z`).
 */
import type { Caller } from '../invocation/tool-invoker.js';

/** Identity a session is bound to: the same subject and client must come back. */
export function callerKeyOf(caller: Caller): string {
  return caller.kind === 'oauth'
    ? JSON.stringify(['oauth', caller.subject ?? null, caller.clientId ?? null])
    : JSON.stringify([caller.kind]);
}

/**
 * Whom session quotas and rate limits count against: an OAuth caller by its
 * subject (by its client when the token names no subject); anyone else by the
 * client's IP address (`remoteAddress` of the connection).
 */
export function quotaKeyOf(caller: Caller, remoteAddress: string | undefined): string {
  if (caller.kind === 'oauth') {
    if (caller.subject !== undefined) return JSON.stringify(['sub', caller.subject]);
    if (caller.clientId !== undefined) return JSON.stringify(['client', caller.clientId]);
  }
  return JSON.stringify(['ip', remoteAddress ?? 'unknown']);
}
