/** The OAuth 2.0 resource-server core: framework-free, called by the HTTP layer. */
export {
  fetchAuthorizationServerMetadata,
  metadataCandidates,
  REQUIRED_METADATA_FIELDS,
  type AuthorizationServerMetadata,
  type FetchedMetadata,
  type FetchMetadataOptions,
} from './authorization-server-metadata.js';
export {
  ASYMMETRIC_ALGORITHMS,
  createAccessTokenVerifier,
  type AccessTokenVerifier,
  type AccessTokenVerifierOptions,
  type VerifiedCaller,
} from './access-token-verifier.js';
export {
  authenticateBearer,
  type BearerContext,
  type BearerOutcome,
  type BearerRefusal,
  type BearerRequest,
} from './authenticate-bearer.js';
export {
  formatBearerChallenge,
  type BearerChallenge,
  type BearerErrorCode,
} from './bearer-challenge.js';
export {
  pathSuffixedMetadataUrlFor,
  protectedResourceMetadata,
  resourceMetadataUrlFor,
  resourceUrlFor,
  type ProtectedResourceMetadata,
} from './protected-resource-metadata.js';
export { checkStoredKeySetUrl } from './remote-key-set.js';
export { isLoopbackHostname } from './secure-url.js';
