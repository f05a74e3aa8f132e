/**
 * Encryption of secret values at rest: AES-256-GCM, a random 96-bit IV per
 * value, and the (server id, secret name) as additional authenticated data so
 * a ciphertext copied onto another secret's row fails to decrypt.
 * Stored form: `v1:` + base64(iv ‖ auth tag ‖ ciphertext).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { McphostError } from '../errors.js';

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const FORMAT_PREFIX = 'v1:';

/** Length of a master key, in bytes. */
export const MASTER_KEY_BYTES = 32;

/** Encrypts and decrypts secret values with one master key. */
export class SecretCipher {
  readonly #key: Buffer;

  /** `masterKey` must be exactly 32 bytes (misuse is a TypeError). */
  constructor(masterKey: Buffer) {
    if (!Buffer.isBuffer(masterKey) || masterKey.length !== MASTER_KEY_BYTES) {
      throw new TypeError(`the master key must be a Buffer of ${MASTER_KEY_BYTES} bytes`);
    }
    this.#key = Buffer.from(masterKey);
  }

  /** Encrypts `value` bound to (serverId, name); returns the stored form. */
  encrypt(serverId: string, name: string, value: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.#key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(additionalData(serverId, name));
    const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return FORMAT_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  /** Decrypts a stored value; a wrong key or tampered row is ERR_STORE naming the secret. */
  decrypt(serverId: string, name: string, stored: string): string {
    try {
      if (!stored.startsWith(FORMAT_PREFIX)) throw new Error('unknown format');
      const raw = Buffer.from(stored.slice(FORMAT_PREFIX.length), 'base64');
      if (raw.length < IV_BYTES + TAG_BYTES) throw new Error('truncated');
      const decipher = createDecipheriv(ALGORITHM, this.#key, raw.subarray(0, IV_BYTES), {
        authTagLength: TAG_BYTES,
      });
      decipher.setAAD(additionalData(serverId, name));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([
        decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch (error) {
      throw new McphostError('ERR_STORE', `cannot decrypt secret ${name}: wrong MASTER_KEY?`, {
        cause: error,
      });
    }
  }
}

// A NUL separator cannot occur in a server id or a secret name, so pairs never collide.
function additionalData(serverId: string, name: string): Buffer {
  return Buffer.from(`mcphost-secret\0${serverId}\0${name}`, 'utf8');
}
