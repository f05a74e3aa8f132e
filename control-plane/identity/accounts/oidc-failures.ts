/**
 * What openid-client's failures mean to someone signing in: the provider
 * refused or could not verify the sign-in (ERR_UNAUTHORIZED, start again), or
 * the provider cannot be reached (ERR_AUTH_SERVER_UNAVAILABLE, try later).
 * Messages name the OAuth error code and what to do, never a code, token or
 * verifier (openid-client's own messages name fields, not their values).
 */
import {
  AuthorizationResponseError,
  ClientError,
  ResponseBodyError,
  WWWAuthenticateChallengeError,
} from 'openid-client';
import { isMcphostError, McphostError } from '../../errors.js';

/** Longest piece of provider-written text (error_description) we repeat, in characters. */
const MAX_PROVIDER_TEXT = 200;

/** ERR_UNAUTHORIZED with a message a person can act on. */
export function signInRefused(message: string): McphostError {
  return new McphostError('ERR_UNAUTHORIZED', message);
}

/** ERR_AUTH_SERVER_UNAVAILABLE naming what could not be done and why (a transport reason). */
export function providerUnavailable(what: string, cause: unknown): McphostError {
  return new McphostError(
    'ERR_AUTH_SERVER_UNAVAILABLE',
    `the identity provider cannot be used now: ${what} failed (${transportReason(cause)}); try again later`,
    { cause },
  );
}

/**
 * The McphostError for a failure during `stage` ('discovery', 'the code
 * exchange', 'userinfo'). A TypeError that openid-client raises for a bad
 * argument is our bug and is rethrown as it is.
 */
export function oidcFailure(error: unknown, stage: string): Error {
  if (isMcphostError(error)) return error;
  if (error instanceof AuthorizationResponseError) return providerRefusal(error);
  if (error instanceof ResponseBodyError) {
    if (error.status >= 500) return providerUnavailable(stage, `HTTP ${error.status}`);
    return signInRefused(
      `the identity provider did not accept the sign-in (${error.error})${endpointHint(error.error)}; start again`,
    );
  }
  if (error instanceof WWWAuthenticateChallengeError) {
    // A 401 with a challenge: at the token endpoint the client's credentials, at userinfo the access token.
    const oauthError =
      error.cause.map((challenge) => challenge.parameters.error).find(Boolean) ??
      `HTTP ${error.response.status}`;
    return signInRefused(
      `the identity provider refused ${stage} (${clip(oauthError)})${endpointHint(oauthError)}; start again`,
    );
  }
  if (error instanceof TypeError) {
    if (isArgumentError(error)) return error;
    return providerUnavailable(stage, error);
  }
  if (error instanceof ClientError) {
    if (error.code === 'OAUTH_TIMEOUT' || error.code === 'OAUTH_ABORT') {
      return providerUnavailable(stage, error);
    }
    if (error.cause instanceof Response && error.cause.status >= 500) {
      return providerUnavailable(stage, `HTTP ${error.cause.status}`);
    }
    const detail = error.cause instanceof Error ? error.cause.message : error.message;
    return signInRefused(
      `the identity provider's answer failed verification (${clip(detail)}); start again`,
    );
  }
  return signInRefused(`the sign-in failed during ${stage}; start again`);
}

/** A short reason for a transport failure: the system error code when there is one. */
export function transportReason(cause: unknown): string {
  if (typeof cause === 'string') return cause;
  if (cause instanceof ClientError && cause.code === 'OAUTH_TIMEOUT') return 'timed out';
  if (cause instanceof Error) {
    const inner = cause.cause as { code?: unknown; message?: unknown } | undefined;
    if (typeof inner?.code === 'string') return inner.code;
    if (cause instanceof ClientError && cause.cause instanceof Response) {
      return `HTTP ${cause.cause.status}`;
    }
    return clip(cause.message);
  }
  return 'unknown error';
}

function providerRefusal(error: AuthorizationResponseError): McphostError {
  if (error.error === 'access_denied') {
    return signInRefused(
      'the sign-in was cancelled or refused at the identity provider (access_denied); start again to retry',
    );
  }
  const description =
    error.error_description === undefined ? '' : `: ${clip(error.error_description)}`;
  return signInRefused(
    `the identity provider refused the sign-in (${clip(error.error)}${description}); start again`,
  );
}

/** Advice for the token endpoint errors that mean a configuration problem, not a user one. */
function endpointHint(oauthError: string): string {
  if (oauthError === 'invalid_client' || oauthError === 'unauthorized_client') {
    return ': check ADMIN_OIDC_CLIENT_ID and ADMIN_OIDC_CLIENT_SECRET';
  }
  return '';
}

/** openid-client's (and Node's) own TypeErrors for misuse carry an ERR_INVALID_ARG_* code. */
function isArgumentError(error: TypeError): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('ERR_INVALID_ARG');
}

/** Provider-written text, one line, bounded. */
function clip(text: string): string {
  // eslint-disable-next-line no-control-regex
  const line = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return line.length > MAX_PROVIDER_TEXT ? `${line.slice(0, MAX_PROVIDER_TEXT)}…` : line;
}
