import { randomBytes, scryptSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  dummyPasswordCheck,
  hashPassword,
  PASSWORD_MAX_BYTES,
  passwordSchema,
  verifyPassword,
} from '../../control-plane/identity/index.js';

const PASSWORD = 'correct horse battery staple';

describe('password hashing', () => {
  it('stores scrypt with its parameters, salt and hash, and verifies the right password only', async () => {
    const stored = await hashPassword(PASSWORD);
    expect(stored).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(await verifyPassword(PASSWORD, stored)).toBe(true);
    expect(await verifyPassword('correct horse battery stapler', stored)).toBe(false);
    expect(await verifyPassword('', stored)).toBe(false);
  });

  it('salts every hash', async () => {
    const [first, second] = await Promise.all([hashPassword(PASSWORD), hashPassword(PASSWORD)]);
    expect(first).not.toBe(second);
    expect(first.split('$')[4]).not.toBe(second.split('$')[4]);
  });

  it('verifies a hash made with other parameters by reading them from the stored value', async () => {
    const salt = randomBytes(16);
    const hash = scryptSync(PASSWORD, salt, 32, { N: 2 ** 14, r: 8, p: 2 });
    const stored = `scrypt$16384$8$2$${salt.toString('base64url')}$${hash.toString('base64url')}`;
    expect(await verifyPassword(PASSWORD, stored)).toBe(true);
    expect(await verifyPassword(`${PASSWORD}!`, stored)).toBe(false);
  });

  it('treats Unicode compositions of the same text alike (NFC)', async () => {
    const stored = await hashPassword('caf\u00e9-caf\u00e9-caf\u00e9');
    expect(await verifyPassword('cafe\u0301-cafe\u0301-cafe\u0301', stored)).toBe(true);
  });

  it('answers false, never throws, for malformed or dangerous stored values', async () => {
    const good = await hashPassword(PASSWORD);
    const [, , , , salt, hash] = good.split('$');
    const malformed = [
      '',
      'plain-text-password',
      good.replace('scrypt$', 'bcrypt$'),
      good.split('$').slice(0, 5).join('$'),
      `${good}$extra`,
      `scrypt$32767$8$1$${salt}$${hash}`, // N not a power of two
      `scrypt$1073741824$8$1$${salt}$${hash}`, // N = 2^30: gigabytes of memory
      `scrypt$32768$1000$1$${salt}$${hash}`, // r out of bounds
      `scrypt$32768$8$99$${salt}$${hash}`, // p out of bounds
      `scrypt$032768$8$1$${salt}$${hash}`,
      `scrypt$32768$8$1$${salt}$not+base64/`,
      `scrypt$32768$8$1$${salt}$${hash?.slice(0, 8)}`, // key too short
      `scrypt$32768$8$1$$${hash}`,
      'x'.repeat(10_000),
    ];
    for (const stored of malformed) {
      await expect(verifyPassword(PASSWORD, stored), stored.slice(0, 60)).resolves.toBe(false);
    }
    await expect(verifyPassword(PASSWORD, undefined as unknown as string)).resolves.toBe(false);
    await expect(verifyPassword(42 as unknown as string, good)).resolves.toBe(false);
  });

  it('refuses a password longer than the byte limit without hashing it', async () => {
    const stored = await hashPassword(PASSWORD);
    expect(await verifyPassword('a'.repeat(PASSWORD_MAX_BYTES + 1), stored)).toBe(false);
  });

  it('does the work of a real verification for unknown e-mails', async () => {
    const stored = await hashPassword(PASSWORD);
    const time = async (work: () => Promise<boolean>): Promise<number> => {
      const started = performance.now();
      await work();
      return performance.now() - started;
    };
    const real = Math.min(
      await time(() => verifyPassword('wrong password!!', stored)),
      await time(() => verifyPassword('wrong password!!', stored)),
    );
    const dummy = Math.min(
      await time(() => dummyPasswordCheck('wrong password!!')),
      await time(() => dummyPasswordCheck('wrong password!!')),
    );
    await expect(dummyPasswordCheck(PASSWORD)).resolves.toBe(false);
    // One-sided: an early return would take microseconds against scrypt's milliseconds.
    expect(dummy).toBeGreaterThan(real * 0.4);
  });
});

describe('passwordSchema', () => {
  it('requires 12 characters, counted as code points', () => {
    expect(passwordSchema.safeParse('a'.repeat(12)).success).toBe(true);
    expect(passwordSchema.safeParse('\u{1F511}'.repeat(12)).success).toBe(true);
    const short = passwordSchema.safeParse('a'.repeat(11));
    expect(short.success).toBe(false);
    expect(short.error?.issues[0]?.message).toBe('a password must have at least 12 characters');
    // Eleven emoji are 22 UTF-16 units, but 11 characters.
    expect(passwordSchema.safeParse('\u{1F511}'.repeat(11)).success).toBe(false);
  });

  it('refuses more than 1024 bytes with a clear message', () => {
    expect(passwordSchema.safeParse('a'.repeat(1024)).success).toBe(true);
    const long = passwordSchema.safeParse('\u00e9'.repeat(513)); // 1026 bytes, 513 characters
    expect(long.success).toBe(false);
    expect(long.error?.issues[0]?.message).toBe('a password may have at most 1024 bytes (UTF-8)');
    expect(passwordSchema.safeParse(12345678901234).success).toBe(false);
  });
});
