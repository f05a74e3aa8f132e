/**
 * The framework-free parts of dashboard sign-in (docs/accounts-and-keys.md):
 * password hashing, throttling, cookies, sealed cookies and OpenID Connect.
 * The HTTP layer wires them into routes.
 */
export {
  dummyPasswordCheck,
  hashPassword,
  PASSWORD_MAX_BYTES,
  PASSWORD_MIN_LENGTH,
  passwordSchema,
  verifyPassword,
} from './password-hash.js';
export {
  ACCOUNT_LOCK_BASE_MS,
  ACCOUNT_LOCK_MAX_MS,
  ACCOUNT_LOCK_THRESHOLD,
  accountLockFor,
  AddressThrottle,
  type AddressThrottleOptions,
  type ThrottleDecision,
} from './sign-in-throttle.js';
export {
  clearCookie,
  MAX_COOKIE_BYTES,
  parseCookies,
  serializeCookie,
  type CookieOptions,
} from './cookies.js';
export { CookieSealer, SEALING_KEY_BYTES, type CookieSealerOptions } from './sealed-cookie.js';
export {
  OIDC_FLOW_TTL_SECONDS,
  oidcFlowStateSchema,
  parseOidcFlowState,
  sanitizeReturnTo,
  type OidcFlowState,
} from './oidc-flow-state.js';
export {
  createOidcSignIn,
  type OidcIdentity,
  type OidcSignIn,
  type OidcSignInOptions,
  type OidcSignInStart,
} from './oidc-sign-in.js';
