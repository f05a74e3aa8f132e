/**
 * Verifies the JWT access tokens an MCP client presents (RFC 9068 profile,
 * MCP authorization spec): signature against the Authorization Server's JWKS,
 * asymmetric algorithms only, issuer, audience (RFC 8707 resource), exp/nbf
 * with a clock tolerance, and required scopes.
 *
 * Header policy (why): keys come only from the configured `jwks_uri`. A `jwk`
 * or `x5u` header is refused outright — it is how "verify me with the key I
 * brought" attacks start. A `jku` header is refused unless it equals the
 * configured `jwks_uri` (some servers send it); it is never fetched either way.
 * `x5c`/`x5t` are ignored. `typ` must be absent, `JWT` or `at+jwt`.
 *
 * A verifier is cheap to keep: it holds one remote JWKS (cached for
 * `jwksCacheMaxAgeMs`, refetched on an unknown `kid` at most once per
 * `jwksCooldownMs`, so key rotation works without a restart).
 */
import {
  decodeProtectedHeader,
  jwtVerify,
  type JWTVerifyGetKey,
  type ProtectedHeaderParameters,
} from 'jose';
import { z } from 'zod';
import { McphostError } from '../../errors.js';
import { summariseProblems, validationProblems } from '../../validation-problems.js';
import { insecureUrlReason } from './secure-url.js';
import { verificationFailure } from './jose-error-mapping.js';
import { createRemoteKeySet } from './remote-key-set.js';
import { accessTokenClaimsSchema, missingScopes, scopesOf } from './token-claims.js';

/** Every algorithm mcphost accepts: asymmetric only, never `none` or HMAC. */
export const ASYMMETRIC_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;

/** Longest token accepted, in characters (a JWT is a few hundred to a few thousand). */
const MAX_TOKEN_LENGTH = 16 * 1024;
/** Largest JWKS document accepted, in bytes. */
const MAX_JWKS_BYTES = 256 * 1024;
const ACCEPTED_TYPES = new Set(['jwt', 'at+jwt', 'application/jwt', 'application/at+jwt']);

const optionsSchema = z.object({
  issuer: z.string().min(1),
  jwksUri: z.url(),
  audience: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
  requiredScopes: z.array(z.string().min(1)).optional(),
  clockToleranceSec: z.number().int().nonnegative().optional(),
  allowedAlgorithms: z.array(z.string()).optional(),
  allowInsecureLoopback: z.boolean(),
  jwksCooldownMs: z.number().int().nonnegative().optional(),
  jwksCacheMaxAgeMs: z.number().int().nonnegative().optional(),
  jwksTimeoutMs: z.number().int().nonnegative().optional(),
  clock: z.function().optional(),
  fetch: z.function().optional(),
});

/** Options for createAccessTokenVerifier, validated once at creation (misuse is a TypeError). */
export interface AccessTokenVerifierOptions {
  /** Expected `iss`: the `issuer` from the Authorization Server metadata. */
  issuer: string;
  /** The metadata's `jwks_uri`. */
  jwksUri: string;
  /** Accepted `aud` values; the token's `aud` must contain at least one (the resource URL, RFC 8707). */
  audience: string | string[];
  /** Scopes every token must carry; default none. */
  requiredScopes?: string[];
  /** Leeway for exp/nbf in seconds; default 30. */
  clockToleranceSec?: number;
  /** Accepted `alg` values, intersected with ASYMMETRIC_ALGORITHMS; default all of those. */
  allowedAlgorithms?: string[];
  /** Accept an http:// jwks_uri on loopback (development only). */
  allowInsecureLoopback: boolean;
  /** Least time between JWKS refetches triggered by an unknown `kid`, in ms; default 30000. */
  jwksCooldownMs?: number;
  /** Longest a fetched JWKS is used before refetching, in ms; default 600000. */
  jwksCacheMaxAgeMs?: number;
  /** Deadline for one JWKS fetch in ms; default 5000. */
  jwksTimeoutMs?: number;
  /** The current time, for exp/nbf; default () => new Date(). */
  clock?: () => Date;
  /**
   * Fetch used for the JWKS; default the global fetch. The service passes one
   * that dials through the egress policy (so a jwks_uri cannot reach the host
   * or cloud metadata).
   */
  fetch?: typeof fetch;
}

/** Who called, as established by a verified token. */
export interface VerifiedCaller {
  /** `sub`: the user (or client, for client_credentials). */
  subject?: string;
  /** `client_id`, else `azp`. */
  clientId?: string;
  /** Granted scopes, from `scope` (space-separated) or `scp` (array). */
  scopes: string[];
  /** Every claim of the verified token (what tools may see of them is the server's choice). */
  claims: Readonly<Record<string, unknown>>;
  /** When the token expires (`exp`). */
  expiresAt: Date;
}

/**
 * A configured verifier; `verify` throws ERR_INVALID_TOKEN / ERR_INSUFFICIENT_SCOPE,
 * or ERR_AUTH_SERVER_UNAVAILABLE when the JWKS cannot be fetched or used; anything
 * else it throws is a bug.
 */
export interface AccessTokenVerifier {
  verify(token: string): Promise<VerifiedCaller>;
}

/** Creates a verifier for one (issuer, jwks_uri, audience) combination; keep and reuse it. */
export function createAccessTokenVerifier(
  options: AccessTokenVerifierOptions,
): AccessTokenVerifier {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new TypeError(
      `createAccessTokenVerifier: invalid options: ${summariseProblems(validationProblems(parsed.error))}`,
    );
  }
  const jwksUrl = new URL(options.jwksUri);
  const insecure = insecureUrlReason(jwksUrl, options.allowInsecureLoopback);
  if (insecure !== undefined) throw new TypeError(`createAccessTokenVerifier: jwksUri ${insecure}`);
  const algorithms = (options.allowedAlgorithms ?? [...ASYMMETRIC_ALGORITHMS]).filter((alg) =>
    (ASYMMETRIC_ALGORITHMS as readonly string[]).includes(alg),
  );
  if (algorithms.length === 0) {
    throw new TypeError('createAccessTokenVerifier: allowedAlgorithms has no asymmetric algorithm');
  }
  const requiredScopes = options.requiredScopes ?? [];
  const clockToleranceSec = options.clockToleranceSec ?? 30;
  const clock = options.clock ?? (() => new Date());
  const jwks: JWTVerifyGetKey = createRemoteKeySet(jwksUrl, {
    cooldownMs: options.jwksCooldownMs ?? 30_000,
    cacheMaxAgeMs: options.jwksCacheMaxAgeMs ?? 600_000,
    timeoutMs: options.jwksTimeoutMs ?? 5000,
    maxBytes: MAX_JWKS_BYTES,
    fetch: options.fetch ?? globalThis.fetch,
  });

  return {
    async verify(token: string): Promise<VerifiedCaller> {
      if (typeof token !== 'string' || token.length === 0) throw invalidToken('token is empty');
      if (token.length > MAX_TOKEN_LENGTH) throw invalidToken('token is too large');
      checkHeader(readHeader(token), algorithms, jwksUrl.href);
      let payload: unknown;
      try {
        ({ payload } = await jwtVerify(token, jwks, {
          issuer: options.issuer,
          audience: options.audience,
          algorithms,
          clockTolerance: clockToleranceSec,
          currentDate: clock(),
          requiredClaims: ['iss', 'aud', 'exp'],
        }));
      } catch (error) {
        throw verificationFailure(error);
      }
      const claims = accessTokenClaimsSchema.safeParse(payload);
      if (!claims.success) throw invalidToken('token claims are malformed');
      const scopes = scopesOf(claims.data);
      const missing = missingScopes(requiredScopes, scopes);
      if (missing.length > 0) {
        throw new McphostError(
          'ERR_INSUFFICIENT_SCOPE',
          `token lacks required scope: ${missing.join(' ')}`,
          {
            details: { requiredScopes, missingScopes: missing },
          },
        );
      }
      return {
        ...(claims.data.sub === undefined ? {} : { subject: claims.data.sub }),
        ...((claims.data.client_id ?? claims.data.azp) === undefined
          ? {}
          : { clientId: claims.data.client_id ?? claims.data.azp }),
        scopes,
        claims: payload as Record<string, unknown>,
        expiresAt: new Date(claims.data.exp * 1000),
      };
    },
  };
}

function readHeader(token: string): ProtectedHeaderParameters {
  try {
    return decodeProtectedHeader(token);
  } catch {
    throw invalidToken('token is not a well-formed JWT');
  }
}

/** Refuses before any key lookup, so a hostile header never causes a fetch. */
function checkHeader(
  header: ProtectedHeaderParameters,
  algorithms: string[],
  jwksUri: string,
): void {
  if (typeof header.alg !== 'string' || !algorithms.includes(header.alg)) {
    throw invalidToken('token algorithm is not allowed');
  }
  if (header.jwk !== undefined || header.x5u !== undefined) {
    throw invalidToken('token header carries a key (jwk/x5u), which is not accepted');
  }
  if (header.jku !== undefined && header.jku !== jwksUri) {
    throw invalidToken('token header names a foreign key set (jku), which is not accepted');
  }
  if (header.typ !== undefined && !ACCEPTED_TYPES.has(String(header.typ).toLowerCase())) {
    throw invalidToken('token type is not an access token');
  }
}

function invalidToken(description: string): McphostError {
  return new McphostError('ERR_INVALID_TOKEN', description);
}
