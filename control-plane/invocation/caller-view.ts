/**
 * Who made a call, as its code sees it (`sdk.caller`): the kind of
 * credential; for an OAuth token its subject, client, granted scopes and
 * the claims its server lets code read (the server's `callerClaims`); for an
 * API key its id and label; for an admin's test run, only that. Never a
 * token or a key's value. Bounded as the invoke line's schema is
 * (src/protocol/messages.ts `CallerView`), so no token can make a call fail:
 * a scope, subject or claim past the bounds is left out.
 */
import type { CallerView } from '../../src/protocol/index.js';
import { allowedClaims, type Caller } from '../identity/index.js';

/** Most scopes shown; a longest scope, subject or client id; a longest key label. */
const MAX_SCOPES = 256;
const MAX_NAME_LENGTH = 1024;
const MAX_LABEL_LENGTH = 256;

export function callerView(caller: Caller, claimNames: readonly string[]): CallerView {
  switch (caller.kind) {
    case 'oauth':
      return {
        kind: 'oauth',
        ...named('subject', caller.subject),
        ...named('clientId', caller.clientId),
        scopes: (caller.scopes ?? [])
          .filter((scope) => scope.length <= MAX_NAME_LENGTH)
          .slice(0, MAX_SCOPES),
        // Filtered again: the server's list may have changed since the gate let the call in.
        claims: allowedClaims(caller.claims ?? {}, claimNames),
      };
    case 'apikey':
      return {
        kind: 'apikey',
        scopes: [],
        claims: {},
        key: { id: caller.keyId, label: caller.label.slice(0, MAX_LABEL_LENGTH) },
      };
    case 'admin':
      // Who ran it stays out: an account's e-mail is not for untrusted code to send on.
      return { kind: 'admin', scopes: [], claims: {} };
    case 'anonymous':
      return { kind: 'anonymous', scopes: [], claims: {} };
  }
}

function named<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined || value.length > MAX_NAME_LENGTH
    ? {}
    : ({ [key]: value } as Record<K, string>);
}
