/**
 * How a hosted server looks over the admin API: its settings, its public
 * address and MCP URL, and in OAuth 2.0 mode what clients will discover.
 */
import { serverAddress, type Config } from '../config.js';
import type { ServerRecord } from '../store/index.js';

export interface ServerView {
  subdomain: string;
  name: string;
  address: string;
  mcpUrl: string;
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
  oauth: { issuer: string; protectedResourceMetadataUrl: string; resource: string } | null;
  toolCount: number;
  createdAt: string;
  updatedAt: string;
}

export function serverView(config: Config, server: ServerRecord, toolCount: number): ServerView {
  const address = serverAddress(config, server.subdomain);
  const oauth =
    server.securityMode === 'oauth2' && server.oauthMetadata
      ? {
          issuer: server.oauthMetadata.issuer,
          protectedResourceMetadataUrl: `${address}/.well-known/oauth-protected-resource`,
          resource: `${address}/mcp`,
        }
      : null;
  return {
    subdomain: server.subdomain,
    name: server.name,
    address,
    mcpUrl: `${address}/mcp`,
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
    oauth,
    toolCount,
    createdAt: server.createdAt,
    updatedAt: server.updatedAt,
  };
}
