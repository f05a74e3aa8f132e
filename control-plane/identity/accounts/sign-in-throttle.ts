/**
 * The brakes on credential guessing (docs/accounts-and-keys.md,
 * "Throttling"): an account lock that grows with consecutive failures (its
 * count lives in the store, so every replica sees it; this file only says how
 * long), and a per-network attempt limit kept in this replica's memory —
 * one for dashboard sign-ins, one of the same size for wrong admin bearers,
 * and for failed authentications at hosted servers' /mcp one keyed by
 * network and server, under a higher one per network (mcp/hosted-side.ts).
 */

/** Consecutive failures after which an account is locked. */
export const ACCOUNT_LOCK_THRESHOLD = 5;
/** Lock after the ACCOUNT_LOCK_THRESHOLD-th failure, in milliseconds (1 minute). */
export const ACCOUNT_LOCK_BASE_MS = 60_000;
/** Longest lock, in milliseconds (1 hour). */
export const ACCOUNT_LOCK_MAX_MS = 3_600_000;

/**
 * Milliseconds to lock an account after its `failedCount`-th consecutive
 * failed sign-in: 0 below 5, then 1 minute, doubling with each further
 * failure, at most 1 hour.
 */
export function accountLockFor(failedCount: number): number {
  if (!Number.isInteger(failedCount) || failedCount < 0) {
    throw new TypeError(`accountLockFor: failedCount must be a non-negative integer`);
  }
  if (failedCount < ACCOUNT_LOCK_THRESHOLD) return 0;
  // Capping the exponent first keeps 2 ** n finite for absurd counts.
  const doublings = Math.min(failedCount - ACCOUNT_LOCK_THRESHOLD, 32);
  return Math.min(ACCOUNT_LOCK_BASE_MS * 2 ** doublings, ACCOUNT_LOCK_MAX_MS);
}

/** Options of AddressThrottle. */
export interface AddressThrottleOptions {
  /** Attempts one address may make in any 60-second window; default 10. */
  perMinute?: number;
  /** Addresses remembered at once; the least recently seen is forgotten first; default 10000. */
  maxAddresses?: number;
  /** Clock in epoch milliseconds; default Date.now. */
  now?: () => number;
}

/** The answer of AddressThrottle.take and check. */
export type ThrottleDecision =
  | { allowed: true }
  | {
      allowed: false;
      /** Seconds until the address may try again. */
      retryAfterSeconds: number;
    };

const WINDOW_MS = 60_000;

/**
 * At most `perMinute` attempts per client address in any sliding 60-second
 * window (an exact log of attempt times, not a token bucket, so a burst at
 * the end of one minute and the start of the next is still capped). What
 * counts as an attempt is the caller's: every sign-in (`take` before the
 * check), or only a failure (`check` before, `take` after a wrong
 * credential, so the right one used all day costs nothing). Memory is
 * bounded: at most `maxAddresses` addresses × `perMinute` timestamps.
 * Forgetting an address (LRU) can only give it a fresh allowance, never
 * refuse anyone wrongly.
 */
export class AddressThrottle {
  readonly #perMinute: number;
  readonly #maxAddresses: number;
  readonly #now: () => number;
  /** Attempt times per address, oldest first; Map order is recency (least recent first). */
  readonly #attempts = new Map<string, number[]>();

  constructor(options: AddressThrottleOptions = {}) {
    this.#perMinute = positiveInteger(options.perMinute ?? 10, 'perMinute');
    this.#maxAddresses = positiveInteger(options.maxAddresses ?? 10_000, 'maxAddresses');
    this.#now = options.now ?? Date.now;
  }

  /** Counts one attempt from `address` if it is within its allowance; refused attempts are not counted. */
  take(address: string): ThrottleDecision {
    const now = this.#now();
    const times = this.#recent(address, now);
    // Re-inserting moves the address to the most recent end of the Map.
    this.#attempts.delete(address);
    if (times.length >= this.#perMinute) {
      this.#attempts.set(address, times);
      return this.#refusal(times, now);
    }
    times.push(now);
    this.#attempts.set(address, times);
    this.#evictBeyondCapacity();
    return { allowed: true };
  }

  /** What `take` would answer now, counting nothing (a few comparisons: it runs before every credential check). */
  check(address: string): ThrottleDecision {
    const times = this.#attempts.get(address);
    if (times === undefined || times.length < this.#perMinute) return { allowed: true };
    const now = this.#now();
    const recent = this.#recent(address, now);
    return recent.length >= this.#perMinute ? this.#refusal(recent, now) : { allowed: true };
  }

  /** How many addresses are remembered now (for tests and metrics). */
  get size(): number {
    return this.#attempts.size;
  }

  /** The attempt times of `address` within the window ending `now`, oldest first. */
  #recent(address: string, now: number): number[] {
    return (this.#attempts.get(address) ?? []).filter((time) => time > now - WINDOW_MS);
  }

  #refusal(times: readonly number[], now: number): ThrottleDecision {
    const oldest = times[0] ?? now;
    return {
      allowed: false,
      retryAfterSeconds: Math.max(1, Math.ceil((oldest + WINDOW_MS - now) / 1000)),
    };
  }

  #evictBeyondCapacity(): void {
    while (this.#attempts.size > this.#maxAddresses) {
      const leastRecent = this.#attempts.keys().next();
      if (leastRecent.done === true) return;
      this.#attempts.delete(leastRecent.value);
    }
  }
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new TypeError(`AddressThrottle: ${name} must be a positive integer, got ${value}`);
  }
  return value;
}
