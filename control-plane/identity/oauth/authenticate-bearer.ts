/**
 * The framework-free core of bearer authentication for `/mcp`: reads the
 * Authorization header, verifies the token and says exactly what to answer.
 * The HTTP layer only copies `status`, `wwwAuthenticate` and `body` out.
 *
 * Decisions: a token in the query string (`access_token`, RFC 6750 §2.3) is
 * refused with 400 invalid_request even when a header is present too — URLs
 * end up in logs and proxies, and we never accept that method. A non-Bearer
 * scheme (e.g. Basic) counts as no credentials (401 without an error code).
 * Statuses are the registry's for the code each bearer error stands for.
 * Failures to fetch the JWKS are not token faults: the verifier's
 * ERR_AUTH_SERVER_UNAVAILABLE is rethrown for the HTTP layer to answer 503,
 * and so is anything unexpected (a bug: 500).
 */
import { ERROR_REGISTRY, isMcphostError, type McphostErrorCode } from '../../errors.js';
import type { AccessTokenVerifier, VerifiedCaller } from './access-token-verifier.js';
import { formatBearerChallenge, type BearerErrorCode } from './bearer-challenge.js';
import { missingScopes } from './token-claims.js';

/** What authenticateBearer reads from the request. */
export interface BearerRequest {
  /** The raw Authorization header, if any. */
  authorizationHeader?: string;
  /** The full request URL (only its query string is looked at). */
  url: URL;
}

/** Per-server context: the cached verifier and where the protected-resource metadata lives. */
export interface BearerContext {
  verifier: AccessTokenVerifier;
  /** e.g. `https://demo.example.com/.well-known/oauth-protected-resource`. */
  resourceMetadataUrl: string;
  /** Scopes this request needs beyond the verifier's; default none. */
  requiredScopes?: string[];
}

/** The refusal to send: status, WWW-Authenticate header value and JSON body. */
export interface BearerRefusal {
  ok: false;
  /** 400, 401 or 403: the registry's status of the bearer error's code. */
  status: number;
  wwwAuthenticate: string;
  body: { error: BearerErrorCode; error_description: string };
}

/** Either the verified caller or the exact refusal. */
export type BearerOutcome = { ok: true; caller: VerifiedCaller } | BearerRefusal;

/** RFC 6750 b64token: what may follow `Bearer `. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** The mcphost code each RFC 6750 error stands for (400, 401 and 403 in the registry). */
const CODE_OF_BEARER_ERROR = {
  invalid_request: 'ERR_BAD_REQUEST',
  invalid_token: 'ERR_INVALID_TOKEN',
  insufficient_scope: 'ERR_INSUFFICIENT_SCOPE',
} as const satisfies Record<BearerErrorCode, McphostErrorCode>;

/**
 * Authenticates one request; never throws for a bad token. Throws the
 * verifier's ERR_AUTH_SERVER_UNAVAILABLE when the keys cannot be had, and
 * anything unexpected as it is.
 */
export async function authenticateBearer(
  request: BearerRequest,
  context: BearerContext,
): Promise<BearerOutcome> {
  const refuse = (
    error: BearerErrorCode,
    description: string,
    scope?: string,
    withErrorInChallenge = true,
  ): BearerRefusal => ({
    ok: false,
    status: ERROR_REGISTRY[CODE_OF_BEARER_ERROR[error]].status,
    wwwAuthenticate: formatBearerChallenge({
      resourceMetadataUrl: context.resourceMetadataUrl,
      ...(withErrorInChallenge ? { error, errorDescription: description } : {}),
      ...(scope === undefined ? {} : { scope }),
    }),
    body: { error, error_description: description },
  });

  if (request.url.searchParams.has('access_token')) {
    return refuse('invalid_request', 'access tokens are accepted only in the Authorization header');
  }
  const header = request.authorizationHeader?.trim() ?? '';
  const match = /^Bearer(?:\s+(.*))?$/i.exec(header);
  if (match === null) {
    // RFC 6750 §3.1: no error code when the request carried no credentials at all.
    return refuse('invalid_token', 'a Bearer access token is required', undefined, false);
  }
  const token = match[1]?.trim() ?? '';
  if (token === '') return refuse('invalid_request', 'the Bearer access token is empty');
  if (!B64TOKEN.test(token)) return refuse('invalid_token', 'token is not a well-formed JWT');

  let caller: VerifiedCaller;
  try {
    caller = await context.verifier.verify(token);
  } catch (error) {
    if (isMcphostError(error, 'ERR_INVALID_TOKEN')) return refuse('invalid_token', error.message);
    if (isMcphostError(error, 'ERR_INSUFFICIENT_SCOPE')) {
      const details = error.details as { requiredScopes?: string[] } | undefined;
      return refuse('insufficient_scope', error.message, (details?.requiredScopes ?? []).join(' '));
    }
    throw error;
  }
  const required = context.requiredScopes ?? [];
  const missing = missingScopes(required, caller.scopes);
  if (missing.length > 0) {
    return refuse(
      'insufficient_scope',
      `token lacks required scope: ${missing.join(' ')}`,
      required.join(' '),
    );
  }
  return { ok: true, caller };
}
