/**
 * The framework-free core of `securityMode: "apikey"`: which key a request
 * presents, and whether it opens this server. The HTTP adapter
 * (http/api-key-gate.ts) only turns the verdict into a response.
 *
 * Decisions: `Authorization: Bearer …` wins over `X-API-Key` when both are
 * sent; a bearer value that is not an `mcph_ak_` key is simply an invalid
 * key (never passed on to anything else); another scheme (e.g. Basic) counts
 * as no key. Another server's key reads exactly like an unknown one, so a
 * key's holder learns nothing about other servers; revoked and expired are
 * said as such (only the holder can ask). Expiry is checked at each request
 * against the cached record, so a key stops at its `expiresAt` to the second.
 */
import {
  credentialStatus,
  hashCredentialSecret,
  looksLikeCredential,
} from './credential-secret.js';
import type { ApiKeyCache } from './api-key-cache.js';
import type { CredentialUseRecorder } from './credential-use-recorder.js';

/** The key headers of a request, as Node gives them. */
export interface ApiKeyHeaders {
  authorization?: string;
  'x-api-key'?: string | string[];
}

/** Why a request is refused. */
export type ApiKeyProblem = 'missing' | 'invalid' | 'revoked' | 'expired';

/** What the key of a request amounts to for one server. */
export type ApiKeyVerdict =
  | { ok: true; key: { id: string; label: string; expiresAt?: string } }
  | { ok: false; problem: ApiKeyProblem };

/** What a refusal says (the challenge's error_description and the error message). */
export const API_KEY_PROBLEM_MESSAGES: Readonly<Record<ApiKeyProblem, string>> = Object.freeze({
  missing: 'an API key is required: send Authorization: Bearer <key> or X-API-Key: <key>',
  invalid: 'this API key is not valid for this server',
  revoked: 'this API key has been revoked',
  expired: 'this API key has expired',
});

/** The key a request presents: the bearer value, else X-API-Key; undefined when neither is there. */
export function presentedApiKey(headers: ApiKeyHeaders): string | undefined {
  const bearer = /^Bearer[ \t]+(.*)$/i.exec(headers.authorization?.trim() ?? '');
  const fromBearer = bearer?.[1]?.trim();
  if (fromBearer) return fromBearer;
  const header = headers['x-api-key'];
  // Node joins repeated X- headers with ", "; an array only comes from a hand-built map.
  const fromHeader = (Array.isArray(header) ? header.join(', ') : header)?.trim();
  return fromHeader ? fromHeader : undefined;
}

/** Checks presented keys against one server's keys, through the cache. */
export class ApiKeyVerifier {
  readonly #cache: ApiKeyCache;
  readonly #uses: CredentialUseRecorder;
  readonly #now: () => number;

  /** `now`: milliseconds since the epoch, default Date.now (expiry is judged by it). */
  constructor(cache: ApiKeyCache, uses: CredentialUseRecorder, now: () => number = Date.now) {
    this.#cache = cache;
    this.#uses = uses;
    this.#now = now;
  }

  /**
   * The verdict on the key `headers` present for server `subdomain`. Rejects
   * only when the store cannot be asked (its error, or ERR_NO_CAPACITY).
   */
  async verify(subdomain: string, headers: ApiKeyHeaders): Promise<ApiKeyVerdict> {
    const presented = presentedApiKey(headers);
    if (presented === undefined) return { ok: false, problem: 'missing' };
    // Not our shape (or megabytes long): no hashing, no lookup.
    if (!looksLikeCredential('apikey', presented)) return { ok: false, problem: 'invalid' };
    const record = await this.#cache.find(hashCredentialSecret(presented));
    if (record === undefined || record.subdomain !== subdomain) {
      return { ok: false, problem: 'invalid' };
    }
    const status = credentialStatus(record, new Date(this.#now()));
    if (status !== 'active') return { ok: false, problem: status };
    this.#uses.record(record.id, record.lastUsedAt);
    const expiry = record.expiresAt === null ? {} : { expiresAt: record.expiresAt };
    return { ok: true, key: { id: record.id, label: record.label, ...expiry } };
  }
}
