/**
 * Which addresses tool code may reach through sdk.http and sdk.db. Cloud
 * metadata addresses are refused whatever the operator allows; loopback,
 * private, link-local, CGNAT, unique-local and multicast ranges are refused
 * unless the operator's allow list (EGRESS_ALLOW) names them; everything
 * else (public addresses) is reachable. An IPv6 address that carries an IPv4
 * address (mapped, compatible, NAT64, 6to4, Teredo) is judged by both.
 */
import { BlockList } from 'node:net';
import { McphostError } from '../../errors.js';
import { classifyHost, embeddedIpv4, parseIpv6, type IpLiteral } from './ip-address.js';

/**
 * Refused whatever the allow list says: cloud instance metadata — link-local
 * (AWS, GCP, Azure IMDS, Oracle…), AWS's and GCP's IPv6 endpoints, Azure's
 * WireServer (a public address!) and Alibaba Cloud's (inside CGNAT space).
 */
const ALWAYS_REFUSED: readonly string[] = [
  '169.254.0.0/16',
  'fd00:ec2::254/128',
  'fd20:ce::254/128',
  '168.63.129.16/32',
  '100.100.100.200/32',
];

/** Refused unless allowed: addresses that reach this host, its LAN or nothing public. */
const REFUSED_UNLESS_ALLOWED: readonly string[] = [
  '0.0.0.0/8', // "this network"; 0.0.0.0 reaches the local host on Linux
  '127.0.0.0/8',
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '100.64.0.0/10', // carrier-grade NAT
  '192.0.0.0/24', // IETF protocol assignments
  '198.18.0.0/15', // benchmarking, often internal
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, includes broadcast 255.255.255.255
  '::/128',
  '::1/128',
  'fc00::/7', // unique-local
  'fe80::/10', // link-local
  'fec0::/10', // deprecated site-local
  'ff00::/8', // multicast
];

type Cidr = { address: string; prefix: number; family: 4 | 6 };

function parseCidr(entry: string): Cidr | undefined {
  const [addressText = '', prefixText, extra] = entry.split('/');
  if (extra !== undefined) return undefined;
  const host = classifyHost(addressText);
  if (host.kind !== 'ip' || !isPlainIpText(addressText)) return undefined;
  const max = host.ip.family === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (!/^\d+$/.test(prefixText ?? String(max)) || prefix > max) return undefined;
  return { address: host.ip.address, prefix, family: host.ip.family };
}

// Allow-list entries must be written plainly; `0x7f.1` in a config is a typo or a trick.
function isPlainIpText(text: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(text) || text.includes(':');
}

function blockListOf(cidrs: Iterable<Cidr>): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs)
    list.addSubnet(cidr.address, cidr.prefix, cidr.family === 4 ? 'ipv4' : 'ipv6');
  return list;
}

const HOSTNAME_ENTRY =
  /^(\*\.)?[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/;

/** Lower-cased hostname without a trailing dot, for comparisons. */
function normaliseHostname(host: string): string {
  return host.trim().toLowerCase().replace(/\.$/, '');
}

/** The egress decision for tool traffic; immutable once built. */
export class EgressPolicy {
  private static readonly alwaysRefused = blockListOf(
    ALWAYS_REFUSED.map((entry) => parseCidr(entry) as Cidr),
  );
  private static readonly refusedUnlessAllowed = blockListOf(
    REFUSED_UNLESS_ALLOWED.map((entry) => parseCidr(entry) as Cidr),
  );

  private readonly allowedNetworks: BlockList;
  private readonly allowedHosts: ReadonlySet<string>;
  private readonly allowedSuffixes: readonly string[];

  private constructor(networks: Cidr[], hosts: string[]) {
    this.allowedNetworks = blockListOf(networks);
    this.allowedHosts = new Set(hosts.filter((host) => !host.startsWith('*.')));
    this.allowedSuffixes = hosts
      .filter((host) => host.startsWith('*.'))
      .map((host) => host.slice(1));
  }

  /**
   * Builds the policy from the operator's allow list (EGRESS_ALLOW, split on
   * commas): CIDRs (`10.0.0.0/8`, `fd12::/16`), single addresses, exact
   * hostnames (`db.internal`) or `*.suffix` wildcards. Empty → public only.
   * A malformed entry is an ERR_CONFIG naming it.
   */
  static fromAllowList(entries: readonly string[]): EgressPolicy {
    const networks: Cidr[] = [];
    const hosts: string[] = [];
    for (const raw of entries) {
      const entry = raw.trim().toLowerCase();
      if (entry === '') continue;
      const cidr = parseCidr(entry);
      if (cidr !== undefined) networks.push(cidr);
      else if (
        classifyHost(entry.replace(/^\*\./, '')).kind === 'name' &&
        HOSTNAME_ENTRY.test(entry)
      ) {
        hosts.push(normaliseHostname(entry));
      } else {
        throw new McphostError(
          'ERR_CONFIG',
          `EGRESS_ALLOW entry "${raw}" is neither a CIDR, an IP address nor a hostname`,
        );
      }
    }
    return new EgressPolicy(networks, hosts);
  }

  /** Builds the policy from the raw EGRESS_ALLOW value (comma- or space-separated; unset → public only). */
  static fromEnvValue(value: string | undefined): EgressPolicy {
    return EgressPolicy.fromAllowList((value ?? '').split(/[\s,]+/));
  }

  /** A policy that allows public addresses only. */
  static publicOnly(): EgressPolicy {
    return new EgressPolicy([], []);
  }

  /**
   * Throws ERR_EGRESS_DENIED unless `host` (as the tool wrote it) may be
   * reached at `address` (what it resolved to, the address we connect to).
   */
  check(host: string, address: string): void {
    const reason = this.refusalReason(host, address);
    if (reason === undefined) return;
    const target = normaliseHostname(host) === address ? address : `${host} (${address})`;
    throw new McphostError('ERR_EGRESS_DENIED', `egress to ${target} is not allowed: ${reason}`, {
      details: { host, address },
    });
  }

  /** Why `address` is refused for `host`, or undefined when it is allowed. */
  refusalReason(host: string, address: string): string | undefined {
    const parsed = classifyHost(address);
    if (parsed.kind !== 'ip') return 'the address is not an IP address';
    const views = addressViews(parsed.ip);
    if (views.some((view) => EgressPolicy.alwaysRefused.check(view.address, view.type))) {
      return 'cloud metadata addresses are always refused';
    }
    if (this.isHostAllowed(host)) return undefined;
    const internal = views.find((view) =>
      EgressPolicy.refusedUnlessAllowed.check(view.address, view.type),
    );
    if (internal === undefined) return undefined;
    if (views.some((view) => this.allowedNetworks.check(view.address, view.type))) return undefined;
    return 'loopback, private, link-local and multicast addresses need an EGRESS_ALLOW entry';
  }

  private isHostAllowed(host: string): boolean {
    const name = normaliseHostname(host);
    if (this.allowedHosts.has(name)) return true;
    return this.allowedSuffixes.some((suffix) => name.endsWith(suffix));
  }
}

type AddressView = { address: string; type: 'ipv4' | 'ipv6' };

/** The address itself plus every IPv4 address it carries. */
function addressViews(ip: IpLiteral): AddressView[] {
  if (ip.family === 4) return [{ address: ip.address, type: 'ipv4' }];
  const embedded = embeddedIpv4(parseIpv6(ip.address)).map((address): AddressView => ({
    address,
    type: 'ipv4',
  }));
  return [{ address: ip.address, type: 'ipv6' }, ...embedded];
}
