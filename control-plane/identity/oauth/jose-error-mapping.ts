/**
 * Turns the token faults jose's jwtVerify reports into ERR_INVALID_TOKEN, with
 * a short description that is safe to send back in `error_description`.
 * Failures of the Authorization Server's key set arrive already as
 * ERR_AUTH_SERVER_UNAVAILABLE (remote-key-set.ts). Anything else is returned
 * untouched, to be rethrown: it is a bug, not a bad token and not an outage.
 */
import { errors } from 'jose';
import { isMcphostError, McphostError } from '../../errors.js';

const CLAIM_DESCRIPTIONS: Record<string, string> = {
  nbf: 'token is not yet valid',
  iat: 'token issue time is invalid',
  iss: 'token issuer is not the configured authorization server',
  aud: 'token audience does not include this resource',
  exp: 'token has no valid expiry',
};

/** What to throw for an error thrown by jose's jwtVerify: a McphostError, or the error itself. */
export function verificationFailure(error: unknown): unknown {
  if (isMcphostError(error)) return error;
  if (error instanceof errors.JWTExpired) return invalid('token has expired', error);
  if (error instanceof errors.JWTClaimValidationFailed) {
    return invalid(
      CLAIM_DESCRIPTIONS[error.claim] ?? `token claim ${error.claim} is invalid`,
      error,
    );
  }
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return invalid('token signature is invalid', error);
  if (error instanceof errors.JOSEAlgNotAllowed)
    return invalid('token algorithm is not allowed', error);
  if (
    error instanceof errors.JWKSNoMatchingKey ||
    error instanceof errors.JWKSMultipleMatchingKeys
  ) {
    return invalid('token signing key is unknown', error);
  }
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) {
    return invalid('token is not a well-formed JWT', error);
  }
  if (error instanceof errors.JOSENotSupported || error instanceof errors.JWKInvalid) {
    return invalid('token cannot be verified with the authorization server keys', error);
  }
  return error;
}

function invalid(description: string, cause: unknown): McphostError {
  return new McphostError('ERR_INVALID_TOKEN', description, { cause });
}
