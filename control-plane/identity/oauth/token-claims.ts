/**
 * The access-token claims mcphost reads, parsed once after the signature and
 * the registered claims (iss, aud, exp, nbf) have been checked by jose.
 */
import { z } from 'zod';

/** Claims of a verified JWT access token (RFC 9068) that mcphost uses; others are kept. */
export const accessTokenClaimsSchema = z.looseObject({
  iss: z.string(),
  exp: z.number(),
  sub: z.string().optional(),
  client_id: z.string().optional(),
  azp: z.string().optional(),
  // `scope` is RFC 9068's space-separated string; `scp` is the array some servers (Entra, Okta) use.
  scope: z.string().optional(),
  scp: z.union([z.array(z.string()), z.string()]).optional(),
});

/** Parsed access-token claims. */
export type AccessTokenClaims = z.infer<typeof accessTokenClaimsSchema>;

/** The granted scopes, from `scope` or else `scp`, without duplicates or empty entries. */
export function scopesOf(claims: AccessTokenClaims): string[] {
  const raw = claims.scope ?? claims.scp ?? [];
  const list = typeof raw === 'string' ? raw.split(' ') : raw;
  return [...new Set(list.filter((scope) => scope !== ''))];
}

/** The scopes in `required` that `granted` lacks. */
export function missingScopes(required: readonly string[], granted: readonly string[]): string[] {
  const have = new Set(granted);
  return required.filter((scope) => !have.has(scope));
}
