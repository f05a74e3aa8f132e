/**
 * Secrets we mint and only ever store as hashes: a hosted server's API key
 * (`mcph_ak_…`) and an account's personal admin token (`mcph_pat_…`). The
 * prefixes let secret scanners recognise a leaked one and tell the two apart;
 * 32 random bytes make guessing hopeless, so a plain SHA-256 (no salt, no
 * stretching) is enough to find one by its hash in a unique index.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { CredentialKind } from '../store/index.js';

/** The prefix of each kind of secret. */
export const CREDENTIAL_PREFIXES: Readonly<Record<CredentialKind, string>> = Object.freeze({
  apikey: 'mcph_ak_',
  personal: 'mcph_pat_',
});

/** Characters of a secret kept in lists to tell secrets apart (the prefix and 4 more). */
const SHOWN_RANDOM_CHARACTERS = 4;

/** Longest secret a request may present (longer text is not ours: no hashing of megabytes). */
export const CREDENTIAL_MAX_LENGTH = 128;

/** A new secret of a kind, with what the store keeps of it. */
export function mintCredentialSecret(kind: CredentialKind): {
  secret: string;
  secretHash: string;
  prefix: string;
} {
  const secret = `${CREDENTIAL_PREFIXES[kind]}${randomBytes(32).toString('base64url')}`;
  return {
    secret,
    secretHash: hashCredentialSecret(secret),
    prefix: secret.slice(0, CREDENTIAL_PREFIXES[kind].length + SHOWN_RANDOM_CHARACTERS),
  };
}

/** SHA-256 (hex) of a presented secret: what the store looks it up by. */
export function hashCredentialSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** True when the text has the shape of a secret of this kind (cheap check before a lookup). */
export function looksLikeCredential(kind: CredentialKind, text: string): boolean {
  return text.startsWith(CREDENTIAL_PREFIXES[kind]) && text.length <= CREDENTIAL_MAX_LENGTH;
}

/** The status of a credential now: revoked wins over expired. */
export function credentialStatus(
  credential: { revokedAt: string | null; expiresAt: string | null },
  now: Date,
): 'active' | 'expired' | 'revoked' {
  if (credential.revokedAt !== null) return 'revoked';
  if (credential.expiresAt !== null && Date.parse(credential.expiresAt) <= now.getTime()) {
    return 'expired';
  }
  return 'active';
}
