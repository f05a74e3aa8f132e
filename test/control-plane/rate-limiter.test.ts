/** The token buckets as pure logic, with a frozen clock. */
import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../control-plane/mcp/rate-limiter.js';

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

  it('takes several tokens for a batch, at most the burst', () => {
    let now = 0;
    const limiter = new RateLimiter({ now: () => now });
    expect(limiter.take('a', 'alice', LIMIT, 2).allowed).toBe(true);
    expect(limiter.take('a', 'alice', LIMIT, 2)).toEqual({ allowed: false, retryAfterSeconds: 1 });
    now += 1000; // 1 + 1 token: not the 3 a batch larger than the burst costs
    expect(limiter.take('a', 'alice', LIMIT, 100).allowed).toBe(false);
    now += 1000; // full: a batch larger than the burst costs the whole burst, and passes
    expect(limiter.take('a', 'alice', LIMIT, 100).allowed).toBe(true);
    expect(limiter.take('a', 'alice', LIMIT).allowed).toBe(false);
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
