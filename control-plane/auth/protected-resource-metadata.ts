/**
 * The OAuth 2.0 Protected Resource Metadata (RFC 9728) a hosted server
 * publishes in OAuth 2.0 mode, and the URLs derived from its public address.
 */

/** RFC 9728 document for one hosted MCP server. */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  bearer_methods_supported: ['header'];
  scopes_supported?: string[];
}

/** Inputs: the server's public address (no trailing slash needed), the AS issuer, advertised scopes. */
export interface ProtectedResourceInput {
  /** e.g. `https://demo.example.com`. */
  address: string;
  /** The Authorization Server's `issuer`. */
  issuer: string;
  /** Scopes to advertise; omitted from the document when undefined. */
  scopes?: string[];
}

/** The resource identifier clients send as `resource` and tokens carry in `aud`: `{address}/mcp`. */
export function resourceUrlFor(address: string): string {
  return `${trimSlashes(address)}/mcp`;
}

/** Where the metadata is served: `{address}/.well-known/oauth-protected-resource`. */
export function resourceMetadataUrlFor(address: string): string {
  return `${trimSlashes(address)}/.well-known/oauth-protected-resource`;
}

/** The RFC 9728 document for `address`. */
export function protectedResourceMetadata(
  input: ProtectedResourceInput,
): ProtectedResourceMetadata {
  return {
    resource: resourceUrlFor(input.address),
    authorization_servers: [input.issuer],
    bearer_methods_supported: ['header'],
    ...(input.scopes === undefined ? {} : { scopes_supported: [...input.scopes] }),
  };
}

function trimSlashes(address: string): string {
  return address.replace(/\/+$/, '');
}
