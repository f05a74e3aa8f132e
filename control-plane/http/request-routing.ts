/**
 * Which side a request is for, and at which of its addresses a hosted server
 * was reached (docs/addresses.md):
 * - host form: the Host header is `{subdomain}.{BASE_DOMAIN}` (any port);
 *   every path of that host belongs to the server.
 * - path form: any other host, and the path is exactly
 *   `/servers/{subdomain}/mcp`, or its protected-resource metadata
 *   `/.well-known/oauth-protected-resource/servers/{subdomain}/mcp` (RFC 9728
 *   §3.1). Either may carry PUBLIC_URL's path prefix (`/mcphost/servers/…`,
 *   `/.well-known/oauth-protected-resource/mcphost/servers/…`), so a reverse
 *   proxy may strip the prefix or pass it on.
 *   The path form answers only on PUBLIC_URL's host (every name of this machine
 *   when that is one of them).
 * Everything else is the admin side. A form ROUTING turns off is not
 * special: its hosts and paths are the admin side's like any other.
 *
 * The host form is decided first: on a server's own host, `/servers/…` is
 * just a path of that server (404), never another server.
 */
import type { AddressForm } from '../config.js';
import { subdomainSchema } from '../store/index.js';

/** What a hosted server is asked for: MCP, its RFC 9728 metadata, or a path it does not have. */
export type HostedEndpoint = 'mcp' | 'metadata' | 'unknown';

/** A request for a hosted server, at one of its addresses. */
export interface HostedTarget {
  side: 'hosted';
  subdomain: string;
  /** The address the request came by: it decides the OAuth resource the request is checked against. */
  form: AddressForm;
  endpoint: HostedEndpoint;
}

export type RequestTarget = HostedTarget | { side: 'admin' };

/** How requests are told apart; built from BASE_DOMAIN, ROUTING and PUBLIC_URL. */
export interface RoutingOptions {
  /** Hosted servers are `{subdomain}.{baseDomain}` (compared lower-case). */
  baseDomain: string;
  /** Whether the host form is on (ROUTING has `host`). */
  hostForm: boolean;
  /**
   * The path form (ROUTING has `path`): PUBLIC_URL's path prefix ('' or `/prefix`)
   * and the host names it answers on (lower-case, IPv6 in brackets); null = off.
   */
  pathForm: { prefix: string; hosts: readonly string[] } | null;
}

/** The two well-known paths of a server reached by its host (root and path-suffixed forms). */
const HOST_METADATA_PATHS = new Set([
  '/.well-known/oauth-protected-resource',
  '/.well-known/oauth-protected-resource/mcp',
]);

const METADATA_ROOT = '/.well-known/oauth-protected-resource';

/** Builds the router once; it reads the Host header and the URL's path (already normalised by URL). */
export function createRequestRouter(
  options: RoutingOptions,
): (hostHeader: string | undefined, pathname: string) => RequestTarget {
  const suffix = `.${options.baseDomain.toLowerCase()}`;
  const pathServer = options.pathForm === null ? null : pathServerMatcher(options.pathForm.prefix);
  const pathHosts = new Set(options.pathForm?.hosts ?? []);
  return (hostHeader, pathname) => {
    const subdomain = options.hostForm ? subdomainOfHost(hostHeader, suffix) : undefined;
    if (subdomain !== undefined) {
      const endpoint: HostedEndpoint =
        pathname === '/mcp' ? 'mcp' : HOST_METADATA_PATHS.has(pathname) ? 'metadata' : 'unknown';
      return { side: 'hosted', subdomain, form: 'host', endpoint };
    }
    // Only on PUBLIC_URL's host: on any other name (a deeper name under the base
    // domain, an address) a path is no server's, so a proxy's rules by server name hold.
    const byPath = pathHosts.has(hostnameOf(hostHeader)) ? pathServer?.(pathname) : undefined;
    if (byPath !== undefined) return { side: 'hosted', form: 'path', ...byPath };
    return { side: 'admin' };
  };
}

/** The server a host names, or undefined when it names none. */
function subdomainOfHost(hostHeader: string | undefined, suffix: string): string | undefined {
  if (!hostHeader) return undefined;
  const host = stripPort(hostHeader.toLowerCase());
  if (!host.endsWith(suffix)) return undefined;
  const subdomain = host.slice(0, -suffix.length);
  // Only a single DNS label selects a server; deeper names are not ours.
  if (subdomain.length === 0 || subdomain.includes('.')) return undefined;
  return subdomain;
}

/**
 * Matches `[prefix]/servers/{sub}/mcp` and its metadata path exactly; `{sub}`
 * must follow the subdomain rule (an escaped or upper-case name is no server's).
 */
function pathServerMatcher(
  prefix: string,
): (pathname: string) => { subdomain: string; endpoint: 'mcp' | 'metadata' } | undefined {
  const server = /^\/servers\/([^/]+)\/mcp$/;
  const withoutPrefix = (path: string) =>
    prefix !== '' && path.startsWith(`${prefix}/`) ? path.slice(prefix.length) : path;
  return (pathname) => {
    const endpoint = pathname.startsWith(`${METADATA_ROOT}/`) ? 'metadata' : 'mcp';
    const rest = withoutPrefix(
      endpoint === 'metadata' ? pathname.slice(METADATA_ROOT.length) : pathname,
    );
    const subdomain = server.exec(rest)?.[1];
    if (subdomain === undefined || !subdomainSchema.safeParse(subdomain).success) return undefined;
    return { subdomain, endpoint };
  };
}

function stripPort(host: string): string {
  if (host.startsWith('[')) return host; // IPv6 literal: never a hosted server
  const colon = host.lastIndexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}

/** The Host header's name, lower-case, without its port ('' when absent). */
function hostnameOf(hostHeader: string | undefined): string {
  if (!hostHeader) return '';
  const host = hostHeader.toLowerCase();
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const colon = host.lastIndexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}
