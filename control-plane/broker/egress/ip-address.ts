/**
 * IP literals as the rest of the system would read them. A host string is
 * parsed the way the WHATWG URL parser (and glibc's inet_aton) does, so that
 * `2852039166`, `0xa9fea9fe`, `0251.0376.0251.0376` and `169.254.43518` are
 * all recognised as 169.254.169.254 before any policy decision is made.
 */
import { isIPv6 } from 'node:net';

/** A parsed IP literal in canonical text form (dotted quad, or lower-case RFC 5952 IPv6). */
export interface IpLiteral {
  family: 4 | 6;
  address: string;
}

/** What a host string is: an IP literal, a name to resolve, or a malformed number. */
export type HostKind =
  { kind: 'ip'; ip: IpLiteral } | { kind: 'name' } | { kind: 'invalid'; reason: string };

/** Classifies a host (URL hostname, DB host; brackets and IPv6 zone ids allowed). */
export function classifyHost(host: string): HostKind {
  let bare = host.trim().toLowerCase();
  if (bare.startsWith('[') && bare.endsWith(']')) bare = bare.slice(1, -1);
  const withoutZone =
    bare.includes('%') && bare.includes(':') ? bare.slice(0, bare.indexOf('%')) : bare;
  if (isIPv6(withoutZone))
    return { kind: 'ip', ip: { family: 6, address: formatIpv6(parseIpv6(withoutZone)) } };
  if (!endsInNumber(bare)) return { kind: 'name' };
  const value = parseWhatwgIpv4(bare);
  if (value === undefined)
    return {
      kind: 'invalid',
      reason: `"${host}" looks like an IPv4 address but is not a valid one`,
    };
  return { kind: 'ip', ip: { family: 4, address: formatIpv4(value) } };
}

/** WHATWG "ends in a number": the last label is digits or a 0x number, so the host must be IPv4. */
function endsInNumber(host: string): boolean {
  const parts = host.split('.');
  if (parts.at(-1) === '' && parts.length > 1) parts.pop();
  const last = parts.at(-1) ?? '';
  if (last !== '' && /^[0-9]+$/.test(last)) return true;
  return parseIpv4Number(last) !== undefined;
}

/** WHATWG IPv4 parser: 1–4 parts, each decimal, 0x-hex or 0-octal; the last part fills the remaining bytes. */
export function parseWhatwgIpv4(host: string): number | undefined {
  const parts = host.split('.');
  if (parts.at(-1) === '' && parts.length > 1) parts.pop();
  if (parts.length > 4) return undefined;
  const numbers: number[] = [];
  for (const part of parts) {
    const value = parseIpv4Number(part);
    if (value === undefined) return undefined;
    numbers.push(value);
  }
  const last = numbers.pop() as number;
  if (numbers.some((value) => value > 255)) return undefined;
  if (last >= 256 ** (4 - numbers.length)) return undefined;
  return numbers.reduce((sum, value, index) => sum + value * 256 ** (3 - index), last);
}

function parseIpv4Number(part: string): number | undefined {
  if (part === '') return undefined;
  let digits = part;
  let radix = 10;
  if (/^0x/i.test(digits)) {
    digits = digits.slice(2);
    radix = 16;
  } else if (digits.length > 1 && digits.startsWith('0')) {
    digits = digits.slice(1);
    radix = 8;
  }
  if (digits === '') return 0;
  const allowed = radix === 16 ? /^[0-9a-f]+$/i : radix === 8 ? /^[0-7]+$/ : /^[0-9]+$/;
  if (!allowed.test(digits)) return undefined;
  // Large values stay exact enough to be rejected by the range checks above.
  return parseInt(digits, radix);
}

/** Dotted-quad text of a 32-bit value. */
export function formatIpv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');
}

/** The eight 16-bit words of a valid IPv6 literal (may end in a dotted quad). */
export function parseIpv6(address: string): number[] {
  let text = address.toLowerCase();
  // A trailing dotted quad (::ffff:1.2.3.4) becomes two hex words first.
  const lastColon = text.lastIndexOf(':');
  const quad = text.slice(lastColon + 1);
  if (quad.includes('.')) {
    const [a = 0, b = 0, c = 0, d = 0] = quad.split('.').map(Number);
    text = `${text.slice(0, lastColon + 1)}${(a * 256 + b).toString(16)}:${(c * 256 + d).toString(16)}`;
  }
  const [head = '', rest] = text.split('::') as [string, string | undefined];
  const toWords = (chunk: string): number[] =>
    chunk === '' ? [] : chunk.split(':').map((word) => parseInt(word, 16));
  const headWords = toWords(head);
  const restWords = rest === undefined ? [] : toWords(rest);
  const fill = 8 - headWords.length - restWords.length;
  const words = [
    ...headWords,
    ...(rest === undefined ? [] : new Array<number>(fill).fill(0)),
    ...restWords,
  ];
  if (words.length !== 8) throw new TypeError(`not an IPv6 address: ${address}`);
  return words;
}

/** RFC 5952 text of eight words (longest run of two or more zero words compressed). */
export function formatIpv6(words: number[]): string {
  let bestStart = -1;
  let bestLength = 1;
  for (let start = 0; start < 8;) {
    let end = start;
    while (end < 8 && words[end] === 0) end++;
    if (end - start > bestLength) [bestStart, bestLength] = [start, end - start];
    start = end === start ? start + 1 : end;
  }
  const hex = words.map((word) => word.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}

/**
 * IPv4 addresses an IPv6 address carries and that a kernel, a NAT64 gateway or
 * a tunnel would deliver to: IPv4-mapped, IPv4-compatible, SIIT, NAT64
 * (64:ff9b::/96 and the local-use 64:ff9b:1::/48), 6to4 and Teredo.
 */
export function embeddedIpv4(words: number[]): string[] {
  const w = (index: number): number => words[index] ?? 0;
  const low = (): string => formatIpv4(w(6) * 65536 + w(7));
  const zeros = (from: number, to: number): boolean =>
    words.slice(from, to).every((word) => word === 0);
  const found: string[] = [];
  if (zeros(0, 5) && w(5) === 0xffff) found.push(low()); // ::ffff:a.b.c.d mapped
  if (zeros(0, 6) && !(w(6) === 0 && w(7) <= 1)) found.push(low()); // ::a.b.c.d compatible
  if (zeros(0, 4) && w(4) === 0xffff && w(5) === 0) found.push(low()); // ::ffff:0:a.b.c.d SIIT
  if (w(0) === 0x64 && w(1) === 0xff9b && (zeros(2, 6) || w(2) === 1)) found.push(low()); // NAT64
  if (w(0) === 0x2002) found.push(formatIpv4(w(1) * 65536 + w(2))); // 6to4
  if (w(0) === 0x2001 && w(1) === 0) {
    // Teredo: server in words 2–3, client obfuscated (inverted) in words 6–7.
    found.push(
      formatIpv4(w(2) * 65536 + w(3)),
      formatIpv4((w(6) ^ 0xffff) * 65536 + (w(7) ^ 0xffff)),
    );
  }
  return found;
}
