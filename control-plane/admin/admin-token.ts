/**
 * The admin bearer token. Only its SHA-256 is kept (in memory, and in the
 * store when generated), and requests are compared in constant time. When no
 * ADMIN_TOKEN is configured, a token is generated at first start, its hash
 * stored, and the token itself shown once.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { McphostError } from '../errors.js';

const META_KEY = 'admin_token_sha256';

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

export class AdminToken {
  readonly #hash: Buffer;

  private constructor(hash: Buffer) {
    this.#hash = hash;
  }

  /**
   * The configured token, else the stored hash, else a new token: `generated`
   * is set only then, for the caller to print once.
   */
  static async resolve(
    configured: string | undefined,
    meta: {
      getMeta(key: string): Promise<string | undefined>;
      setMeta(key: string, value: string): Promise<void>;
    },
  ): Promise<{ token: AdminToken; generated?: string }> {
    if (configured !== undefined) return { token: new AdminToken(sha256(configured)) };
    const stored = await meta.getMeta(META_KEY);
    if (stored !== undefined) return { token: new AdminToken(Buffer.from(stored, 'hex')) };
    const generated = `mcph_${randomBytes(32).toString('base64url')}`;
    await meta.setMeta(META_KEY, sha256(generated).toString('hex'));
    return { token: new AdminToken(sha256(generated)), generated };
  }

  /** Throws ERR_UNAUTHORIZED unless the request carries the admin token as a bearer. */
  check(req: IncomingMessage): void {
    const header = req.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match)
      throw new McphostError(
        'ERR_UNAUTHORIZED',
        'admin token required: send Authorization: Bearer <token>',
      );
    // Hashing both sides gives equal lengths, so the comparison is constant-time.
    if (!timingSafeEqual(sha256(match[1]!), this.#hash)) {
      throw new McphostError('ERR_UNAUTHORIZED', 'admin token is not valid');
    }
  }
}
