/**
 * A hosted server's OAuth 2.0 resource at each of its addresses
 * (docs/addresses.md): the resource identifier tokens must name in `aud`
 * (RFC 8707; the MCP URL itself) and where its RFC 9728 metadata is served.
 * Each address is its own resource: a token for one never passes at another
 * unless the server names one audience for all (`oauthAudience`).
 * The gate (server-gate.ts) and the admin API's server views both read it.
 */
import {
  pathSuffixedMetadataUrlFor,
  resourceMetadataUrlFor,
  resourceUrlFor,
} from '../identity/index.js';
import { serverAddress, serverMcpUrls, type AddressConfig, type AddressForm } from '../config.js';

/** The resource of one address of a server. */
export interface ServerResource {
  /** e.g. `http://acme.localhost:8080/mcp`, `http://localhost:8080/servers/acme/mcp`. */
  resource: string;
  /** What a 401's `resource_metadata` names, and where the document is served. */
  protectedResourceMetadataUrl: string;
}

/**
 * The resource of `subdomain` at `form`: the host form keeps its metadata at
 * its own host's root (`{address}/.well-known/oauth-protected-resource`); the
 * path form shares its origin with every server, so it uses the path-suffixed
 * form (`{origin}/.well-known/oauth-protected-resource{prefix}/servers/{sub}/mcp`).
 * Undefined when ROUTING turns the form off.
 */
export function serverResourceAt(
  config: AddressConfig,
  subdomain: string,
  form: AddressForm,
): ServerResource | undefined {
  if (form === 'host') {
    if (!config.routing.host) return undefined;
    const address = serverAddress(config, subdomain);
    return {
      resource: resourceUrlFor(address),
      protectedResourceMetadataUrl: resourceMetadataUrlFor(address),
    };
  }
  const resource = serverMcpUrls(config, subdomain).path;
  if (resource === undefined) return undefined;
  return { resource, protectedResourceMetadataUrl: pathSuffixedMetadataUrlFor(resource) };
}
