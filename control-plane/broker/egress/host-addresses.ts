/**
 * The addresses of this machine's own interfaces. Every service bound to
 * 0.0.0.0 (the control plane itself, a local database) answers on them, so
 * tool egress to them is egress into the host — whatever range they are in:
 * a cloud VM's interface may carry a public address. Interfaces come and go
 * (DHCP, VPNs, Docker bridges), so the list is re-read when it is older than
 * `maxAgeMs`; reading it is one getifaddrs() call.
 */
import { networkInterfaces } from 'node:os';
import { classifyHost } from './ip-address.js';

/** Reads the interface addresses; injectable for unit tests. */
export type InterfaceReader = () => string[];

const readSystemInterfaces: InterfaceReader = () =>
  Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((entry) => entry.address));

/** A current view of the host's own addresses (canonical text). */
export class HostAddresses {
  private addresses: ReadonlySet<string> = new Set();
  private readAt = -Infinity;

  /**
   * @param read where addresses come from; default os.networkInterfaces().
   * @param maxAgeMs longest a read list is trusted, in ms; default 2000.
   * @param now the clock, in ms.
   */
  constructor(
    private readonly read: InterfaceReader = readSystemInterfaces,
    private readonly maxAgeMs = 2_000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** True when `address` (canonical text, as IpLiteral.address) is one of this host's. */
  has(address: string): boolean {
    if (this.now() - this.readAt > this.maxAgeMs) {
      this.addresses = new Set(this.read().flatMap(canonical));
      this.readAt = this.now();
    }
    return this.addresses.has(address);
  }
}

function canonical(address: string): string[] {
  const host = classifyHost(address);
  return host.kind === 'ip' ? [host.ip.address] : [];
}

/** The process-wide instance the egress policies share. */
export const systemHostAddresses = new HostAddresses();
