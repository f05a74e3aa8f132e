/**
 * API keys and personal tokens as the admin API answers them, and the body
 * that creates one: a label and an optional expiry in the future. The secret
 * itself is answered once, at creation, beside the view.
 */
import { z } from 'zod';
import { credentialStatus, mintCredentialSecret } from '../identity/index.js';
import type { CredentialOwner, CredentialRecord, Store } from '../store/index.js';

/** Longest lifetime a credential may be given, in days (ten years). */
const MAX_LIFETIME_DAYS = 3650;

/** POST body of a new API key or personal token. */
export const NewCredentialBody = z.strictObject({
  label: z.string().trim().min(1, 'a label says who or what uses it').max(128),
  /** ISO 8601; absent or null: no expiry. */
  expiresAt: z.iso
    .datetime({ offset: true })
    .nullable()
    .optional()
    .refine((value) => value == null || Date.parse(value) > Date.now(), {
      message: 'expiresAt must be in the future',
    })
    .refine(
      (value) => value == null || Date.parse(value) < Date.now() + MAX_LIFETIME_DAYS * 86_400_000,
      { message: `expiresAt may be at most ${MAX_LIFETIME_DAYS} days ahead` },
    ),
});

/** A credential as listed (never its secret or hash). */
export function credentialView(credential: CredentialRecord, now = new Date()) {
  return {
    id: credential.id,
    label: credential.label,
    prefix: credential.prefix,
    createdAt: credential.createdAt,
    createdBy: credential.createdBy,
    expiresAt: credential.expiresAt,
    revokedAt: credential.revokedAt,
    lastUsedAt: credential.lastUsedAt,
    status: credentialStatus(credential, now),
  };
}

/**
 * Mints a secret for `owner` (an API key or a personal token), stores its
 * hash; answers the credential as listed and the secret, to be shown once.
 */
export async function issueCredential(
  store: Pick<Store, 'createCredential'>,
  owner: CredentialOwner,
  body: z.output<typeof NewCredentialBody>,
  createdBy: string,
): Promise<{ view: ReturnType<typeof credentialView>; secret: string }> {
  const minted = mintCredentialSecret(owner.kind);
  const record = await store.createCredential({
    owner,
    label: body.label,
    prefix: minted.prefix,
    secretHash: minted.secretHash,
    createdBy,
    expiresAt: body.expiresAt == null ? null : new Date(body.expiresAt).toISOString(),
  });
  return { view: credentialView(record), secret: minted.secret };
}
