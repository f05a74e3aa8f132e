/**
 * Password hashing for local accounts: scrypt from node:crypto (run on libuv's
 * thread pool, so the event loop stays free), stored as
 * `scrypt$<N>$<r>$<p>$<salt b64url>$<hash b64url>` so the cost can be raised
 * later without breaking stored hashes: each hash is verified with its own
 * parameters.
 */
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/** Fewest characters (Unicode code points) a new password may have. */
export const PASSWORD_MIN_LENGTH = 12;

/** Most bytes (UTF-8) a password may have: longer input is refused before any hashing. */
export const PASSWORD_MAX_BYTES = 1024;

/** A new password as accepted from a request body (length rules only; no composition rules, per NIST 800-63B). */
export const passwordSchema = z
  .string()
  .refine((password) => [...password].length >= PASSWORD_MIN_LENGTH, {
    message: `a password must have at least ${PASSWORD_MIN_LENGTH} characters`,
  })
  .refine((password) => Buffer.byteLength(password, 'utf8') <= PASSWORD_MAX_BYTES, {
    message: `a password may have at most ${PASSWORD_MAX_BYTES} bytes (UTF-8)`,
  });

/** The cost new hashes are made with: N=2^15, r=8, p=1 (about 32 MiB and tens of milliseconds each). */
const CURRENT = { N: 2 ** 15, r: 8, p: 1 } as const;
const SALT_BYTES = 16;
const KEY_BYTES = 32;

/**
 * Bounds a stored hash's parameters must fall within: a corrupted or hostile
 * row must not make one verification take gigabytes or minutes.
 */
const LIMITS = { minLogN: 10, maxLogN: 20, maxR: 32, maxP: 16, minKey: 16, maxKey: 64 } as const;

const SCRYPT_PREFIX = 'scrypt';
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const DECIMAL = /^[1-9][0-9]{0,9}$/;

interface ScryptParameters {
  N: number;
  r: number;
  p: number;
}

/** Hashes `password` with a fresh 16-byte salt; resolves with the stored form. */
export async function hashPassword(password: string): Promise<string> {
  if (typeof password !== 'string') throw new TypeError('hashPassword: password must be a string');
  const salt = randomBytes(SALT_BYTES);
  const hash = await deriveKey(password, salt, KEY_BYTES, CURRENT);
  return [
    SCRYPT_PREFIX,
    CURRENT.N,
    CURRENT.r,
    CURRENT.p,
    salt.toString('base64url'),
    hash.toString('base64url'),
  ].join('$');
}

/**
 * True when `password` matches `stored` (compared in constant time). A
 * malformed or out-of-bounds stored value, or a password longer than
 * PASSWORD_MAX_BYTES, is false: this never throws for bad input.
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  if (!isAcceptableInput(password)) return false;
  const parsed = parseStoredHash(stored);
  if (parsed === undefined) return false;
  let candidate: Buffer;
  try {
    candidate = await deriveKey(password, parsed.salt, parsed.hash.length, parsed.parameters);
  } catch {
    return false;
  }
  return timingSafeEqual(candidate, parsed.hash);
}

/**
 * A fixed hash of no one's password, with the current parameters: verifying
 * against it costs what verifying a real account costs.
 */
const DUMMY_STORED_HASH = [
  SCRYPT_PREFIX,
  CURRENT.N,
  CURRENT.r,
  CURRENT.p,
  Buffer.alloc(SALT_BYTES, 0x5a).toString('base64url'),
  Buffer.alloc(KEY_BYTES, 0xa5).toString('base64url'),
].join('$');

/**
 * Does the work of one verifyPassword against a dummy hash and resolves
 * false: used for an unknown e-mail, so the answer's timing does not tell
 * which e-mails have accounts.
 */
export async function dummyPasswordCheck(password: string): Promise<false> {
  await verifyPassword(password, DUMMY_STORED_HASH);
  return false;
}

function isAcceptableInput(password: unknown): password is string {
  return typeof password === 'string' && Buffer.byteLength(password, 'utf8') <= PASSWORD_MAX_BYTES;
}

/** The parts of a stored hash, or undefined when it is not one we can verify safely. */
function parseStoredHash(
  stored: unknown,
): { parameters: ScryptParameters; salt: Buffer; hash: Buffer } | undefined {
  if (typeof stored !== 'string' || stored.length > 512) return undefined;
  const parts = stored.split('$');
  if (parts.length !== 6) return undefined;
  const [prefix, nText, rText, pText, saltText, hashText] = parts as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if (prefix !== SCRYPT_PREFIX) return undefined;
  if (![nText, rText, pText].every((text) => DECIMAL.test(text))) return undefined;
  if (!BASE64URL.test(saltText) || !BASE64URL.test(hashText)) return undefined;
  const parameters = { N: Number(nText), r: Number(rText), p: Number(pText) };
  const logN = Math.log2(parameters.N);
  if (!Number.isInteger(logN) || logN < LIMITS.minLogN || logN > LIMITS.maxLogN) return undefined;
  if (parameters.r > LIMITS.maxR || parameters.p > LIMITS.maxP) return undefined;
  const salt = Buffer.from(saltText, 'base64url');
  const hash = Buffer.from(hashText, 'base64url');
  if (salt.length < 8 || hash.length < LIMITS.minKey || hash.length > LIMITS.maxKey) {
    return undefined;
  }
  return { parameters, salt, hash };
}

/** scrypt with room for its working memory (128·N·r bytes; Node's 32 MiB default is too tight for N=2^15, r=8). */
function deriveKey(
  password: string,
  salt: Buffer,
  keyLength: number,
  { N, r, p }: ScryptParameters,
): Promise<Buffer> {
  const maxmem = 2 * 128 * N * r + 1024 * 1024;
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, keyLength, { N, r, p, maxmem }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}
