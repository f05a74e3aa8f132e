/**
 * The admin bearer token. Only its SHA-256 is kept (in memory, and in the
 * store when generated), and requests are compared in constant time.
 *
 * - `ADMIN_TOKEN` set: that token, and a token generated earlier is revoked
 *   (its stored hash is dropped), so removing ADMIN_TOKEN later does not
 *   revive it: a new one is generated and shown once instead.
 * - Unset: the stored hash, else a new token generated at first start, its
 *   hash stored and the token itself shown once.
 * - `rotate()` (POST /api/admin-token/rotate, or `npm run admin-token --
 *   --rotate` when it is lost) stores a new hash; every replica re-reads it
 *   when the store announces the change (`refresh`).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { McphostError } from '../errors.js';

export const ADMIN_TOKEN_META_KEY = 'admin_token_sha256';
/** What the meta entry holds once ADMIN_TOKEN has replaced a generated token. */
const REVOKED = 'revoked';
const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Where generated tokens' hashes are kept (the store's meta table). */
export interface TokenMeta {
  getMeta(key: string): Promise<string | undefined>;
  setMeta(key: string, value: string): Promise<void>;
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** A new admin token (`mcph_` marks it for secret scanners) and stores its hash. */
export async function generateAdminToken(meta: TokenMeta): Promise<string> {
  const token = `mcph_${randomBytes(32).toString('base64url')}`;
  await meta.setMeta(ADMIN_TOKEN_META_KEY, sha256(token).toString('hex'));
  return token;
}

export class AdminToken {
  #hash: Buffer;
  /** True when the token comes from the configuration (it cannot be rotated here). */
  readonly configured: boolean;

  private constructor(hash: Buffer, configured: boolean) {
    this.#hash = hash;
    this.configured = configured;
  }

  /** A token given in the configuration as it is (the metrics token). */
  static fromConfigured(token: string): AdminToken {
    return new AdminToken(sha256(token), true);
  }

  /**
   * The configured token (revoking a generated one), else the stored hash,
   * else a new token: `generated` is set only then, for the caller to print once.
   */
  static async resolve(
    configured: string | undefined,
    meta: TokenMeta,
  ): Promise<{ token: AdminToken; generated?: string }> {
    const stored = await meta.getMeta(ADMIN_TOKEN_META_KEY);
    if (configured !== undefined) {
      if (stored !== undefined && stored !== REVOKED) {
        await meta.setMeta(ADMIN_TOKEN_META_KEY, REVOKED);
      }
      return { token: AdminToken.fromConfigured(configured) };
    }
    if (stored !== undefined && SHA256_HEX.test(stored)) {
      return { token: new AdminToken(Buffer.from(stored, 'hex'), false) };
    }
    const generated = await generateAdminToken(meta);
    return { token: new AdminToken(sha256(generated), false), generated };
  }

  /** A new generated token replaces this one (here at once; other replicas on `refresh`). */
  async rotate(meta: TokenMeta): Promise<string> {
    if (this.configured) {
      throw new McphostError(
        'ERR_CONFLICT',
        'the admin token is ADMIN_TOKEN from the configuration: change it there and restart',
      );
    }
    const token = await generateAdminToken(meta);
    this.#hash = sha256(token);
    return token;
  }

  /** Re-reads the stored hash (another replica rotated it); a configured token stays. */
  async refresh(meta: TokenMeta): Promise<void> {
    if (this.configured) return;
    const stored = await meta.getMeta(ADMIN_TOKEN_META_KEY);
    if (stored !== undefined && SHA256_HEX.test(stored)) {
      this.#hash = Buffer.from(stored, 'hex');
    } else if (stored === REVOKED) {
      // Another replica started with ADMIN_TOKEN: the generated token is dead here too.
      this.#hash = randomBytes(32);
    }
  }

  /** True when `token` is the admin token (constant time: both sides are hashed to equal lengths). */
  matches(token: string): boolean {
    return timingSafeEqual(sha256(token), this.#hash);
  }

  /** Throws ERR_UNAUTHORIZED unless the request carries this token as a bearer (the metrics token). */
  check(req: IncomingMessage): void {
    const token = bearerOf(req);
    if (token === undefined) {
      throw new McphostError(
        'ERR_UNAUTHORIZED',
        'admin token required: send Authorization: Bearer <token>',
      );
    }
    if (!this.matches(token))
      throw new McphostError('ERR_UNAUTHORIZED', 'admin token is not valid');
  }
}

/**
 * The bearer token of a request, undefined without an Authorization header;
 * ERR_UNAUTHORIZED for a header of another shape.
 */
export function bearerOf(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) {
    throw new McphostError(
      'ERR_UNAUTHORIZED',
      'send the admin token or a personal token as Authorization: Bearer <token>',
    );
  }
  return match[1]!;
}
