/** Unit tests of the secret cipher (pure logic). */
import { describe, expect, it } from 'vitest';
import { SecretCipher } from '../../control-plane/store/secret-cipher.js';

const cipher = new SecretCipher(Buffer.alloc(32, 1));

describe('SecretCipher', () => {
  it('round-trips values, including empty and non-ASCII ones', () => {
    for (const value of ['', 'plain', 'ünïcødé ✓', 'x'.repeat(10_000)]) {
      expect(cipher.decrypt('server-1', 'NAME', cipher.encrypt('server-1', 'NAME', value))).toBe(
        value,
      );
    }
  });

  it('uses a fresh IV: the same value encrypts differently each time', () => {
    expect(cipher.encrypt('s', 'N', 'v')).not.toBe(cipher.encrypt('s', 'N', 'v'));
  });

  it('fails with ERR_STORE under another server, another name, another key or tampering', () => {
    const stored = cipher.encrypt('server-1', 'NAME', 'value');
    const wrongKey = new SecretCipher(Buffer.alloc(32, 2));
    const tampered = stored.slice(0, -4) + (stored.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    const attempts = [
      () => cipher.decrypt('server-2', 'NAME', stored),
      () => cipher.decrypt('server-1', 'OTHER', stored),
      () => wrongKey.decrypt('server-1', 'NAME', stored),
      () => cipher.decrypt('server-1', 'NAME', tampered),
      () => cipher.decrypt('server-1', 'NAME', 'garbage'),
    ];
    for (const attempt of attempts) {
      expect(attempt).toThrow(expect.objectContaining({ code: 'ERR_STORE' }));
    }
    expect(attempts[2]).toThrow('cannot decrypt secret NAME: wrong MASTER_KEY?');
  });

  it('refuses a key that is not 32 bytes with a TypeError', () => {
    expect(() => new SecretCipher(Buffer.alloc(16))).toThrow(TypeError);
  });
});
