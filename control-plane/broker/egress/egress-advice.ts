/**
 * What a refusal of the egress policy tells the reader to do. Tool traffic
 * names its server's own setting first — the dashboard's "Private hosts its
 * tools may reach", `egressAllow` over the API — because it takes effect at
 * once and for that server only; the host-wide EGRESS_ALLOW second, since it
 * opens the address to every server and is read at start. The control
 * plane's own requests (OAuth metadata and keys) obey EGRESS_ALLOW alone.
 */
import { classifyHost } from './ip-address.js';

/** Whose traffic a policy judges: one hosted server's tools, or the control plane itself. */
export type EgressAudience = { kind: 'server'; server: string } | { kind: 'host' };

/** The dashboard's label of a server's `egressAllow` (tenancy-form.ts), word for word. */
export const SERVER_ALLOW_LABEL = 'Private hosts its tools may reach';

/**
 * The sentence after "… is not allowed: {address} is {what}" saying how to
 * allow `host` (as the tool wrote it) on `port`, for `audience`.
 */
export function egressAdvice(
  audience: EgressAudience,
  host: string,
  port: number | undefined,
): string {
  if (audience.kind === 'host') {
    return "; this host's own, internal and special-purpose addresses need an EGRESS_ALLOW entry";
  }
  const entry = allowEntryFor(host, port);
  const server = audience.server;
  return (
    `. To let this server's tools reach it, add ${entry} to "${SERVER_ALLOW_LABEL}" in its settings` +
    ` (dashboard: Settings, Sharing this host; API: egressAllow in PATCH /api/servers/${server}/settings),` +
    ` which takes effect at once; or, for every server, add it to EGRESS_ALLOW and restart mcphost.`
  );
}

/** The narrowest allow entry for `host` on `port`, in the syntax allow-entry.ts parses. */
export function allowEntryFor(host: string, port: number | undefined): string {
  const classified = classifyHost(host);
  // An address as the policy reads it (0x0a000001 is 10.0.0.1); a name as written.
  const target =
    classified.kind === 'ip'
      ? classified.ip.address
      : host
          .trim()
          .toLowerCase()
          .replace(/^\[|\]$/g, '')
          .replace(/\.$/, '');
  if (port === undefined) return target;
  // A bare IPv6 address takes no port: brackets are what give it one.
  return classified.kind === 'ip' && classified.ip.family === 6
    ? `[${target}]:${port}`
    : `${target}:${port}`;
}
