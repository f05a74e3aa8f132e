/**
 * Which side a request is for, from its Host header: `{subdomain}.{BASE_DOMAIN}`
 * (any port) is a hosted MCP server; any other host is the admin side.
 */

export type HostTarget = { side: 'hosted'; subdomain: string } | { side: 'admin' };

/** Builds the matcher once for a base domain (lower-case). */
export function createHostRouter(
  baseDomain: string,
): (hostHeader: string | undefined) => HostTarget {
  const suffix = `.${baseDomain.toLowerCase()}`;
  return (hostHeader) => {
    if (!hostHeader) return { side: 'admin' };
    const host = stripPort(hostHeader.toLowerCase());
    if (!host.endsWith(suffix)) return { side: 'admin' };
    const subdomain = host.slice(0, -suffix.length);
    // Only a single DNS label selects a server; deeper names are not ours.
    if (subdomain.length === 0 || subdomain.includes('.')) return { side: 'admin' };
    return { side: 'hosted', subdomain };
  };
}

function stripPort(host: string): string {
  if (host.startsWith('[')) return host; // IPv6 literal: never a hosted server
  const colon = host.lastIndexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}
