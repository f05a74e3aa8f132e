/**
 * Dashboard sign-in with an OpenID Connect provider, framework-free: `start`
 * builds the authorization request (code flow, PKCE S256, state, nonce) and
 * the flow state the caller seals into a cookie; `finish` checks the callback,
 * exchanges the code, verifies the ID token (issuer, audience, nonce, expiry
 * and signature) and answers who signed in. openid-client does the protocol.
 *
 * Discovery happens at first use and again after a failure, so a provider
 * that is down when the control plane starts breaks only sign-ins, and only
 * until it is back.
 */
import * as client from 'openid-client';
import { isLoopbackHostname } from '../oauth/index.js';
import { oidcFailure, providerUnavailable, signInRefused } from './oidc-failures.js';
import { parseOidcFlowState, sanitizeReturnTo, type OidcFlowState } from './oidc-flow-state.js';

/** Options of createOidcSignIn, validated once at creation (TypeError when wrong). */
export interface OidcSignInOptions {
  /** Issuer identifier (ADMIN_OIDC_ISSUER); https, or http on loopback with allowInsecureLoopback. */
  issuer: string;
  /** Client identifier registered at the provider (ADMIN_OIDC_CLIENT_ID). */
  clientId: string;
  /** Client secret (ADMIN_OIDC_CLIENT_SECRET): client_secret_basic when given, else a public client. */
  clientSecret?: string;
  /** Absolute callback URL registered at the provider, without query or fragment. */
  redirectUri: string;
  /** Space-separated scopes to ask for; default 'openid email profile' ('openid' is added if missing). */
  scopes?: string;
  /** Allow http:// issuers (and endpoints) on 127.0.0.1/::1/localhost, for tests and development; default false. */
  allowInsecureLoopback?: boolean;
  /** Timeout of each request to the provider, in seconds; default 10. */
  timeoutSeconds?: number;
  /** Fetch implementation for every request to the provider; default the global fetch. */
  fetch?: typeof fetch;
}

/** Who signed in, as the provider vouched for it. */
export interface OidcIdentity {
  /** The ID token's `iss` (equal to the configured issuer). */
  issuer: string;
  /** The ID token's `sub`: stable per issuer, the key an account is linked by. */
  subject: string;
  /** `email` from the ID token, else from userinfo. */
  email?: string;
  /** True only when the provider says the e-mail is verified (`email_verified`). */
  emailVerified: boolean;
  /** `name` from the ID token, else from userinfo. */
  name?: string;
}

/** A started sign-in: where to send the browser, and the flow to seal into a cookie. */
export interface OidcSignInStart {
  /** The provider's authorization URL with every parameter of this request. */
  redirectUrl: string;
  /** The flow state; seal it (OIDC_FLOW_TTL_SECONDS) and hand it to finish(). */
  flow: OidcFlowState;
}

/** The OIDC sign-in of the admin side. */
export interface OidcSignIn {
  /** Starts a sign-in that returns to `returnTo` (a local path; anything else becomes '/'). */
  start(returnTo: string): Promise<OidcSignInStart>;
  /** Completes the sign-in the browser came back from (`callbackUrl` is the request's full URL). */
  finish(callbackUrl: URL, flow: OidcFlowState): Promise<OidcIdentity>;
}

/** Builds the OIDC sign-in; nothing is fetched until the first start() or finish(). */
export function createOidcSignIn(options: OidcSignInOptions): OidcSignIn {
  const settings = validateOptions(options);
  const fetchImpl = options.fetch;
  let discovered: Promise<client.Configuration> | undefined;

  const discover = async (): Promise<client.Configuration> => {
    let configuration: client.Configuration;
    try {
      configuration = await client.discovery(
        settings.issuer,
        settings.clientId,
        settings.clientSecret === undefined ? undefined : { client_secret: settings.clientSecret },
        settings.clientSecret === undefined
          ? client.None()
          : client.ClientSecretBasic(settings.clientSecret),
        {
          timeout: settings.timeoutSeconds,
          execute: [
            // Without this, an ID token from the token endpoint is trusted on TLS alone; we check its signature.
            client.enableNonRepudiationChecks,
            ...(settings.insecure ? [client.allowInsecureRequests] : []),
          ],
          ...(fetchImpl === undefined
            ? {}
            : {
                [client.customFetch]: (url: string, init: client.CustomFetchOptions) =>
                  fetchImpl(url, init as RequestInit),
              }),
        },
      );
    } catch (error) {
      throw providerUnavailable(`fetching its metadata from ${settings.issuer.href}`, error);
    }
    checkEndpoints(configuration.serverMetadata(), settings.insecure);
    return configuration;
  };
  // One discovery in flight at a time; a failed one is forgotten so the next use retries.
  const configuration = (): Promise<client.Configuration> => {
    discovered ??= discover().catch((error: unknown) => {
      discovered = undefined;
      throw error;
    });
    return discovered;
  };

  return {
    async start(returnTo) {
      const config = await configuration();
      const flow: OidcFlowState = {
        state: client.randomState(),
        nonce: client.randomNonce(),
        codeVerifier: client.randomPKCECodeVerifier(),
        returnTo: sanitizeReturnTo(returnTo),
        redirectUri: settings.redirectUri,
      };
      const redirectUrl = client.buildAuthorizationUrl(config, {
        redirect_uri: settings.redirectUri,
        scope: settings.scopes,
        state: flow.state,
        nonce: flow.nonce,
        code_challenge: await client.calculatePKCECodeChallenge(flow.codeVerifier),
        code_challenge_method: 'S256',
      });
      return { redirectUrl: redirectUrl.href, flow };
    },

    async finish(callbackUrl, flowInput) {
      if (!(callbackUrl instanceof URL)) throw new TypeError('finish: callbackUrl must be a URL');
      const flow = parseOidcFlowState(flowInput);
      if (flow === undefined || flow.redirectUri !== settings.redirectUri) {
        throw signInRefused('this sign-in was not started here or has expired; start again');
      }
      // Checked before anything else, so a response meant for another browser is never used.
      if (callbackUrl.searchParams.get('state') !== flow.state) {
        throw signInRefused(
          'the answer from the identity provider does not belong to the sign-in started in this browser (state mismatch); start again',
        );
      }
      const config = await configuration();
      // The exchange repeats the registered redirect URI exactly, whatever host the request reached us by.
      const response = new URL(settings.redirectUri);
      response.search = callbackUrl.search;
      let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
      try {
        tokens = await client.authorizationCodeGrant(config, response, {
          pkceCodeVerifier: flow.codeVerifier,
          expectedState: flow.state,
          expectedNonce: flow.nonce,
          idTokenExpected: true,
        });
      } catch (error) {
        throw oidcFailure(error, 'the code exchange');
      }
      const claims = tokens.claims();
      if (claims === undefined)
        throw signInRefused('the identity provider sent no ID token; start again');
      let profile: Record<string, unknown> = claims;
      if (typeof claims.email !== 'string' && config.serverMetadata().userinfo_endpoint) {
        try {
          const userinfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
          profile = { ...userinfo, ...withoutUndefined(claims) };
        } catch (error) {
          throw oidcFailure(error, 'fetching the user profile');
        }
      }
      return identityOf(claims.iss, claims.sub, profile);
    },
  };
}

interface Settings {
  issuer: URL;
  clientId: string;
  clientSecret: string | undefined;
  redirectUri: string;
  scopes: string;
  insecure: boolean;
  timeoutSeconds: number;
}

function validateOptions(options: OidcSignInOptions): Settings {
  const allowInsecure = options.allowInsecureLoopback ?? false;
  const issuer = URL.parse(options.issuer);
  if (issuer === null) throw new TypeError(`OIDC issuer ${options.issuer} is not a URL`);
  const reason = transportProblem(issuer, allowInsecure);
  if (reason !== undefined) throw new TypeError(`OIDC issuer ${reason}`);
  if (typeof options.clientId !== 'string' || options.clientId === '') {
    throw new TypeError('OIDC clientId must be a non-empty string');
  }
  if (options.clientSecret !== undefined && options.clientSecret === '') {
    throw new TypeError('OIDC clientSecret must be non-empty when given');
  }
  const redirect = URL.parse(options.redirectUri);
  if (redirect === null || !['http:', 'https:'].includes(redirect.protocol)) {
    throw new TypeError(`OIDC redirectUri ${options.redirectUri} is not an http(s) URL`);
  }
  if (redirect.search !== '' || redirect.hash !== '') {
    throw new TypeError('OIDC redirectUri must have no query or fragment');
  }
  const scopes = (options.scopes ?? 'openid email profile').split(/\s+/).filter(Boolean);
  if (!scopes.includes('openid')) scopes.unshift('openid');
  const timeoutSeconds = options.timeoutSeconds ?? 10;
  if (!(timeoutSeconds > 0)) throw new TypeError('OIDC timeoutSeconds must be positive');
  return {
    issuer,
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    redirectUri: redirect.href,
    scopes: scopes.join(' '),
    insecure: issuer.protocol === 'http:',
    timeoutSeconds,
  };
}

/** Why `url` may not be used to reach the provider, or undefined. */
function transportProblem(url: URL, allowInsecureLoopback: boolean): string | undefined {
  if (url.protocol === 'https:') return undefined;
  if (url.protocol !== 'http:') return `${url.href} is not an https URL`;
  if (!isLoopbackHostname(url.hostname)) return `${url.href} does not use HTTPS`;
  if (!allowInsecureLoopback)
    return `${url.href} uses plain HTTP; only allowed with allowInsecureLoopback`;
  return undefined;
}

/** An http issuer may only point at loopback endpoints: allowInsecureRequests would otherwise cover any host. */
function checkEndpoints(metadata: client.ServerMetadata, insecure: boolean): void {
  for (const field of [
    'authorization_endpoint',
    'token_endpoint',
    'userinfo_endpoint',
    'jwks_uri',
  ] as const) {
    const value = metadata[field];
    if (value === undefined) continue;
    const url = URL.parse(value);
    const problem = url === null ? `${value} is not a URL` : transportProblem(url, insecure);
    if (problem !== undefined) {
      throw providerUnavailable('checking its metadata', `${field} ${problem}`);
    }
  }
}

function identityOf(
  issuer: string,
  subject: string,
  profile: Record<string, unknown>,
): OidcIdentity {
  const identity: OidcIdentity = {
    issuer,
    subject,
    // Some providers send the boolean as a string.
    emailVerified: profile.email_verified === true || profile.email_verified === 'true',
  };
  if (typeof profile.email === 'string' && profile.email !== '') identity.email = profile.email;
  if (typeof profile.name === 'string' && profile.name !== '') identity.name = profile.name;
  return identity;
}

function withoutUndefined(record: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));
}
