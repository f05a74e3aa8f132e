/**
 * The secrets of one OpenID Connect sign-in between `start` and `finish`,
 * carried by the browser in a sealed cookie (so the callback may land on any
 * replica), and the rule for where the browser may be sent afterwards.
 */
import { z } from 'zod';

/** How long a started sign-in may take before its flow cookie expires, in seconds (10 minutes). */
export const OIDC_FLOW_TTL_SECONDS = 600;

/** The flow of one sign-in: plain JSON for the caller to seal (CookieSealer) for OIDC_FLOW_TTL_SECONDS. */
export interface OidcFlowState {
  /** The `state` sent to the provider (CSRF defence); the callback must echo it. */
  state: string;
  /** The `nonce` the ID token must carry (replay defence). */
  nonce: string;
  /** The PKCE (S256) verifier, sent with the code exchange. */
  codeVerifier: string;
  /** A path on the admin side to go to after signing in (see sanitizeReturnTo). */
  returnTo: string;
  /** The redirect URI the flow was started with (the code exchange repeats it). */
  redirectUri: string;
}

const opaque = z.string().min(16).max(512);

/** The schema of an OidcFlowState (as opened from its cookie). */
export const oidcFlowStateSchema = z.object({
  state: opaque,
  nonce: opaque,
  codeVerifier: opaque,
  returnTo: z.string().max(2048),
  redirectUri: z.string().max(2048),
});

/** An opened flow cookie as an OidcFlowState, or undefined when it is not one. */
export function parseOidcFlowState(value: unknown): OidcFlowState | undefined {
  const parsed = oidcFlowStateSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/**
 * `returnTo` when it is a path on this origin ('/…', not '//…' or '/\…',
 * which browsers read as another host, and no control characters), else '/'.
 * Keeps the sign-in from being an open redirect.
 */
export function sanitizeReturnTo(returnTo: unknown): string {
  if (typeof returnTo !== 'string' || returnTo.length > 2048) return '/';
  if (!returnTo.startsWith('/') || returnTo.startsWith('//') || returnTo.startsWith('/\\')) {
    return '/';
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\\]/.test(returnTo)) return '/';
  return returnTo;
}
