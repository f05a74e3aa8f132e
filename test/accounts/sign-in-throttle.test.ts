import { describe, expect, it } from 'vitest';
import { accountLockFor, AddressThrottle } from '../../control-plane/identity/index.js';

describe('accountLockFor', () => {
  it('locks from the fifth failure: 1 minute doubling, at most 1 hour', () => {
    const minutes = Array.from({ length: 14 }, (_, count) => accountLockFor(count) / 60_000);
    expect(minutes).toEqual([0, 0, 0, 0, 0, 1, 2, 4, 8, 16, 32, 60, 60, 60]);
    expect(accountLockFor(1_000_000)).toBe(3_600_000);
  });

  it('refuses a count that is not a non-negative integer', () => {
    expect(() => accountLockFor(-1)).toThrow(TypeError);
    expect(() => accountLockFor(5.5)).toThrow(TypeError);
    expect(() => accountLockFor(Number.NaN)).toThrow(TypeError);
  });
});

/** A clock tests move by hand. */
function fakeClock(start = 1_700_000_000_000): {
  now: () => number;
  advance: (ms: number) => void;
} {
  let time = start;
  return { now: () => time, advance: (ms) => (time += ms) };
}

describe('AddressThrottle', () => {
  it('allows 10 attempts a minute per address, then says when to retry', () => {
    const clock = fakeClock();
    const throttle = new AddressThrottle({ now: clock.now });
    for (let attempt = 0; attempt < 10; attempt += 1) {
      expect(throttle.take('192.0.2.1')).toEqual({ allowed: true });
      clock.advance(1000);
    }
    expect(throttle.take('192.0.2.1')).toEqual({ allowed: false, retryAfterSeconds: 50 });
    // Another address has its own allowance.
    expect(throttle.take('192.0.2.2')).toEqual({ allowed: true });
    clock.advance(49_000);
    expect(throttle.take('192.0.2.1')).toEqual({ allowed: false, retryAfterSeconds: 1 });
    clock.advance(1000);
    // The first attempt left the window; the second (1 s later) has not.
    expect(throttle.take('192.0.2.1')).toEqual({ allowed: true });
    expect(throttle.take('192.0.2.1')).toEqual({ allowed: false, retryAfterSeconds: 1 });
  });

  it('checks without counting: failures alone spend the allowance when only they are taken', () => {
    const clock = fakeClock();
    const throttle = new AddressThrottle({ perMinute: 3, now: clock.now });
    // Checked a thousand times (right tokens): nothing spent.
    for (let check = 0; check < 1000; check += 1) {
      expect(throttle.check('198.51.100.7')).toEqual({ allowed: true });
    }
    for (let failure = 0; failure < 3; failure += 1) throttle.take('198.51.100.7');
    clock.advance(10_000);
    expect(throttle.check('198.51.100.7')).toEqual({ allowed: false, retryAfterSeconds: 50 });
    expect(throttle.check('203.0.113.20')).toEqual({ allowed: true });
    clock.advance(50_000);
    expect(throttle.check('198.51.100.7')).toEqual({ allowed: true });
  });

  it('caps any 60-second window, also across a minute boundary', () => {
    const clock = fakeClock();
    const throttle = new AddressThrottle({ perMinute: 3, now: clock.now });
    clock.advance(59_000);
    for (let attempt = 0; attempt < 3; attempt += 1) expect(throttle.take('a').allowed).toBe(true);
    clock.advance(2000); // a fixed per-minute counter would have reset here
    expect(throttle.take('a')).toEqual({ allowed: false, retryAfterSeconds: 58 });
  });

  it('does not count refused attempts', () => {
    const clock = fakeClock();
    const throttle = new AddressThrottle({ perMinute: 2, now: clock.now });
    throttle.take('a');
    throttle.take('a');
    for (let attempt = 0; attempt < 50; attempt += 1)
      expect(throttle.take('a').allowed).toBe(false);
    clock.advance(60_000);
    expect(throttle.take('a').allowed).toBe(true);
    expect(throttle.take('a').allowed).toBe(true);
  });

  it('remembers at most maxAddresses, forgetting the least recently seen', () => {
    const clock = fakeClock();
    const throttle = new AddressThrottle({ perMinute: 1, maxAddresses: 2, now: clock.now });
    throttle.take('a');
    throttle.take('b');
    expect(throttle.take('a').allowed).toBe(false); // 'a' is now the most recent
    throttle.take('c'); // forgets 'b'
    expect(throttle.size).toBe(2);
    expect(throttle.take('a').allowed).toBe(false);
    expect(throttle.take('b').allowed).toBe(true);
  });

  it('refuses options that are not positive integers', () => {
    expect(() => new AddressThrottle({ perMinute: 0 })).toThrow(TypeError);
    expect(() => new AddressThrottle({ maxAddresses: 1.5 })).toThrow(TypeError);
  });
});
