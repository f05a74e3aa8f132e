/**
 * Turns jose's verification errors into mcphost errors. Token faults become
 * ERR_INVALID_TOKEN with a short description that is safe to send back in
 * `error_description`; failures to obtain the keys are not the caller's fault
 * and become ERR_OAUTH_METADATA (the HTTP layer answers 503, not 401).
 */
import { errors } from 'jose';
import { McphostError } from '../errors.js';

const CLAIM_DESCRIPTIONS: Record<string, string> = {
  nbf: 'token is not yet valid',
  iat: 'token issue time is invalid',
  iss: 'token issuer is not the configured authorization server',
  aud: 'token audience does not include this resource',
  exp: 'token has no valid expiry',
};

/** The McphostError for an error thrown by jose's jwtVerify. */
export function verificationFailure(error: unknown): McphostError {
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
  return new McphostError(
    'ERR_OAUTH_METADATA',
    'the authorization server signing keys could not be fetched',
    {
      cause: error,
    },
  );
}

function invalid(description: string, cause: unknown): McphostError {
  return new McphostError('ERR_INVALID_TOKEN', description, { cause });
}
