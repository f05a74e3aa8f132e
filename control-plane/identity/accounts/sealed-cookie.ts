/**
 * Values a browser carries for us but must neither read nor change (the OIDC
 * flow's state, nonce and PKCE verifier): JSON sealed with AES-256-GCM under a
 * key derived (HKDF-SHA256) from one secret and a purpose string, so a cookie
 * sealed for one purpose cannot be opened as another. Any replica holding the
 * secret can open it, which is what lets a callback land on another replica.
 *
 * Wire form (base64url): version (1 byte) ‖ IV (12) ‖ ciphertext ‖ tag (16);
 * the plaintext is `{"exp": <epoch ms>, "payload": …}`.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** Bytes of the secret a CookieSealer is built from. */
export const SEALING_KEY_BYTES = 32;

/** Longest sealed value open() looks at, in characters (a cookie cannot be longer anyway). */
const MAX_SEALED_LENGTH = 4096;
const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const HKDF_SALT = Buffer.from('mcphost sealed cookie v1', 'utf8');
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** Options of CookieSealer. */
export interface CookieSealerOptions {
  /** Clock in epoch milliseconds; default Date.now. */
  now?: () => number;
}

/** Seals and opens values for one purpose (e.g. 'oidc-flow'). */
export class CookieSealer {
  readonly #key: Buffer;
  readonly #associatedData: Buffer;
  readonly #now: () => number;

  /**
   * `key`: 32 secret bytes (shared by every replica); `purpose`: a non-empty
   * label that separates this sealer's values from every other purpose's.
   */
  constructor(key: Uint8Array, purpose: string, options: CookieSealerOptions = {}) {
    if (!(key instanceof Uint8Array) || key.length !== SEALING_KEY_BYTES) {
      throw new TypeError(`CookieSealer: key must be ${SEALING_KEY_BYTES} bytes`);
    }
    if (typeof purpose !== 'string' || purpose === '') {
      throw new TypeError('CookieSealer: purpose must be a non-empty string');
    }
    this.#key = Buffer.from(hkdfSync('sha256', key, HKDF_SALT, purpose, 32));
    // The version byte is authenticated, so it cannot be swapped to reach another format.
    this.#associatedData = Buffer.from([VERSION]);
    this.#now = options.now ?? Date.now;
  }

  /** `payload` sealed to expire `ttlSeconds` (a positive integer) from now, as base64url. */
  seal(payload: object, ttlSeconds: number): string {
    if (!Number.isInteger(ttlSeconds) || ttlSeconds <= 0) {
      throw new TypeError('CookieSealer.seal: ttlSeconds must be a positive integer');
    }
    if (payload === null || typeof payload !== 'object') {
      throw new TypeError('CookieSealer.seal: payload must be an object');
    }
    let plaintext: string;
    try {
      plaintext = JSON.stringify({ exp: this.#now() + ttlSeconds * 1000, payload });
    } catch (error) {
      throw new TypeError('CookieSealer.seal: payload is not JSON-serialisable', { cause: error });
    }
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv).setAAD(this.#associatedData);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), iv, ciphertext, cipher.getAuthTag()]).toString(
      'base64url',
    );
  }

  /**
   * The payload sealed in `value`, or undefined when it is malformed,
   * tampered with, sealed for another purpose or key, or expired. Never throws.
   */
  open(value: unknown): unknown {
    if (typeof value !== 'string' || value.length > MAX_SEALED_LENGTH) return undefined;
    if (!BASE64URL.test(value)) return undefined;
    const bytes = Buffer.from(value, 'base64url');
    if (bytes.length < 1 + IV_BYTES + TAG_BYTES || bytes[0] !== VERSION) return undefined;
    const iv = bytes.subarray(1, 1 + IV_BYTES);
    const ciphertext = bytes.subarray(1 + IV_BYTES, bytes.length - TAG_BYTES);
    const tag = bytes.subarray(bytes.length - TAG_BYTES);
    let sealed: unknown;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, iv, { authTagLength: TAG_BYTES })
        .setAAD(this.#associatedData)
        .setAuthTag(tag);
      const plaintext = Buffer.concat([decipher.update(ciphertext), decipher.final()]);
      sealed = JSON.parse(plaintext.toString('utf8'));
    } catch {
      return undefined;
    }
    if (sealed === null || typeof sealed !== 'object' || !('exp' in sealed)) return undefined;
    const { exp, payload } = sealed as { exp: unknown; payload?: unknown };
    if (typeof exp !== 'number' || exp <= this.#now()) return undefined;
    return payload;
  }
}
