/**
 * The host side of the web platform's bridge calls (the `web` kind, see
 * realm/bridge.js and realm/web/): randomness, digests and HMAC for `crypto`,
 * base64 for atob/btoa and fetch bodies, legacy text encodings for
 * TextDecoder, and the clock for `performance`. Takes and returns primitives
 * only; bytes travel as binary strings (one character per byte, `latin1`).
 * Anything unexpected (a wrong type, an unknown name, more bytes than a
 * protocol line may hold) answers undefined, which the context turns into
 * its own error.
 */
import { Buffer } from 'node:buffer';
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { DEFAULT_MAX_LINE_BYTES } from '../src/protocol/index.js';

/** Where an invocation's clock starts. */
export interface WebClock {
  /** `performance.now()` of the harness when the invocation started, in ms. */
  readonly startedAt: number;
  /** The same instant in ms since the epoch (the tool's `performance.timeOrigin`). */
  readonly timeOrigin: number;
}

/** The clock of an invocation starting now. */
export function startWebClock(): WebClock {
  const startedAt = performance.now();
  // Rounded like `performance.now()` (5 µs): no finer clock reaches tool code.
  const timeOrigin = Math.round((performance.timeOrigin + startedAt) * 200) / 200;
  return { startedAt, timeOrigin };
}

/**
 * Most characters one argument may have: what one protocol line holds, so a
 * digest or a decode costs no more than a brokered call may carry.
 */
const MAX_WEB_CHARS = DEFAULT_MAX_LINE_BYTES;
/** The web's limit of one getRandomValues call, in bytes. */
const MAX_RANDOM_BYTES = 65_536;
/** `performance.now()` resolution, in ms (5 µs, as browsers with cross-origin isolation give). */
const CLOCK_RESOLUTION_MS = 0.005;
/** Web Crypto digest names → Node's. */
const DIGESTS: ReadonlyMap<unknown, string> = new Map([
  ['SHA-1', 'sha1'],
  ['SHA-256', 'sha256'],
  ['SHA-384', 'sha384'],
  ['SHA-512', 'sha512'],
]);

function isText(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_WEB_CHARS;
}

/** Answers one `web` bridge call of the invocation whose clock is `clock`. */
export function answerWebCall(
  op: unknown,
  a: unknown,
  b: unknown,
  c: unknown,
  clock: WebClock,
): string | number | boolean | undefined {
  switch (op) {
    case 'now':
      return (
        Math.floor((performance.now() - clock.startedAt) / CLOCK_RESOLUTION_MS) *
        CLOCK_RESOLUTION_MS
      );
    case 'timeOrigin':
      return clock.timeOrigin;
    case 'maxBytes':
      return MAX_WEB_CHARS;
    case 'random':
      if (typeof a !== 'number' || !Number.isInteger(a) || a < 0 || a > MAX_RANDOM_BYTES)
        return undefined;
      return randomBytes(a).toString('latin1');
    case 'uuid':
      return randomUUID();
    case 'digest': {
      const algorithm = DIGESTS.get(a);
      if (algorithm === undefined || !isText(b)) return undefined;
      return createHash(algorithm).update(Buffer.from(b, 'latin1')).digest().toString('latin1');
    }
    case 'hmac': {
      const algorithm = DIGESTS.get(a);
      if (algorithm === undefined || !isText(b) || !isText(c)) return undefined;
      return createHmac(algorithm, Buffer.from(b, 'latin1'))
        .update(Buffer.from(c, 'latin1'))
        .digest()
        .toString('latin1');
    }
    case 'toBase64':
      return isText(a) ? Buffer.from(a, 'latin1').toString('base64') : undefined;
    case 'fromBase64':
      return isText(a) ? Buffer.from(a, 'base64').toString('latin1') : undefined;
    case 'decodeBase64':
      // Response.text(): UTF-8 decode (BOM dropped, invalid bytes as U+FFFD).
      return isText(a) ? new TextDecoder().decode(Buffer.from(a, 'base64')) : undefined;
    case 'encoding':
      return typeof a === 'string' ? encodingName(a) : undefined;
    case 'decode':
      return typeof a === 'string' && isText(b) && typeof c === 'number'
        ? decodeLegacy(a, b, c)
        : undefined;
    default:
      return undefined;
  }
}

/** The Encoding standard's name for `label`, or undefined when there is none (or it is "replacement"). */
function encodingName(label: string): string | undefined {
  if (label.length > 64) return undefined;
  if (Object.hasOwn(SINGLE_BYTE_HIGH, label)) return label;
  try {
    return new TextDecoder(label).encoding;
  } catch {
    return undefined;
  }
}

/**
 * The Encoding standard's windows-1252 for bytes 0x80–0x9F (the rest is
 * Latin-1). Node's TextDecoder decodes windows-1252 as plain Latin-1
 * (0x80 → U+0080, not €), so this one is done here; it is also what the
 * labels latin1, iso-8859-1 and ascii mean on the web.
 */
const WINDOWS_1252_HIGH = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152,
  0x8d, 0x17d, 0x8f, 0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122,
  0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
];

/**
 * index-iso-8859-16 for bytes 0xA0–0xFF (0x80–0x9F are the C1 controls).
 * Node's ICU has neither iso-8859-16 nor x-user-defined, whose only label
 * is its name (byte b ≥ 0x80 is U+F780 + b − 0x80): both are done here.
 */
const ISO_8859_16_HIGH = [
  0xa0, 0x104, 0x105, 0x141, 0x20ac, 0x201e, 0x160, 0xa7, 0x161, 0xa9, 0x218, 0xab, 0x179, 0xad,
  0x17a, 0x17b, 0xb0, 0xb1, 0x10c, 0x142, 0x17d, 0x201d, 0xb6, 0xb7, 0x17e, 0x10d, 0x219, 0xbb,
  0x152, 0x153, 0x178, 0x17c, 0xc0, 0xc1, 0xc2, 0x102, 0xc4, 0x106, 0xc6, 0xc7, 0xc8, 0xc9, 0xca,
  0xcb, 0xcc, 0xcd, 0xce, 0xcf, 0x110, 0x143, 0xd2, 0xd3, 0xd4, 0x150, 0xd6, 0x15a, 0x170, 0xd9,
  0xda, 0xdb, 0xdc, 0x118, 0x21a, 0xdf, 0xe0, 0xe1, 0xe2, 0x103, 0xe4, 0x107, 0xe6, 0xe7, 0xe8,
  0xe9, 0xea, 0xeb, 0xec, 0xed, 0xee, 0xef, 0x111, 0x144, 0xf2, 0xf3, 0xf4, 0x151, 0xf6, 0x15b,
  0x171, 0xf9, 0xfa, 0xfb, 0xfc, 0x119, 0x21b, 0xff,
];

/** The single-byte encodings decoded here: each byte from 0x80 up, as a code point. */
const SINGLE_BYTE_HIGH: Readonly<Record<string, (byte: number) => number>> = {
  'windows-1252': (byte) => (byte <= 0x9f ? (WINDOWS_1252_HIGH[byte - 0x80] ?? byte) : byte),
  'iso-8859-16': (byte) => (byte <= 0x9f ? byte : (ISO_8859_16_HIGH[byte - 0xa0] ?? byte)),
  'x-user-defined': (byte) => 0xf780 + byte - 0x80,
};

/** `binary` decoded by a single-byte table: ASCII below 0x80, `high` above. None has a BOM. */
function decodeSingleByte(binary: string, high: (byte: number) => number): string {
  let text = '';
  for (let start = 0; start < binary.length; start += 8192) {
    const codes: number[] = [];
    const end = Math.min(binary.length, start + 8192);
    for (let i = start; i < end; i++) {
      const byte = binary.charCodeAt(i) & 0xff;
      codes.push(byte < 0x80 ? byte : high(byte));
    }
    text += String.fromCharCode(...codes);
  }
  return text;
}

/**
 * `binary` decoded as `encoding`; false when `flags` asks for fatal errors
 * (bit 1) and the bytes are invalid. Bit 2 keeps a byte order mark.
 */
function decodeLegacy(encoding: string, binary: string, flags: number): string | false | undefined {
  if (Object.hasOwn(SINGLE_BYTE_HIGH, encoding)) {
    return decodeSingleByte(binary, SINGLE_BYTE_HIGH[encoding]!);
  }
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(encoding, {
      fatal: (flags & 1) !== 0,
      ignoreBOM: (flags & 2) !== 0,
    });
  } catch {
    return undefined;
  }
  try {
    return decoder.decode(Buffer.from(binary, 'latin1'));
  } catch {
    return false;
  }
}
