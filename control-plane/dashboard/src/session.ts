/**
 * Who this tab is signed in as: the principal `GET /api/session` answered
 * (an account's session cookie or the admin token), kept for the views to
 * decide which controls to offer, and signing out of either.
 */
import { ApiError, api, forgetToken, setCsrfToken, storedToken } from './api.js';
import type { AuthMethods, Principal, SessionAnswer } from './account-types.js';

/** Undefined until asked; null when signed out. */
let principal: Principal | null | undefined;

/** The signed-in principal; null when signed out, undefined before `loadSession`. */
export function currentPrincipal(): Principal | null | undefined {
  return principal;
}

/** Keeps what a sign-in or `GET /api/session` answered. */
export function startSession(answer: SessionAnswer): Principal {
  principal = answer.principal;
  setCsrfToken(answer.csrfToken ?? null);
  return principal;
}

/** Treats this tab as signed out (its credential was refused): forgets the token and the principal. */
export function endSession(): void {
  forgetToken();
  principal = null;
  setCsrfToken(null);
}

/**
 * Asks the control plane who this tab is; resolves null when signed out
 * (401). A stored admin token that is no longer accepted is forgotten.
 */
export async function loadSession(): Promise<Principal | null> {
  try {
    return startSession(await api<SessionAnswer>('GET', '/api/session'));
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 401)) throw error;
    endSession();
    return null;
  }
}

/** Signs out: forgets the admin token, or ends the account's session on the control plane. */
export async function signOut(): Promise<void> {
  if (!storedToken()) await api('DELETE', '/api/session');
  endSession();
}

/** The ways to sign in (no credential needed); when the control plane cannot say, the two it always accepts. */
export async function fetchAuthMethods(): Promise<AuthMethods> {
  try {
    return await api<AuthMethods>('GET', '/api/auth/methods', undefined, null);
  } catch {
    return { password: true, oidc: null, token: true };
  }
}
