/**
 * The credential a long-lived stream was opened with — a modern listen
 * stream, or a legacy session and its GET stream — so that the stream ends
 * when that credential stops admitting anyone, as a request with it would be
 * refused. Authentication happens once, when a stream opens; without this, a
 * stream opened with an API key would go on hearing the server's changes
 * after the key was revoked.
 *
 * Two ways a credential ends: an API key revoked or deleted, which the
 * store's change feed tells every replica (key-revocations.ts in app/ looks
 * the server's keys up and ends the streams of keys no longer active); and
 * the credential's own end (an API key's `expiresAt`, an access token's
 * `exp`), which a timer here waits for.
 */
import type { Caller } from '../identity/index.js';
import type { RequestScope } from './request-scope.js';

/** What ends a stream besides its server's changes. */
export interface StreamCredential {
  /** The API key's id (servers in API-key mode); absent for an access token. */
  readonly keyId?: string;
  /** When the credential stops admitting, in ms since the epoch; absent: no end known. */
  readonly expiresAt?: number;
}

/** A request's scope with the credential the hosted side admitted it with (hosted-side.ts sets it). */
export type AdmittedScope = RequestScope & { readonly credential?: StreamCredential };

/**
 * The credential of an admitted request: `caller` as the gate established
 * it, `expiresAt` when the gate says when the credential ends. Undefined for
 * an anonymous caller (a server in mode none: nothing to end).
 */
export function streamCredentialOf(admitted: {
  caller: Caller;
  expiresAt?: Date;
}): StreamCredential | undefined {
  const ends = admitted.expiresAt === undefined ? {} : { expiresAt: admitted.expiresAt.getTime() };
  switch (admitted.caller.kind) {
    case 'apikey':
      return { keyId: admitted.caller.keyId, ...ends };
    case 'oauth':
      return ends;
    default:
      return undefined;
  }
}

/** Longest delay a Node timer takes (about 24.8 days); a later end is waited for in steps. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/**
 * Calls `end` once, when the credential's end has passed. A legacy session
 * is used with refreshed tokens of the same caller: `extend` moves the end to
 * the later one, so a client that keeps its token fresh keeps its session.
 */
export class CredentialExpiry {
  readonly #end: () => void;
  readonly #now: () => number;
  #expiresAt: number | undefined;
  #timer: NodeJS.Timeout | undefined;
  #done = false;

  /** `now`: ms since the epoch; default Date.now. */
  constructor(end: () => void, now: () => number = Date.now) {
    this.#end = end;
    this.#now = now;
  }

  /**
   * Waits for `expiresAt` (ms since the epoch), or keeps the later end
   * already waited for; undefined (a credential with no end) waits for
   * nothing more. An end already past ends at once (on the next turn, so the
   * caller finishes opening what it ends).
   */
  extend(expiresAt: number | undefined): void {
    if (this.#done) return;
    if (expiresAt === undefined) {
      this.cancel();
      return;
    }
    if (this.#expiresAt !== undefined && this.#expiresAt >= expiresAt) return;
    this.#expiresAt = expiresAt;
    this.#arm();
  }

  /** Stops waiting (the stream ended otherwise). */
  cancel(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#expiresAt = undefined;
  }

  #arm(): void {
    clearTimeout(this.#timer);
    const left = this.#expiresAt! - this.#now();
    this.#timer = setTimeout(
      () => {
        if (this.#expiresAt! > this.#now()) {
          this.#arm();
          return;
        }
        this.#done = true;
        this.#timer = undefined;
        this.#end();
      },
      Math.min(Math.max(left, 0), LONGEST_TIMER_MS),
    );
    // A stream waiting for its credential's end must not keep the process alive.
    this.#timer.unref();
  }
}
