/**
 * Request rate per caller per hosted server: a token bucket per
 * (server, caller) pair, holding `burst` tokens and refilled at `perMinute`.
 * The limit is read at every request (a settings change applies at once).
 *
 * Replicas sharing PostgreSQL do not exchange counters: each one enforces
 * its share, the limit divided by the number of live replicas (`share()`).
 * Behind a load balancer that spreads a caller's requests evenly the caller
 * gets about the whole limit; one whose requests all land on one replica gets
 * that replica's share — never more than the limit in total.
 */
import type { RateLimit } from '../store/index.js';

/** The outcome of one request against its bucket. */
export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface RateLimiterOptions {
  /** Replicas enforcing the limit together (each takes 1/share of it); default 1. */
  share?: () => number;
  /** Buckets kept at most; the least recently used goes first. Default 100000. */
  maxBuckets?: number;
  now?: () => number;
}

interface Bucket {
  tokens: number;
  /** When `tokens` was computed, in ms. */
  at: number;
}

const MS_PER_MINUTE = 60_000;

export class RateLimiter {
  readonly #buckets = new Map<string, Bucket>();
  readonly #share: () => number;
  readonly #maxBuckets: number;
  readonly #now: () => number;

  constructor(options: RateLimiterOptions = {}) {
    this.#share = options.share ?? (() => 1);
    this.#maxBuckets = options.maxBuckets ?? 100_000;
    this.#now = options.now ?? Date.now;
    if (!(this.#maxBuckets > 0)) throw new TypeError('RateLimiter: maxBuckets must be positive');
  }

  /**
   * Takes `count` requests of `quotaKey` on `subdomain` from its bucket under
   * `limit`, `alreadyTaken` of the same message having been paid for by an
   * earlier call (a batch: its POST paid one token before the body was read).
   * Every request is paid: a batch larger than the bucket passes from a full
   * bucket and leaves it in debt, which the refill pays back before the
   * caller's next request.
   */
  take(
    subdomain: string,
    quotaKey: string,
    limit: RateLimit,
    count = 1,
    alreadyTaken = 0,
  ): RateDecision {
    const share = Math.max(1, this.#share());
    const perMs = limit.perMinute / share / MS_PER_MINUTE;
    // A share of the burst, but at least one request, or a small burst would refuse everything.
    const capacity = Math.max(1, limit.burst / share);
    const now = this.#now();
    const key = JSON.stringify([subdomain, quotaKey]);
    let bucket = this.#buckets.get(key);
    if (bucket) {
      bucket.tokens = Math.min(capacity, bucket.tokens + (now - bucket.at) * perMs);
      bucket.at = now;
      // Re-inserted on use: the Map's order is least recently used first.
      this.#buckets.delete(key);
    } else {
      bucket = { tokens: capacity, at: now };
      // Memory stays bounded under a flood of new callers. The bucket that goes
      // is the one unused longest, which has most likely refilled anyway.
      if (this.#buckets.size >= this.#maxBuckets) {
        const oldest = this.#buckets.keys().next().value;
        if (oldest !== undefined) this.#buckets.delete(oldest);
      }
    }
    this.#buckets.set(key, bucket);
    // What must be in the bucket now: the whole message, at most a full bucket.
    const needed = Math.min(count + alreadyTaken, capacity) - alreadyTaken;
    if (bucket.tokens >= needed) {
      bucket.tokens -= count;
      return { allowed: true };
    }
    // A retry pays `alreadyTaken` again before this check.
    const missing = needed + alreadyTaken - bucket.tokens;
    return {
      allowed: false,
      retryAfterSeconds: Math.max(1, Math.ceil(missing / perMs / 1000)),
    };
  }

  /** Buckets held (for tests and metrics). */
  get size(): number {
    return this.#buckets.size;
  }
}
