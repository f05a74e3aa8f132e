/**
 * Builds the `WWW-Authenticate: Bearer …` challenge (RFC 6750 §3, RFC 9728 §5.1).
 * Parameters are quoted strings with `\` and `"` escaped as quoted-pairs;
 * `error_description` and `scope` are further limited to the characters
 * RFC 6750 allows there (%x20-21 / %x23-5B / %x5D-7E), so quotes and
 * backslashes in them become `'` and `/`, and anything else becomes `?`.
 */

/** The RFC 6750 error codes a resource server sends. */
export type BearerErrorCode = 'invalid_request' | 'invalid_token' | 'insufficient_scope';

/** Parameters of one Bearer challenge, in the order they are written. */
export interface BearerChallenge {
  /** URL of the protected-resource metadata document (RFC 9728). */
  resourceMetadataUrl: string;
  error?: BearerErrorCode;
  /** Human-readable, short, free of secrets. */
  errorDescription?: string;
  /** Space-separated scopes needed, for insufficient_scope. */
  scope?: string;
}

/** The header value, e.g. `Bearer resource_metadata="…", error="invalid_token", error_description="…"`. */
export function formatBearerChallenge(challenge: BearerChallenge): string {
  const parameters = [`resource_metadata=${quote(challenge.resourceMetadataUrl)}`];
  if (challenge.error !== undefined) parameters.push(`error=${quote(challenge.error)}`);
  if (challenge.scope !== undefined)
    parameters.push(`scope=${quote(restrictToRfc6750(challenge.scope))}`);
  if (challenge.errorDescription !== undefined) {
    parameters.push(`error_description=${quote(restrictToRfc6750(challenge.errorDescription))}`);
  }
  return `Bearer ${parameters.join(', ')}`;
}

function quote(value: string): string {
  // Control characters cannot appear in a header at all; everything else is escaped (RFC 9110 quoted-string).
  const printable = value.replace(/[^\x20-\x7e]/g, '?');
  return `"${printable.replace(/[\\"]/g, (character) => `\\${character}`)}"`;
}

function restrictToRfc6750(value: string): string {
  return value
    .replace(/"/g, "'")
    .replace(/\\/g, '/')
    .replace(/[^\x20-\x7e]/g, '?');
}
