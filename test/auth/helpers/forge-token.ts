/**
 * Builds hostile tokens for attack tests: signed with a given private JWK,
 * or hand-assembled (alg none, HMAC) where jose refuses to help.
 */
import { createHmac } from 'node:crypto';
import { importJWK, SignJWT, type JWK, type JWTHeaderParameters, type JWTPayload } from 'jose';

/** Signs `claims` with `privateJwk` (its kid and alg unless `header` overrides them). */
export async function signToken(
  privateJwk: JWK & { kid?: string; alg?: string },
  claims: JWTPayload,
  header: Partial<JWTHeaderParameters> = {},
): Promise<string> {
  const alg = header.alg ?? privateJwk.alg ?? 'RS256';
  const key = await importJWK(privateJwk, alg);
  return new SignJWT(claims)
    .setProtectedHeader({ alg, typ: 'at+jwt', kid: privateJwk.kid, ...header })
    .sign(key);
}

/** Standard claims for `issuer`/`audience`, valid for an hour from `nowSec`. */
export function validClaims(
  issuer: string,
  audience: string,
  nowSec = Math.floor(Date.now() / 1000),
): JWTPayload {
  return {
    iss: issuer,
    aud: audience,
    sub: 'attacker',
    client_id: 'attacker-client',
    scope: 'mcp:tools',
    iat: nowSec,
    exp: nowSec + 3600,
  };
}

/** An unsigned token (`alg: none`). */
export function unsignedToken(claims: JWTPayload, header: Record<string, unknown> = {}): string {
  return `${encode({ alg: 'none', typ: 'JWT', ...header })}.${encode(claims)}.`;
}

/** An HS256 token whose HMAC secret is `secret` (e.g. the server's public key bytes). */
export function hmacToken(
  claims: JWTPayload,
  secret: string | Buffer,
  header: Record<string, unknown> = {},
): string {
  const input = `${encode({ alg: 'HS256', typ: 'JWT', ...header })}.${encode(claims)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

function encode(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}
