/**
 * Whether an address is globally reachable, judged against the IANA IPv4 and
 * IPv6 special-purpose address registries. The range tables are ipaddr.js's
 * (kept current by its maintainers, RFC by RFC) rather than our own; this file
 * only decides which of its range names count as reachable on the Internet.
 */
import ipaddr from 'ipaddr.js';
import type { IpLiteral } from './ip-address.js';

/** How the egress policy must treat an address. */
export type AddressScope =
  /** A globally reachable unicast address. */
  | { kind: 'global' }
  /** An IPv6 form that delivers to the IPv4 address(es) it carries; judge those instead. */
  | { kind: 'carrier' }
  /** Not globally reachable (IANA "Globally Reachable: False", or unallocated); `range` names it. */
  | { kind: 'special'; range: string };

/** ipaddr.js range names of addresses that the registries mark globally reachable. */
const GLOBAL_RANGES: ReadonlySet<string> = new Set([
  'unicast', // ipaddr.js's name for "in no special range"
  'as112', // 192.31.196.0/24, 192.175.48.0/24 (RFC 7534/7535)
  'amt', // 192.52.193.0/24, 2001:3::/32 (RFC 7450)
  'as112v6',
  'orchid2', // 2001:20::/28 (RFC 7343)
  'droneRemoteIdProtocolEntityTags', // 2001:30::/28 (RFC 9374)
]);

/** ipaddr.js range names of IPv6 forms that carry an IPv4 address a gateway or tunnel delivers to. */
const CARRIER_RANGES: ReadonlySet<string> = new Set([
  'ipv4Mapped',
  'rfc6145',
  'rfc6052',
  '6to4',
  'teredo',
]);

/** Readable names for messages; anything missing is shown as ipaddr.js names it. */
const RANGE_LABELS: Readonly<Record<string, string>> = {
  unspecified: 'an unspecified ("this network") address',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT address (100.64.0.0/10)',
  private: 'a private address (RFC 1918)',
  reserved: 'a reserved, documentation or benchmarking address',
  uniqueLocal: 'a unique-local address (fc00::/7)',
  deprecatedSiteLocal: 'a site-local address (fec0::/10)',
  discard: 'a discard-only address (100::/64)',
  benchmarking: 'a benchmarking address (2001:2::/48)',
  deprecatedOrchid: 'a deprecated ORCHID address (2001:10::/28)',
  segmentRouting: 'a segment-routing SID (5f00::/16)',
  nat64Local: 'a local-use NAT64 address (64:ff9b:1::/48)',
  unallocated: 'outside global unicast space (2000::/3)',
};

const NAT64_LOCAL_USE = ipaddr.parseCIDR('64:ff9b:1::/48');
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/** The scope of one parsed address. */
export function addressScope(ip: IpLiteral): AddressScope {
  const parsed = ip.family === 4 ? ipaddr.IPv4.parse(ip.address) : ipaddr.IPv6.parse(ip.address);
  // The local-use NAT64 prefix (RFC 8215) is not globally reachable, unlike 64:ff9b::/96.
  if (parsed.kind() === 'ipv6' && parsed.match(NAT64_LOCAL_USE)) return special('nat64Local');
  const range = parsed.range();
  if (CARRIER_RANGES.has(range)) return { kind: 'carrier' };
  if (!GLOBAL_RANGES.has(range)) return special(range);
  if (parsed.kind() === 'ipv6' && !parsed.match(GLOBAL_UNICAST_V6)) return special('unallocated');
  return { kind: 'global' };
}

/** "a loopback address" and the like, for refusal messages. */
export function describeRange(range: string): string {
  return RANGE_LABELS[range] ?? `a special-purpose address (${range})`;
}

function special(range: string): AddressScope {
  return { kind: 'special', range };
}
