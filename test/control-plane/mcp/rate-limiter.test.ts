/** The token buckets as pure logic, with a frozen clock. */
import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../../control-plane/mcp/rate-limiter.js';

const LIMIT = { perMinute: 60, burst: 3 };

describe('RateLimiter', () => {
  it('allows the burst, then one request per refill interval, with Retry-After', () => {
    let now = 0;
    const limiter = new RateLimiter({ now: () => now });
    const take = () => limiter.take('a', 'alice', LIMIT);
    expect([take(), take(), take()].every((d) => d.allowed)).toBe(true);
    expect(take()).toEqual({ allowed: false, retryAfterSeconds: 1 });
    now += 1000; // 60/min = one a second
    expect(take().allowed).toBe(true);
    expect(take().allowed).toBe(false);
  });

  it('makes a batch pay for every request, a larger one than the burst in debt', () => {
    let now = 0;
    const limiter = new RateLimiter({ now: () => now });
    // A batch of 2 after its POST's token: 2 tokens of 3.
    expect(limiter.take('a', 'alice', LIMIT).allowed).toBe(true);
    expect(limiter.take('a', 'alice', LIMIT, 1, 1).allowed).toBe(true);
    expect(limiter.take('a', 'alice', LIMIT).allowed).toBe(true);
    expect(limiter.take('a', 'alice', LIMIT).allowed).toBe(false);
    now += 3000; // full again
    // A batch of 10 (the POST's token, then 9) passes from a full bucket...
    expect(limiter.take('a', 'alice', LIMIT).allowed).toBe(true);
    expect(limiter.take('a', 'alice', LIMIT, 9, 1).allowed).toBe(true);
    // ...and leaves a debt of 7: the next request waits 8 s (one a second), not 1.
    now += 7000;
    expect(limiter.take('a', 'alice', LIMIT).allowed).toBe(false);
    now += 1000;
    expect(limiter.take('a', 'alice', LIMIT).allowed).toBe(true);
    // Another caller's bucket never paid for alice's batch.
    expect(limiter.take('a', 'bob', LIMIT).allowed).toBe(true);
  });

  it('tells a refused batch how long until a full bucket would take it', () => {
    let now = 0;
    const limiter = new RateLimiter({ now: () => now });
    expect(limiter.take('a', 'alice', LIMIT).allowed).toBe(true);
    expect(limiter.take('a', 'alice', LIMIT).allowed).toBe(true);
    // One token left: the POST of a batch of 10 takes it, the rest is refused.
    expect(limiter.take('a', 'alice', LIMIT).allowed).toBe(true);
    expect(limiter.take('a', 'alice', LIMIT, 9, 1)).toEqual({
      allowed: false,
      retryAfterSeconds: 3,
    });
    now += 3000;
    expect(limiter.take('a', 'alice', LIMIT).allowed).toBe(true);
    expect(limiter.take('a', 'alice', LIMIT, 9, 1).allowed).toBe(true);
  });

  it('keeps servers and callers apart', () => {
    const limiter = new RateLimiter({ now: () => 0 });
    for (let i = 0; i < 3; i += 1) limiter.take('a', 'alice', LIMIT);
    expect(limiter.take('a', 'alice', LIMIT).allowed).toBe(false);
    expect(limiter.take('a', 'bob', LIMIT).allowed).toBe(true);
    expect(limiter.take('b', 'alice', LIMIT).allowed).toBe(true);
    // Keys are structural: no server/caller pair collides with another.
    expect(limiter.take('a"', 'alice', LIMIT).allowed).toBe(true);
  });

  it('gives each of N replicas 1/N of the limit', () => {
    let now = 0;
    const limiter = new RateLimiter({ share: () => 2, now: () => now });
    const limit = { perMinute: 60, burst: 10 };
    const allowed = () =>
      Array.from({ length: 20 }, () => limiter.take('a', 'x', limit)).filter((d) => d.allowed)
        .length;
    expect(allowed()).toBe(5);
    now += 10_000; // 30/min here: 5 in 10 s
    expect(allowed()).toBe(5);
  });

  it('stays bounded under a flood of callers', () => {
    const limiter = new RateLimiter({ maxBuckets: 100, now: () => 0 });
    for (let i = 0; i < 1000; i += 1) limiter.take('a', `ip${i}`, LIMIT);
    expect(limiter.size).toBe(100);
  });
});
