/**
 * Which addresses tool code may reach through sdk.http and sdk.db (and the
 * control plane itself when it fetches OAuth metadata and keys). Cloud
 * metadata addresses are refused whatever the operator allows. This host's
 * own interface addresses and every special-purpose address that is not
 * globally reachable (loopback, private, link-local, CGNAT, documentation,
 * benchmarking, reserved, multicast, unique-local, local-use NAT64…) are
 * refused unless an allow entry covers them (on that port, when the entry
 * names one). Globally reachable addresses are allowed. An IPv6 address that
 * carries an IPv4 address (mapped, compatible, NAT64, 6to4, Teredo) is allowed
 * only when every one of its views is.
 */
import { BlockList } from 'node:net';
import { McphostError } from '../../errors.js';
import { addressScope, describeRange } from './address-scope.js';
import { egressAdvice, type EgressAudience } from './egress-advice.js';
import { coversPort, parseEgressAllowList, type AllowEntry } from './allow-entry.js';
import { systemHostAddresses, type HostAddresses } from './host-addresses.js';
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

type NetworkEntry = Extract<AllowEntry, { kind: 'network' }>;
type AddressView = { address: string; type: 'ipv4' | 'ipv6'; ip: IpLiteral };

function blockListOf(networks: Iterable<Pick<NetworkEntry, 'address' | 'prefix' | 'family'>>) {
  const list = new BlockList();
  for (const network of networks)
    list.addSubnet(network.address, network.prefix, network.family === 4 ? 'ipv4' : 'ipv6');
  return list;
}

/** Options of the EgressPolicy factories. */
export interface EgressPolicyOptions {
  /** This host's own addresses; default the system's interfaces, re-read every 2 s. */
  hostAddresses?: HostAddresses;
}

/** The egress decision; immutable once built (the host's addresses are read live). */
export class EgressPolicy {
  private static readonly alwaysRefused = blockListOf(
    ALWAYS_REFUSED.map((entry) => {
      const [address = '', prefix = ''] = entry.split('/');
      return { address, prefix: Number(prefix), family: address.includes(':') ? 6 : 4 };
    }),
  );

  /** Networks allowed on every port, and networks allowed on one port. */
  private readonly anyPort: BlockList;
  private readonly byPort: ReadonlyMap<number, BlockList>;
  private readonly anyPortNetworks: BlockList;

  private constructor(
    private readonly entries: readonly AllowEntry[],
    private readonly hostAddresses: HostAddresses,
    /** Whose traffic this judges: what a refusal tells the reader to change (egress-advice.ts). */
    private readonly audience: EgressAudience = { kind: 'host' },
  ) {
    const networks = entries.filter((entry): entry is NetworkEntry => entry.kind === 'network');
    this.anyPort = blockListOf(networks.filter((entry) => entry.port === undefined));
    const ports = new Set(
      networks.flatMap((entry) => (entry.port === undefined ? [] : [entry.port])),
    );
    this.byPort = new Map(
      [...ports].map((port) => [
        port,
        blockListOf(networks.filter((entry) => entry.port === port)),
      ]),
    );
    this.anyPortNetworks = blockListOf(networks);
  }

  /**
   * Builds the policy from the operator's allow list (EGRESS_ALLOW, split on
   * commas): addresses, CIDRs, hostnames and `*.suffix` wildcards, each with an
   * optional `:port` (see allow-entry.ts). Empty → globally reachable
   * addresses only. A malformed entry is an ERR_CONFIG naming it.
   */
  static fromAllowList(
    entries: readonly string[],
    options: EgressPolicyOptions = {},
  ): EgressPolicy {
    const parsed = parseEgressAllowList(entries, (problem) => {
      throw new McphostError('ERR_CONFIG', `EGRESS_ALLOW entry ${problem}`);
    });
    return new EgressPolicy(parsed, options.hostAddresses ?? systemHostAddresses);
  }

  /** A policy that allows globally reachable addresses only. */
  static publicOnly(): EgressPolicy {
    return new EgressPolicy([], systemHostAddresses);
  }

  /**
   * This policy plus more entries (same syntax), refusals worded as this
   * policy's are: the control plane's own exceptions (loopback in development).
   * A malformed entry fails the call with ERR_CONFIG naming it.
   */
  withServerAllow(entries: readonly string[]): EgressPolicy {
    if (entries.length === 0) return this;
    return new EgressPolicy(
      [...this.entries, ...parseServerAllow(entries)],
      this.hostAddresses,
      this.audience,
    );
  }

  /**
   * The policy of `server`'s tool traffic: this one plus the server's own
   * `egressAllow` entries, its refusals naming that setting first (it takes
   * effect at once) and EGRESS_ALLOW second. A malformed stored entry fails
   * the call with ERR_CONFIG naming it.
   */
  forServer(server: string, entries: readonly string[]): EgressPolicy {
    return new EgressPolicy([...this.entries, ...parseServerAllow(entries)], this.hostAddresses, {
      kind: 'server',
      server,
    });
  }

  /**
   * Throws ERR_EGRESS_DENIED unless `host` (as the tool wrote it) may be
   * reached at `address` (what it resolved to, the address we connect to) on
   * `port` (undefined: only entries without a port apply).
   */
  check(host: string, address: string, port?: number): void {
    const reason = this.refusalReason(host, address, port);
    if (reason === undefined) return;
    const target = normaliseHostname(host) === address ? address : `${host} (${address})`;
    throw new McphostError('ERR_EGRESS_DENIED', `egress to ${target} is not allowed: ${reason}`, {
      details: { host, address, ...(port === undefined ? {} : { port }) },
    });
  }

  /** Why `address` is refused for `host` on `port`, or undefined when it is allowed. */
  refusalReason(host: string, address: string, port?: number): string | undefined {
    const parsed = classifyHost(address);
    if (parsed.kind !== 'ip') return 'the address is not an IP address';
    const views = addressViews(parsed.ip);
    if (views.some((view) => EgressPolicy.alwaysRefused.check(view.address, view.type))) {
      return 'cloud metadata addresses are always refused';
    }
    if (this.isHostAllowed(host, port)) return undefined;
    // Every view must pass: a Teredo address is delivered to both IPv4 addresses it carries.
    for (const view of views) {
      const needs = this.whyInternal(view);
      if (needs === undefined || this.isNetworkAllowed(view, port)) continue;
      const otherPort = this.anyPortNetworks.check(view.address, view.type)
        ? ` (an allow entry covers it, but not on port ${port ?? '(unknown)'})`
        : '';
      return `${view.address} is ${needs}${otherPort}${egressAdvice(this.audience, host, port)}`;
    }
    return undefined;
  }

  /** What makes `view` internal, or undefined when it is globally reachable. */
  private whyInternal(view: AddressView): string | undefined {
    const scope = addressScope(view.ip);
    if (scope.kind === 'special') return describeRange(scope.range);
    // Whatever its range (a cloud VM's interface may be public), it reaches services bound to 0.0.0.0.
    return this.hostAddresses.has(view.address) ? 'an address of this host' : undefined;
  }

  private isNetworkAllowed(view: AddressView, port: number | undefined): boolean {
    if (this.anyPort.check(view.address, view.type)) return true;
    if (port === undefined) return false;
    return this.byPort.get(port)?.check(view.address, view.type) ?? false;
  }

  private isHostAllowed(host: string, port: number | undefined): boolean {
    const name = normaliseHostname(host);
    return this.entries.some(
      (entry) =>
        coversPort(entry, port) &&
        ((entry.kind === 'host' && entry.name === name) ||
          (entry.kind === 'suffix' && name.endsWith(entry.suffix))),
    );
  }
}

/** A server's `egressAllow` entries parsed; a malformed one is an ERR_CONFIG naming it. */
function parseServerAllow(entries: readonly string[]): AllowEntry[] {
  return parseEgressAllowList(entries, (problem) => {
    throw new McphostError('ERR_CONFIG', `the server's egressAllow entry ${problem}`);
  });
}

/** Lower-cased hostname without a trailing dot or brackets, for comparisons. */
function normaliseHostname(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
}

/** The address itself plus every IPv4 address it carries. */
function addressViews(ip: IpLiteral): AddressView[] {
  const self: AddressView = { address: ip.address, type: ip.family === 4 ? 'ipv4' : 'ipv6', ip };
  if (ip.family === 4) return [self];
  const embedded = embeddedIpv4(parseIpv6(ip.address)).map((address): AddressView => ({
    address,
    type: 'ipv4',
    ip: { family: 4, address },
  }));
  return [self, ...embedded];
}
