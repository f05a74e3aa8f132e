/**
 * The OAuth 2.0 Protected Resource Metadata (RFC 9728) a hosted server
 * publishes in OAuth 2.0 mode, and the URLs derived from its public address:
 * a server alone on its host names its metadata at the host's root; one of
 * many servers on one origin (the path addresses) in the path-suffixed form
 * of RFC 9728 §3.1, which is what tells them apart.
 */

/** RFC 9728 document for one hosted MCP server. */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  bearer_methods_supported: ['header'];
  scopes_supported?: string[];
}

/**
 * Inputs: the server's public address (no trailing slash needed; the resource
 * is then `{address}/mcp`) or its resource itself, the AS issuer, advertised scopes.
 */
export type ProtectedResourceInput = (
  | {
      /** e.g. `https://demo.example.com`. */
      address: string;
    }
  | {
      /** e.g. `https://mcp.example.com/servers/demo/mcp`. */
      resource: string;
    }
) & {
  /** The Authorization Server's `issuer`. */
  issuer: string;
  /** Scopes to advertise; omitted from the document when undefined. */
  scopes?: string[];
};

/** The resource identifier clients send as `resource` and tokens carry in `aud`: `{address}/mcp`. */
export function resourceUrlFor(address: string): string {
  return `${trimSlashes(address)}/mcp`;
}

/** Where the metadata is served: `{address}/.well-known/oauth-protected-resource`. */
export function resourceMetadataUrlFor(address: string): string {
  return `${trimSlashes(address)}/.well-known/oauth-protected-resource`;
}

/**
 * RFC 9728 §3.1: `{origin}/.well-known/oauth-protected-resource{path}` of a
 * resource URL, e.g. `https://mcp.example.com/.well-known/oauth-protected-resource/servers/demo/mcp`.
 */
export function pathSuffixedMetadataUrlFor(resource: string): string {
  const url = new URL(resource);
  return `${url.origin}/.well-known/oauth-protected-resource${url.pathname}`;
}

/** The RFC 9728 document for an address or a resource. */
export function protectedResourceMetadata(
  input: ProtectedResourceInput,
): ProtectedResourceMetadata {
  return {
    resource: 'resource' in input ? input.resource : resourceUrlFor(input.address),
    authorization_servers: [input.issuer],
    bearer_methods_supported: ['header'],
    ...(input.scopes === undefined ? {} : { scopes_supported: [...input.scopes] }),
  };
}

function trimSlashes(address: string): string {
  return address.replace(/\/+$/, '');
}
