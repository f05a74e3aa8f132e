/**
 * The public face of identity/: who is calling, answered in one place
 * (eslint.config.js holds the rule). Credential checks are framework-free;
 * the HTTP side (http/server-gate.ts, http/api-key-gate.ts, admin/admin-api.ts)
 * only turns their verdicts into responses.
 *
 * - oauth/: OAuth 2.0 access tokens (JWKS, metadata, bearer challenges).
 * - accounts/: dashboard sign-in (passwords, throttling, cookies, OIDC).
 * - API keys (cache, verifier, use recorder), personal-token and admin-token
 *   hashing, the admin side's authenticator and session cookie.
 */
export * from './oauth/index.js';
export * from './accounts/index.js';
export { allowedClaims, recordedCaller, type Caller } from './caller.js';
export { BOOTSTRAP_PRINCIPAL, type Principal } from './principal.js';
export {
  CREDENTIAL_MAX_LENGTH,
  CREDENTIAL_PREFIXES,
  credentialStatus,
  hashCredentialSecret,
  looksLikeCredential,
  mintCredentialSecret,
} from './credential-secret.js';
export { ApiKeyCache, type ApiKeyCacheOptions, type ApiKeySource } from './api-key-cache.js';
export {
  API_KEY_PROBLEM_MESSAGES,
  ApiKeyVerifier,
  presentedApiKey,
  type ApiKeyHeaders,
  type ApiKeyProblem,
  type ApiKeyVerdict,
} from './api-key-verifier.js';
export {
  CredentialUseRecorder,
  type CredentialUseRecorderOptions,
} from './credential-use-recorder.js';
export { ConcurrencyLimit, type ConcurrencyLimitOptions } from './concurrency-limit.js';
export {
  accountPrincipal,
  AdminAuthenticator,
  csrfTokenMatches,
  fromOwnOrigin,
  type AdminAuthenticatorOptions,
} from './admin-authentication.js';
export {
  ADMIN_TOKEN_META_KEY,
  AdminToken,
  bearerOf,
  generateAdminToken,
  type TokenMeta,
} from './admin-token.js';
export { endSessionCookies, secureCookieFor, startSession } from './session-cookie.js';
