/**
 * Who made a call (never a token or a key's value): found by the hosted
 * side's gate (http/server-gate.ts), or named by the admin side for a test
 * run. The invocation log records it without an OAuth token's scopes and
 * claims (`recordedCaller`); tool code sees it as `sdk.caller`
 * (invocation/caller-view.ts). An OAuth caller carries only the claims its
 * server lets code read (`allowedClaims`, applied by the gate).
 */
import { jsonBytesAtMost } from '../json-size.js';

export type Caller =
  | { kind: 'anonymous' }
  /** A test run from the admin side, by whom (an account's e-mail, or "admin token"). */
  | { kind: 'admin'; actor?: string }
  | {
      kind: 'oauth';
      subject?: string;
      clientId?: string;
      /** Granted scopes (what `sdk.caller` shows; not recorded). */
      scopes?: readonly string[];
      /** The verified token's claims that its server lets code read (not recorded). */
      claims?: Readonly<Record<string, unknown>>;
    }
  /** A hosted server's API key, by its id and label. */
  | { kind: 'apikey'; keyId: string; label: string };

/** Largest JSON of one claim's value kept for code to read. */
export const MAX_CLAIM_BYTES = 4096;

/**
 * The claims of `claims` that `allowed` names (a server's `callerClaims`),
 * each within MAX_CLAIM_BYTES of JSON; the rest is dropped where the token
 * is verified, so it never travels with the caller.
 */
export function allowedClaims(
  claims: Readonly<Record<string, unknown>>,
  allowed: readonly string[],
): Record<string, unknown> {
  const kept: [string, unknown][] = [];
  for (const name of allowed) {
    if (!Object.hasOwn(claims, name)) continue;
    const value = claims[name];
    if (value === undefined || jsonBytesAtMost(value, MAX_CLAIM_BYTES) > MAX_CLAIM_BYTES) continue;
    kept.push([name, value]);
  }
  return Object.fromEntries(kept);
}

/**
 * A caller as the invocation log records it: who, never what their token
 * said (scopes and claims stay in memory, for the call's own code).
 */
export function recordedCaller(caller: Caller): Caller {
  if (caller.kind !== 'oauth') return caller;
  return {
    kind: 'oauth',
    ...(caller.subject === undefined ? {} : { subject: caller.subject }),
    ...(caller.clientId === undefined ? {} : { clientId: caller.clientId }),
  };
}
