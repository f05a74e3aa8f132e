/**
 * How a hosted server looks over the admin API: its settings, its MCP URLs
 * (every address ROUTING turns on, and the preferred one), and in OAuth 2.0
 * mode what clients will discover at each (docs/addresses.md).
 *
 * `mcpUrl` is the preferred address (config.ts, preferredAddressForm): the
 * path form when BASE_DOMAIN is `localhost` or it is the only form, else the
 * host form; `address` is the base of the host form while that is on (what it
 * has always been), else of the path form. `oauth.resource` and
 * `oauth.protectedResourceMetadataUrl` are those of `mcpUrl`; `oauth.addresses`
 * has them for every address.
 */
import {
  preferredAddressForm,
  serverAddress,
  serverMcpUrls,
  type AddressConfig,
  type AddressForm,
  type McpUrls,
} from '../config.js';
import { serverResourceAt, type ServerResource } from '../http/index.js';
import type { ServerRecord } from '../store/index.js';

export interface ServerView {
  subdomain: string;
  name: string;
  address: string;
  /** The preferred MCP URL (see the file's comment). */
  mcpUrl: string;
  /** Every MCP URL the server answers at: `host` and/or `path`, as ROUTING turns them on. */
  mcpUrls: McpUrls;
  active: boolean;
  securityMode: ServerRecord['securityMode'];
  oauthServerUrl: string | null;
  oauthAudience: string | null;
  oauthRequiredScopes: string[];
  limits: ServerRecord['limits'];
  isolation: ServerRecord['isolation'];
  runtime: ServerRecord['runtime'];
  maxContainers: ServerRecord['maxContainers'];
  egressAllow: ServerRecord['egressAllow'];
  allowedOrigins: ServerRecord['allowedOrigins'];
  rateLimit: ServerRecord['rateLimit'];
  cacheTtlMs: ServerRecord['cacheTtlMs'];
  callerClaims: ServerRecord['callerClaims'];
  oauth:
    | (ServerResource & {
        issuer: string;
        /** The resource and metadata URL of each address. */
        addresses: Partial<Record<AddressForm, ServerResource>>;
      })
    | null;
  toolCount: number;
  createdAt: string;
  updatedAt: string;
}

export function serverView(
  config: AddressConfig,
  server: ServerRecord,
  toolCount: number,
): ServerView {
  const mcpUrls = serverMcpUrls(config, server.subdomain);
  const preferred = preferredAddressForm(config);
  const mcpUrl = mcpUrls[preferred]!;
  const address = config.routing.host
    ? serverAddress(config, server.subdomain)
    : mcpUrl.replace(/\/mcp$/, '');
  const oauth =
    server.securityMode === 'oauth2' && server.oauthMetadata
      ? {
          issuer: server.oauthMetadata.issuer,
          ...serverResourceAt(config, server.subdomain, preferred)!,
          addresses: Object.fromEntries(
            (Object.keys(mcpUrls) as AddressForm[]).map((form) => [
              form,
              serverResourceAt(config, server.subdomain, form)!,
            ]),
          ),
        }
      : null;
  return {
    subdomain: server.subdomain,
    name: server.name,
    address,
    mcpUrl,
    mcpUrls,
    active: server.active,
    securityMode: server.securityMode,
    oauthServerUrl: server.oauthServerUrl,
    oauthAudience: server.oauthAudience,
    oauthRequiredScopes: server.oauthRequiredScopes,
    limits: server.limits,
    isolation: server.isolation,
    runtime: server.runtime,
    maxContainers: server.maxContainers,
    egressAllow: server.egressAllow,
    allowedOrigins: server.allowedOrigins,
    rateLimit: server.rateLimit,
    cacheTtlMs: server.cacheTtlMs,
    callerClaims: server.callerClaims,
    oauth,
    toolCount,
    createdAt: server.createdAt,
    updatedAt: server.updatedAt,
  };
}
