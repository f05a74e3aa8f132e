/**
 * The thin adapter between the hosted side and the framework-free OAuth core:
 * servers in mode "none" admit everyone; servers in OAuth 2.0 mode need a valid
 * bearer token. Verifiers are cached per (issuer, jwks_uri, audience, scopes),
 * so a settings change takes effect with the next request, with no restart.
 */
import type { IncomingMessage } from 'node:http';
import {
  authenticateBearer,
  createAccessTokenVerifier,
  protectedResourceMetadata,
  resourceMetadataUrlFor,
  resourceUrlFor,
  type AccessTokenVerifier,
} from '../auth/index.js';
import { serverAddress, type Config } from '../config.js';
import { isMcphostError } from '../errors.js';
import type { ServerRecord } from '../store/records.js';
import type { Authentication } from './hosted-side.js';

const MAX_CACHED_VERIFIERS = 1000;

export class OAuthGate {
  readonly #config: Config;
  readonly #verifiers = new Map<string, AccessTokenVerifier>();
  readonly #fetch: typeof fetch | undefined;

  /** `fetch` (default the global one) is used for JWKS; the service passes the egress-guarded one. */
  constructor(config: Config, jwksFetch?: typeof fetch) {
    this.#config = config;
    this.#fetch = jwksFetch;
  }

  async authenticate(
    server: ServerRecord,
    req: IncomingMessage,
    url: URL,
  ): Promise<Authentication> {
    if (server.securityMode !== 'oauth2') return { ok: true, caller: { kind: 'anonymous' } };
    const address = serverAddress(this.#config, server.subdomain);
    const metadata = server.oauthMetadata;
    if (!metadata) {
      // Cannot happen through the API (saving oauth2 stores the metadata); refuse rather than open up.
      return {
        ok: false,
        status: 503,
        headers: {},
        body: {
          error: 'temporarily_unavailable',
          error_description: 'authorization server metadata missing',
        },
      };
    }
    let outcome;
    try {
      outcome = await authenticateBearer(
        { authorizationHeader: req.headers.authorization, url },
        {
          verifier: this.#verifierFor(server, address),
          resourceMetadataUrl: resourceMetadataUrlFor(address),
        },
      );
    } catch (error) {
      // The AS's keys could not be fetched, or the stored jwks_uri is no longer
      // acceptable (plain HTTP after OAUTH_ALLOW_INSECURE_LOOPBACK was turned off):
      // the token may be fine, so no 401 (clients would start a new authorization);
      // a 503 says "try again", or "fix the settings".
      if (!isMcphostError(error, 'ERR_OAUTH_METADATA') && !(error instanceof TypeError))
        throw error;
      return {
        ok: false,
        status: 503,
        headers: { 'retry-after': '5' },
        body: {
          error: 'temporarily_unavailable',
          error_description: 'the authorization server keys cannot be fetched',
        },
      };
    }
    if (!outcome.ok) {
      return {
        ok: false,
        status: outcome.status,
        headers: { 'www-authenticate': outcome.wwwAuthenticate },
        body: outcome.body,
      };
    }
    return {
      ok: true,
      caller: { kind: 'oauth', subject: outcome.caller.subject, clientId: outcome.caller.clientId },
    };
  }

  /** RFC 9728 document of a server in OAuth 2.0 mode. */
  protectedResourceMetadata(server: ServerRecord): object {
    const scopes = server.oauthRequiredScopes.length > 0 ? server.oauthRequiredScopes : undefined;
    return protectedResourceMetadata({
      address: serverAddress(this.#config, server.subdomain),
      issuer: server.oauthMetadata?.issuer ?? '',
      scopes,
    });
  }

  #verifierFor(server: ServerRecord, address: string): AccessTokenVerifier {
    const metadata = server.oauthMetadata!;
    const audience = server.oauthAudience ?? resourceUrlFor(address);
    const key = JSON.stringify([
      metadata.issuer,
      metadata.jwks_uri,
      audience,
      server.oauthRequiredScopes,
    ]);
    let verifier = this.#verifiers.get(key);
    if (!verifier) {
      verifier = createAccessTokenVerifier({
        issuer: metadata.issuer,
        jwksUri: metadata.jwks_uri,
        audience,
        requiredScopes: server.oauthRequiredScopes,
        clockToleranceSec: this.#config.oauthClockToleranceSec,
        jwksCooldownMs: this.#config.oauthJwksCooldownMs,
        allowInsecureLoopback: this.#config.oauthAllowInsecureLoopback,
        ...(this.#fetch === undefined ? {} : { fetch: this.#fetch }),
      });
      // Drop the oldest, not all: clearing would make every server refetch its keys at once.
      if (this.#verifiers.size >= MAX_CACHED_VERIFIERS) {
        const oldest = this.#verifiers.keys().next().value;
        if (oldest !== undefined) this.#verifiers.delete(oldest);
      }
      this.#verifiers.set(key, verifier);
    }
    return verifier;
  }
}
