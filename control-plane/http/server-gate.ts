/**
 * The gate of every hosted server, by its `securityMode`: "none" admits
 * everyone; "oauth2" needs a valid bearer token (checked here, through the
 * framework-free OAuth core); "apikey" needs one of the server's API keys
 * (api-key-gate.ts). Verifiers are cached per (issuer, jwks_uri, audience,
 * scopes) and keys follow the store, so a settings change or a revoked key
 * takes effect with the next request, with no restart.
 *
 * A token is checked against the resource of the address the request came
 * by (server-resource.ts): the host form's `{address}/mcp`, or the path
 * form's `{PUBLIC_URL}/servers/{sub}/mcp` — each address its own resource,
 * as clients discover it — unless the server names its own `oauthAudience`.
 */
import type { IncomingMessage } from 'node:http';
import {
  allowedClaims,
  authenticateBearer,
  checkStoredKeySetUrl,
  createAccessTokenVerifier,
  protectedResourceMetadata,
  type AccessTokenVerifier,
} from '../identity/index.js';
import type { AddressConfig, AddressForm } from '../config.js';
import { isMcphostError, McphostError } from '../errors.js';
import type { ServerRecord } from '../store/index.js';
import { ApiKeyGate, type ApiKeyGateOptions } from './api-key-gate.js';
import { temporarilyUnavailable, type Authentication } from './authentication.js';
import { serverResourceAt, type ServerResource } from './server-resource.js';

const MAX_CACHED_VERIFIERS = 1000;
/** What a 503 for an unreachable Authorization Server tells clients to wait, in seconds. */
const RETRY_AFTER_SECONDS = 5;

/** What the gate reads of the configuration: the servers' addresses (PUBLIC_URL*, ROUTING…) and OAUTH_*. */
export interface ServerGateSettings extends AddressConfig {
  readonly oauthAllowInsecureLoopback: boolean;
  readonly oauthClockToleranceSec: number;
  readonly oauthJwksCooldownMs: number;
}

/** Admits or refuses each `/mcp` request of a hosted server by the server's security mode. */
export class ServerGate {
  readonly #settings: ServerGateSettings;
  readonly #verifiers = new Map<string, AccessTokenVerifier>();
  readonly #fetch: typeof fetch | undefined;
  readonly #apiKeys: ApiKeyGate | undefined;

  /**
   * `jwksFetch` (default the global one) is used for JWKS; the service passes
   * the egress-guarded one. `apiKeys` (the store, at least) checks servers in
   * API-key mode; without it such a server's requests fail (500), never open.
   */
  constructor(settings: ServerGateSettings, jwksFetch?: typeof fetch, apiKeys?: ApiKeyGateOptions) {
    this.#settings = settings;
    this.#fetch = jwksFetch;
    this.#apiKeys = apiKeys === undefined ? undefined : new ApiKeyGate(apiKeys);
  }

  /** Who calls `server` with `req`, which came by its `form` address; or the refusal to send. */
  async authenticate(
    server: ServerRecord,
    req: IncomingMessage,
    url: URL,
    form: AddressForm,
  ): Promise<Authentication> {
    switch (server.securityMode) {
      case 'none':
        return { ok: true, caller: { kind: 'anonymous' } };
      case 'apikey':
        if (this.#apiKeys === undefined) {
          throw new Error('ServerGate: built without a key store, it cannot check API keys');
        }
        return this.#apiKeys.authenticate(server, req);
      case 'oauth2':
        return this.#authenticateBearer(server, req, url, this.#resourceOf(server, form));
    }
  }

  /** Stops following the store and writes the API-key uses still noted. */
  async close(): Promise<void> {
    await this.#apiKeys?.close();
  }

  async #authenticateBearer(
    server: ServerRecord,
    req: IncomingMessage,
    url: URL,
    resource: ServerResource,
  ): Promise<Authentication> {
    const metadata = server.oauthMetadata;
    if (!metadata) {
      // Cannot happen through the API (saving oauth2 stores the metadata); refuse rather than open up.
      return temporarilyUnavailable(
        RETRY_AFTER_SECONDS,
        new McphostError(
          'ERR_AUTH_SERVER_UNAVAILABLE',
          'the authorization server metadata of this server is missing; save its OAuth settings again',
        ),
      );
    }
    let outcome;
    try {
      outcome = await authenticateBearer(
        { authorizationHeader: req.headers.authorization, url },
        {
          verifier: this.#verifierFor(server, resource.resource),
          resourceMetadataUrl: resource.protectedResourceMetadataUrl,
        },
      );
    } catch (error) {
      // The AS's keys cannot be had, or the stored jwks_uri is no longer acceptable
      // (plain HTTP after OAUTH_ALLOW_INSECURE_LOOPBACK was turned off): the token
      // may be fine, so no 401 (clients would start a new authorization); a 503
      // says "try again", or "fix the settings". Anything else is a bug: rethrown,
      // it is answered 500 and logged.
      if (!isMcphostError(error, 'ERR_AUTH_SERVER_UNAVAILABLE')) throw error;
      return temporarilyUnavailable(RETRY_AFTER_SECONDS, error);
    }
    if (!outcome.ok) {
      return {
        ok: false,
        status: outcome.status,
        headers: { 'www-authenticate': outcome.wwwAuthenticate },
        body: outcome.body,
        reason: req.headers.authorization === undefined ? 'missing_token' : outcome.body.error,
      };
    }
    return {
      ok: true,
      caller: {
        kind: 'oauth',
        subject: outcome.caller.subject,
        clientId: outcome.caller.clientId,
        scopes: outcome.caller.scopes,
        claims: allowedClaims(outcome.caller.claims, server.callerClaims),
      },
      expiresAt: outcome.caller.expiresAt,
    };
  }

  /** RFC 9728 document of a server in OAuth 2.0 mode, for its address of `form`. */
  protectedResourceMetadata(server: ServerRecord, form: AddressForm): object {
    const scopes = server.oauthRequiredScopes.length > 0 ? server.oauthRequiredScopes : undefined;
    return protectedResourceMetadata({
      resource: this.#resourceOf(server, form).resource,
      issuer: server.oauthMetadata?.issuer ?? '',
      scopes,
    });
  }

  /** The resource of the address a request came by; the router only routes forms that are on. */
  #resourceOf(server: ServerRecord, form: AddressForm): ServerResource {
    const resource = serverResourceAt(this.#settings, server.subdomain, form);
    if (resource === undefined) {
      throw new Error(`ServerGate: a request came by the ${form} address, which ROUTING turns off`);
    }
    return resource;
  }

  #verifierFor(server: ServerRecord, resource: string): AccessTokenVerifier {
    const metadata = server.oauthMetadata!;
    const audience = server.oauthAudience ?? resource;
    const key = JSON.stringify([
      metadata.issuer,
      metadata.jwks_uri,
      audience,
      server.oauthRequiredScopes,
    ]);
    let verifier = this.#verifiers.get(key);
    if (!verifier) {
      checkStoredKeySetUrl(metadata.jwks_uri, this.#settings.oauthAllowInsecureLoopback);
      verifier = createAccessTokenVerifier({
        issuer: metadata.issuer,
        jwksUri: metadata.jwks_uri,
        audience,
        requiredScopes: server.oauthRequiredScopes,
        clockToleranceSec: this.#settings.oauthClockToleranceSec,
        jwksCooldownMs: this.#settings.oauthJwksCooldownMs,
        allowInsecureLoopback: this.#settings.oauthAllowInsecureLoopback,
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
