/**
 * One egress allow entry, as written in EGRESS_ALLOW or a server's
 * `egressAllow` setting: an address, a CIDR, a hostname or a `*.suffix`
 * wildcard, each optionally with a port — `10.0.0.5:5432`, `10.0.0.0/8:443`,
 * `db.internal:5432`, `[fd00::1]:443`, `[fd00::/8]:443`. A bare IPv6 address
 * or CIDR (`fd00::1`, `fd00::/8`) has no port; brackets are what give it one.
 */
import { classifyHost } from './ip-address.js';

/** A parsed allow entry; `port` undefined means every port. */
export type AllowEntry = {
  /** The entry as written, for messages. */
  text: string;
  port: number | undefined;
} & (
  | { kind: 'network'; address: string; prefix: number; family: 4 | 6 }
  | { kind: 'host'; name: string }
  | { kind: 'suffix'; suffix: string }
);

const HOSTNAME = /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/;

/** Parses one entry; returns a sentence saying what is wrong instead when it is malformed. */
export function parseEgressAllowEntry(raw: string): AllowEntry | string {
  const text = raw.trim().toLowerCase();
  const problem = `"${raw}" is not an IP address, CIDR or hostname with an optional :port`;
  const split = splitPort(text);
  if (split === undefined) return problem;
  const { target, port } = split;
  const network = parseNetwork(target);
  if (network !== undefined) return { text: raw.trim(), port, kind: 'network', ...network };
  if (text.startsWith('[')) return problem; // brackets are for IPv6 only
  const name = target.replace(/\.$/, '');
  const wildcard = name.startsWith('*.');
  const bare = wildcard ? name.slice(2) : name;
  if (!HOSTNAME.test(bare) || classifyHost(bare).kind !== 'name') return problem;
  return wildcard
    ? { text: raw.trim(), port, kind: 'suffix', suffix: `.${bare}` }
    : { text: raw.trim(), port, kind: 'host', name: bare };
}

/** Every entry parsed; the first malformed one is reported through `fail`. */
export function parseEgressAllowList(
  entries: readonly string[],
  fail: (problem: string) => never,
): AllowEntry[] {
  const parsed: AllowEntry[] = [];
  for (const raw of entries) {
    if (raw.trim() === '') continue;
    const entry = parseEgressAllowEntry(raw);
    if (typeof entry === 'string') fail(entry);
    parsed.push(entry);
  }
  return parsed;
}

/** Does `entry` cover `port`? An entry without a port covers all; an unknown port matches only those. */
export function coversPort(entry: AllowEntry, port: number | undefined): boolean {
  return entry.port === undefined || entry.port === port;
}

function splitPort(text: string): { target: string; port: number | undefined } | undefined {
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0) return undefined;
    const rest = text.slice(close + 1);
    if (rest === '') return { target: text.slice(1, close), port: undefined };
    if (!rest.startsWith(':')) return undefined;
    const port = parsePort(rest.slice(1));
    return port === undefined ? undefined : { target: text.slice(1, close), port };
  }
  const colons = text.split(':').length - 1;
  if (colons !== 1) return { target: text, port: undefined }; // none, or a bare IPv6
  const [target = '', portText = ''] = text.split(':');
  const port = parsePort(portText);
  return port === undefined ? undefined : { target, port };
}

function parsePort(text: string): number | undefined {
  if (!/^\d{1,5}$/.test(text)) return undefined;
  const port = Number(text);
  return port >= 1 && port <= 65_535 ? port : undefined;
}

function parseNetwork(
  text: string,
): { address: string; prefix: number; family: 4 | 6 } | undefined {
  const [addressText = '', prefixText, extra] = text.split('/');
  if (extra !== undefined || !isPlainIpText(addressText)) return undefined;
  const host = classifyHost(addressText);
  if (host.kind !== 'ip') return undefined;
  const max = host.ip.family === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (prefix > max) return undefined;
  return { address: host.ip.address, prefix, family: host.ip.family };
}

// Allow entries must be written plainly; `0x7f.1` in a config is a typo or a trick.
function isPlainIpText(text: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(text) || (text.includes(':') && !text.includes('%'));
}
