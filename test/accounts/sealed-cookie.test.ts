import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CookieSealer } from '../../control-plane/identity/index.js';

const KEY = randomBytes(32);
const PAYLOAD = { state: 's'.repeat(43), returnTo: '/#/servers', nested: { n: 1 } };

function clockAt(start: number): { now: () => number; set: (ms: number) => void } {
  let time = start;
  return { now: () => time, set: (ms) => (time = ms) };
}

describe('CookieSealer', () => {
  it('opens what it sealed, as base64url, with a fresh IV each time', () => {
    const sealer = new CookieSealer(KEY, 'oidc-flow');
    const sealed = sealer.seal(PAYLOAD, 600);
    expect(sealed).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('returnTo');
    expect(sealer.open(sealed)).toEqual(PAYLOAD);
    expect(sealer.seal(PAYLOAD, 600)).not.toBe(sealed);
  });

  it('opens on another instance with the same key and purpose (another replica)', () => {
    const sealed = new CookieSealer(KEY, 'oidc-flow').seal(PAYLOAD, 600);
    expect(new CookieSealer(Uint8Array.from(KEY), 'oidc-flow').open(sealed)).toEqual(PAYLOAD);
  });

  it('does not open a value sealed for another purpose or with another key', () => {
    const sealed = new CookieSealer(KEY, 'oidc-flow').seal(PAYLOAD, 600);
    expect(new CookieSealer(KEY, 'session').open(sealed)).toBeUndefined();
    expect(new CookieSealer(randomBytes(32), 'oidc-flow').open(sealed)).toBeUndefined();
  });

  it('does not open a tampered value, whichever byte changed', () => {
    const sealer = new CookieSealer(KEY, 'oidc-flow');
    const bytes = Buffer.from(sealer.seal(PAYLOAD, 600), 'base64url');
    for (let index = 0; index < bytes.length; index += 1) {
      const tampered = Buffer.from(bytes);
      tampered[index] = (tampered[index] ?? 0) ^ 0x01;
      expect(sealer.open(tampered.toString('base64url')), `byte ${index}`).toBeUndefined();
    }
    expect(sealer.open(bytes.subarray(0, bytes.length - 1).toString('base64url'))).toBeUndefined();
    expect(sealer.open(`${bytes.toString('base64url')}AA`)).toBeUndefined();
  });

  it('does not open an expired value', () => {
    const clock = clockAt(1_700_000_000_000);
    const sealer = new CookieSealer(KEY, 'oidc-flow', { now: clock.now });
    const sealed = sealer.seal(PAYLOAD, 600);
    clock.set(1_700_000_000_000 + 599_999);
    expect(sealer.open(sealed)).toEqual(PAYLOAD);
    clock.set(1_700_000_000_000 + 600_000);
    expect(sealer.open(sealed)).toBeUndefined();
  });

  it('answers undefined, never throws, for malformed values', () => {
    const sealer = new CookieSealer(KEY, 'oidc-flow');
    for (const value of ['', 'not base64url!', 'AAAA', 'A'.repeat(5000), undefined, 42, {}]) {
      expect(sealer.open(value)).toBeUndefined();
    }
  });

  it('throws TypeError for misuse', () => {
    expect(() => new CookieSealer(randomBytes(16), 'oidc-flow')).toThrow(TypeError);
    expect(() => new CookieSealer('k'.repeat(32) as unknown as Uint8Array, 'x')).toThrow(TypeError);
    expect(() => new CookieSealer(KEY, '')).toThrow(TypeError);
    const sealer = new CookieSealer(KEY, 'oidc-flow');
    expect(() => sealer.seal(PAYLOAD, 0)).toThrow(TypeError);
    expect(() => sealer.seal(PAYLOAD, 1.5)).toThrow(TypeError);
    expect(() => sealer.seal({ big: 1n }, 60)).toThrow(TypeError);
    expect(() => sealer.seal('text' as unknown as object, 60)).toThrow(TypeError);
  });
});
