/**
 * The address of the client behind a request. The socket's peer, unless that
 * peer is one of TRUSTED_PROXIES: then `X-Forwarded-For` is read from the
 * right, skipping trusted proxies, and the first address that is not one is
 * the client (an address a client wrote further left is its own claim, not
 * to be believed). The listener puts the answer in an internal header every
 * request carries — overwriting whatever a client sent there — so handlers
 * and the MCP SDK's `requestInfo` see it, as the request id travels.
 */
import type { IncomingMessage } from 'node:http';
import { isIP, isIPv4, isIPv6 } from 'node:net';
import ipaddr from 'ipaddr.js';

/** The header the listener sets; a client's own value is always replaced. */
const CLIENT_ADDRESS_HEADER = 'x-mcphost-client-address';

/** TRUSTED_PROXIES parsed: addresses and CIDR ranges. */
export class TrustedProxies {
  readonly #ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][];

  private constructor(ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][]) {
    this.#ranges = ranges;
  }

  /** Parses entries (`10.0.0.1`, `10.0.0.0/8`, `fd00::/8`); throws naming a bad one. */
  static parse(entries: readonly string[]): TrustedProxies {
    return new TrustedProxies(
      entries.map((entry) => {
        if (isIP(entry.split('/')[0]!) === 0) {
          throw new Error(`"${entry}" is not an IP address or CIDR`);
        }
        if (entry.includes('/')) return ipaddr.parseCIDR(entry);
        const address = ipaddr.parse(entry);
        return [address, address.kind() === 'ipv4' ? 32 : 128];
      }),
    );
  }

  get empty(): boolean {
    return this.#ranges.length === 0;
  }

  includes(address: string): boolean {
    if (this.#ranges.length === 0 || isIP(address) === 0) return false;
    let parsed = ipaddr.parse(address);
    // An IPv4-mapped IPv6 peer (a dual-stack socket) is its IPv4 address.
    if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
      parsed = (parsed as ipaddr.IPv6).toIPv4Address();
    }
    return this.#ranges.some(
      ([range, bits]) => range.kind() === parsed.kind() && parsed.match(range, bits),
    );
  }
}

/** The client's address of a request whose socket peer is `peer`. */
export function clientAddressOf(
  peer: string | undefined,
  forwardedFor: string | string[] | undefined,
  trusted: TrustedProxies,
): string | undefined {
  if (peer === undefined || !trusted.includes(peer)) return peer;
  const hops = [forwardedFor ?? []]
    .flat()
    .flatMap((header) => header.split(','))
    .map((hop) => hop.trim())
    .filter((hop) => hop.length > 0);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (isIP(hop) === 0) return peer; // not an address: the chain cannot be read further
    if (!trusted.includes(hop)) return hop;
  }
  // Every hop is a trusted proxy: the leftmost is the nearest thing to a client.
  return hops[0] ?? peer;
}

/** Sets the request's client address (see the module comment); returns it. */
export function assignClientAddress(
  req: IncomingMessage,
  trusted: TrustedProxies,
): string | undefined {
  const address = clientAddressOf(
    req.socket.remoteAddress,
    req.headers['x-forwarded-for'],
    trusted,
  );
  if (address === undefined) delete req.headers[CLIENT_ADDRESS_HEADER];
  else req.headers[CLIENT_ADDRESS_HEADER] = address;
  return address;
}

/** The client address the listener assigned, from a request or a header map (the SDK's `requestInfo.headers`). */
export function clientAddressFromHeaders(
  headers: Record<string, string | string[] | undefined> | undefined,
): string | undefined {
  const address = headers?.[CLIENT_ADDRESS_HEADER];
  return typeof address === 'string' ? address : undefined;
}

/**
 * The network a client is counted by, wherever one budget per client is
 * kept (request rates, sign-in attempts): an IPv4 address as is, an IPv6
 * address by its /64 (one host commonly holds a whole /64, so counting each
 * address would give it 2^64 budgets). An IPv4-mapped IPv6 address counts as
 * its IPv4 address.
 */
export function clientNetworkOf(address: string | undefined): string {
  if (address === undefined) return 'unknown';
  // Every request asks: the socket's address is already canonical, so IPv4 needs no parsing.
  if (isIPv4(address)) return address;
  const mapped = address.startsWith('::ffff:') ? address.slice(7) : undefined;
  if (mapped !== undefined && isIPv4(mapped)) return mapped;
  if (!isIPv6(address)) return 'unknown';
  const parts = ipaddr.IPv6.parse(address).parts.slice(0, 4);
  return `${parts.map((part) => part.toString(16)).join(':')}::/64`;
}
