/**
 * A reference TextDecoder for the two single-byte encodings Node's ICU does
 * not have (iso-8859-16, x-user-defined), written from the Encoding
 * Standard's own definitions, so the oracle still has something to compare
 * the realm with: bytes below 0x80 are ASCII; above, iso-8859-16 follows
 * index-iso-8859-16 (0x80–0x9F the C1 controls, 0xA0–0xFF the table below)
 * and x-user-defined maps byte b to U+F780 + (b − 0x80). Neither encoding
 * has a byte order mark or an unmapped byte, so `fatal` and `ignoreBOM`
 * change nothing but what the decoder reports.
 */

/** index-iso-8859-16, pointers 0x20–0x7F (bytes 0xA0–0xFF). */
const ISO_8859_16_HIGH =
  '\u00a0ĄąŁ€„Š§š©Ș«Ź\u00adźŻ°±ČłŽ”¶·žčș»ŒœŸżÀÁÂĂÄĆÆÇÈÉÊËÌÍÎÏĐŃÒÓÔŐÖŚŰÙÚÛÜĘȚßàáâăäćæçèéêëìíîïđńòóôőöśűùúûüęțÿ';

const HIGH_HALF: Readonly<Record<string, (byte: number) => number>> = {
  'iso-8859-16': (byte) => (byte < 0xa0 ? byte : ISO_8859_16_HIGH.codePointAt(byte - 0xa0)!),
  'x-user-defined': (byte) => 0xf780 + (byte - 0x80),
};

/** The encodings this reference decodes. */
export const SINGLE_BYTE_REFERENCE_ENCODINGS = Object.keys(HIGH_HALF);

/** Stands in for TextDecoder in the host's probe for these two encodings only. */
export class SingleByteReferenceDecoder {
  readonly encoding: string;
  readonly fatal: boolean;
  readonly ignoreBOM: boolean;
  readonly #high: (byte: number) => number;

  constructor(label: string, options: { fatal?: boolean; ignoreBOM?: boolean } = {}) {
    const name = trimAsciiWhitespace(label).toLowerCase();
    const high = Object.hasOwn(HIGH_HALF, name) ? HIGH_HALF[name] : undefined;
    if (high === undefined) throw new RangeError(`not a reference encoding: ${label}`);
    this.encoding = name;
    this.fatal = options.fatal === true;
    this.ignoreBOM = options.ignoreBOM === true;
    this.#high = high;
  }

  decode(bytes: Uint8Array = new Uint8Array()): string {
    let text = '';
    for (const byte of bytes) text += String.fromCodePoint(byte < 0x80 ? byte : this.#high(byte));
    return text;
  }
}

/** The Encoding Standard's ASCII whitespace, the only thing a label may be padded with. */
function trimAsciiWhitespace(label: string): string {
  return label.replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, '');
}

/**
 * Node's TextDecoder, with the reference in place of the two encodings it
 * lacks: the oracle for every label of the standard.
 */
export const StandardTextDecoder = function StandardTextDecoder(
  label?: unknown,
  options?: { fatal?: boolean; ignoreBOM?: boolean },
): TextDecoder | SingleByteReferenceDecoder {
  const name = trimAsciiWhitespace(String(label ?? 'utf-8')).toLowerCase();
  return SINGLE_BYTE_REFERENCE_ENCODINGS.includes(name)
    ? new SingleByteReferenceDecoder(name, options)
    : new TextDecoder(label as string | undefined, options);
};
