/**
 * Who is calling, as strings that key maps: the identity a session is bound
 * to, and the identity that quotas and rate limits count against. Both are
 * JSON arrays, so no choice of subject or client id can make two different
 * callers produce the same key (a `:`-joined key could: sub `x:y` + client
 * `z` equals sub `x` + client `y:z`).
 */
import { isIPv4, isIPv6 } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Caller } from '../invocation/index.js';

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
 * subject); anyone else by the client's network — its IPv4 address, or the /64 of an IPv6 address (one
 * host commonly holds a whole /64, so counting each address would give it
 * 2^64 budgets). An IPv4-mapped IPv6 address counts as its IPv4 address.
 */
export function quotaKeyOf(caller: Caller, remoteAddress: string | undefined): string {
  if (caller.kind === 'apikey') return JSON.stringify(['key', caller.keyId]);
  if (caller.kind === 'oauth') {
    if (caller.subject !== undefined) return JSON.stringify(['sub', caller.subject]);
    if (caller.clientId !== undefined) return JSON.stringify(['client', caller.clientId]);
  }
  return JSON.stringify(['ip', networkOf(remoteAddress)]);
}

/** The address an anonymous caller is counted by: IPv4 as is, IPv6 by its /64. */
function networkOf(remoteAddress: string | undefined): string {
  if (remoteAddress === undefined) return 'unknown';
  // Every request asks: the socket's address is already canonical, so IPv4 needs no parsing.
  if (isIPv4(remoteAddress)) return remoteAddress;
  const mapped = remoteAddress.startsWith('::ffff:') ? remoteAddress.slice(7) : undefined;
  if (mapped !== undefined && isIPv4(mapped)) return mapped;
  if (!isIPv6(remoteAddress)) return 'unknown';
  const parts = ipaddr.IPv6.parse(remoteAddress).parts.slice(0, 4);
  return `${parts.map((part) => part.toString(16)).join(':')}::/64`;
}
