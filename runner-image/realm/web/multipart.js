// @ts-check
/**
 * FormData on the wire: the HTML standard's multipart/form-data encoding
 * (what fetch sends for a FormData body), the multipart/form-data parser
 * Fetch refers to (Response.formData(); written after the parser drafted for
 * Fetch, as Node's undici is) and the application/x-www-form-urlencoded
 * parser of the URL standard. Entries are `{name, value}` with a string or a
 * File of this realm; a File's bytes are read through its Blob state.
 */
import {
  CtxTypeError,
  CtxUint8Array,
  DateNow,
  ReflectApply,
  append,
  charCodeAt,
  matches,
  typedArrayBuffer,
  typedArrayLength,
  typedArrayOffset,
} from '../primordials.js';
import { webCall } from '../bridge.js';
import { blobClasses, blobStateOf } from './blob.js';
import * as bytes from './bytes.js';
import { stringBuilder } from './infra.js';
import { utf8DecodeAll, utf8Encode } from './utf8.js';

/** @typedef {{ name: string, value: unknown }} FormEntry a string or a File of this realm */

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEX = '0123456789abcdef';

/** @param {Uint8Array} view */
function lengthOf(view) {
  return ReflectApply(typedArrayLength, view, []);
}

/**
 * A fresh boundary: 24 random hexadecimal digits after a fixed prefix (96
 * bits, so no body will hold it by chance; the HTML standard asks no more).
 */
export function multipartBoundary() {
  const random = webCall('random', 12);
  if (typeof random !== 'string' || random.length !== 12) {
    throw new CtxTypeError('FormData: no randomness for a multipart boundary');
  }
  let boundary = '----mcphost-formdata-';
  for (let i = 0; i < random.length; i++) {
    const byte = charCodeAt(random, i);
    boundary += /** @type {string} */ (HEX[byte >> 4]) + /** @type {string} */ (HEX[byte & 15]);
  }
  return boundary;
}

/**
 * `text` with every LF not after a CR and every CR not before an LF made CR LF.
 * @param {string} text
 */
function crlfLineEndings(text) {
  const out = stringBuilder();
  let changed = false;
  for (let i = 0; i < text.length; i++) {
    const code = charCodeAt(text, i);
    if (code === 0x0d) {
      out.push(0x0d);
      out.push(0x0a);
      if (i + 1 < text.length && charCodeAt(text, i + 1) === 0x0a) i++;
      else changed = true;
    } else if (code === 0x0a) {
      out.push(0x0d);
      out.push(0x0a);
      changed = true;
    } else out.push(code);
  }
  return changed ? out.text() : text;
}

/**
 * A name or filename as a header parameter carries it: `"`, CR and LF as %22, %0D, %0A.
 * @param {string} text
 */
function escapeName(text) {
  const out = stringBuilder();
  for (let i = 0; i < text.length; i++) {
    const code = charCodeAt(text, i);
    if (code === 0x22 || code === 0x0d || code === 0x0a) {
      out.push(0x25);
      out.push(code === 0x22 ? 0x32 : 0x30);
      out.push(code === 0x22 ? 0x32 : code === 0x0d ? 0x44 : 0x41);
    } else out.push(code);
  }
  return out.text();
}

/**
 * The multipart/form-data encoding of the entries (HTML §4.10.21.8): one new
 * Uint8Array, the only copy of the Files' bytes made.
 * @param {FormEntry[]} entries
 * @param {string} boundary
 */
export function encodeMultipart(entries, boundary) {
  /** @type {Uint8Array[]} */
  const chunks = [];
  let text = '';
  for (let i = 0; i < entries.length; i++) {
    const entry = /** @type {FormEntry} */ (entries[i]);
    text +=
      '--' +
      boundary +
      '\r\nContent-Disposition: form-data; name="' +
      escapeName(crlfLineEndings(entry.name)) +
      '"';
    if (typeof entry.value === 'string') {
      text += '\r\n\r\n' + crlfLineEndings(entry.value) + '\r\n';
      continue;
    }
    const file = /** @type {import('./blob.js').BlobState} */ (blobStateOf(entry.value));
    const name = file.file === null ? 'blob' : file.file.name;
    text +=
      '; filename="' +
      escapeName(name) +
      '"\r\nContent-Type: ' +
      (file.type === '' ? 'application/octet-stream' : file.type) +
      '\r\n\r\n';
    append(chunks, utf8Encode(text));
    append(chunks, file.bytes);
    text = '\r\n';
  }
  append(chunks, utf8Encode(text + '--' + boundary + '--\r\n'));
  return bytes.concat(chunks);
}

/**
 * The bytes of `view` from `start` to `end`, sharing its buffer.
 * @param {Uint8Array} view
 * @param {number} start
 * @param {number} end
 */
function subview(view, start, end) {
  return new CtxUint8Array(
    ReflectApply(typedArrayBuffer, view, []),
    ReflectApply(typedArrayOffset, view, []) + start,
    end - start,
  );
}

/**
 * The bytes from `start` to `end` as a binary (isomorphic) string.
 * @param {Uint8Array} input
 * @param {number} start
 * @param {number} end
 */
function isomorphic(input, start, end) {
  const out = stringBuilder();
  for (let i = start; i < end; i++) out.push(/** @type {number} */ (input[i]));
  return out.text();
}

/**
 * Whether `input` holds `pattern` at `at`.
 * @param {Uint8Array} input
 * @param {number} at
 * @param {Uint8Array} pattern
 * @param {number} end
 */
function holdsAt(input, at, pattern, end) {
  const length = lengthOf(pattern);
  if (at + length > end) return false;
  for (let i = 0; i < length; i++) if (input[at + i] !== pattern[i]) return false;
  return true;
}

/**
 * Where `pattern` next occurs in `input` from `from`, or -1.
 * @param {Uint8Array} input
 * @param {Uint8Array} pattern
 * @param {number} from
 * @param {number} end
 */
function indexOf(input, pattern, from, end) {
  const first = pattern[0];
  const last = end - lengthOf(pattern);
  for (let i = from; i <= last; i++) {
    if (input[i] === first && holdsAt(input, i, pattern, end)) return i;
  }
  return -1;
}

/** @param {number} byte */
function hexValue(byte) {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x37;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x57;
  return -1;
}

/**
 * A quoted name or filename parameter from `at` (just after its `"`): the
 * text up to the closing quote, with %0A, %0D and %22 turned back into LF,
 * CR and `"`; null when the quote is not closed on the line.
 * @param {Uint8Array} input
 * @param {number} at
 * @param {number} end
 * @returns {[name: string, next: number] | null}
 */
function quotedName(input, at, end) {
  let i = at;
  while (i < end && input[i] !== 0x0a && input[i] !== 0x0d && input[i] !== 0x22) i++;
  if (i >= end || input[i] !== 0x22) return null;
  const raw = new CtxUint8Array(i - at);
  let length = 0;
  for (let j = at; j < i; j++) {
    const byte = /** @type {number} */ (input[j]);
    if (byte === 0x25 && j + 2 < i) {
      const high = hexValue(/** @type {number} */ (input[j + 1]));
      const low = hexValue(/** @type {number} */ (input[j + 2]));
      const code = high * 16 + low;
      if (high >= 0 && low >= 0 && (code === 0x0a || code === 0x0d || code === 0x22)) {
        raw[length++] = code;
        j += 2;
        continue;
      }
    }
    raw[length++] = byte;
  }
  return [utf8DecodeAll(subview(raw, 0, length), true), i + 1];
}

/**
 * The headers of one part from `at`, up to the empty line (whose CR LF `at` is left at).
 * @param {Uint8Array} input
 * @param {number} at
 * @param {number} end
 */
function partHeaders(input, at, end) {
  /** @type {string | null} */
  let name = null;
  /** @type {string | null} */
  let filename = null;
  /** @type {string | null} */
  let contentType = null;
  let i = at;
  for (;;) {
    if (i + 1 >= end) return null;
    if (input[i] === 0x0d && input[i + 1] === 0x0a) {
      return name === null
        ? null
        : { name: name, filename: filename, contentType: contentType, next: i };
    }
    const nameStart = i;
    while (i < end && input[i] !== 0x0a && input[i] !== 0x0d && input[i] !== 0x3a) i++;
    let nameEnd = i;
    let from = nameStart;
    while (from < nameEnd && (input[from] === 0x09 || input[from] === 0x20)) from++;
    while (nameEnd > from && (input[nameEnd - 1] === 0x09 || input[nameEnd - 1] === 0x20)) {
      nameEnd--;
    }
    const headerName = isomorphic(input, from, nameEnd);
    if (!matches(TOKEN, headerName) || i >= end || input[i] !== 0x3a) return null;
    i++;
    while (i < end && (input[i] === 0x09 || input[i] === 0x20)) i++;
    const lower = lowerAscii(headerName);
    if (lower === 'content-disposition') {
      name = null;
      filename = null;
      if (!holdsAt(input, i, utf8Encode('form-data; name="'), end)) return null;
      const parsed = quotedName(input, i + 17, end);
      if (parsed === null) return null;
      name = parsed[0];
      i = parsed[1];
      if (holdsAt(input, i, utf8Encode('; filename="'), end)) {
        const file = quotedName(input, i + 12, end);
        if (file === null) return null;
        filename = file[0];
        i = file[1];
      }
    } else {
      const valueStart = i;
      while (i < end && input[i] !== 0x0a && input[i] !== 0x0d) i++;
      if (lower === 'content-type') {
        let valueEnd = i;
        while (
          valueEnd > valueStart &&
          (input[valueEnd - 1] === 0x09 || input[valueEnd - 1] === 0x20)
        ) {
          valueEnd--;
        }
        contentType = isomorphic(input, valueStart, valueEnd);
      }
    }
    if (i + 1 >= end || input[i] !== 0x0d || input[i + 1] !== 0x0a) return null;
    i += 2;
  }
}

/**
 * ASCII lower case, without String.prototype.
 * @param {string} text
 */
function lowerAscii(text) {
  const out = stringBuilder();
  for (let i = 0; i < text.length; i++) {
    const code = charCodeAt(text, i);
    out.push(code >= 0x41 && code <= 0x5a ? code + 0x20 : code);
  }
  return out.text();
}

/**
 * Parses a multipart/form-data body; null when it is not one. A part with a
 * filename becomes a File (sharing `input`'s bytes, which must be fresh),
 * typed by its Content-Type or text/plain; any other part's bytes are
 * decoded as UTF-8. CR LFs before the first delimiter and after the last
 * are tolerated, as Node's parser tolerates them.
 * @param {Uint8Array} input
 * @param {string} boundary
 * @returns {FormEntry[] | null}
 */
export function parseMultipart(input, boundary) {
  const files = blobClasses();
  const delimiter = utf8Encode('--' + boundary);
  const partEnd = utf8Encode('\r\n--' + boundary);
  let end = lengthOf(input);
  let at = 0;
  while (at + 1 < end && input[at] === 0x0d && input[at + 1] === 0x0a) at += 2;
  while (end >= at + 2 && input[end - 2] === 0x0d && input[end - 1] === 0x0a) end -= 2;
  /** @type {FormEntry[]} */
  const entries = [];
  for (;;) {
    if (!holdsAt(input, at, delimiter, end)) return null;
    at += lengthOf(delimiter);
    if (at + 2 === end && input[at] === 0x2d && input[at + 1] === 0x2d) return entries;
    if (at + 1 >= end || input[at] !== 0x0d || input[at + 1] !== 0x0a) return null;
    at += 2;
    const headers = partHeaders(input, at, end);
    if (headers === null) return null;
    at = headers.next + 2;
    const bodyEnd = indexOf(input, partEnd, at, end);
    if (bodyEnd < 0) return null;
    const body = subview(input, at, bodyEnd);
    at = bodyEnd + 2;
    /** @type {unknown} */
    let value;
    if (headers.filename !== null) {
      const type = headers.contentType === null ? 'text/plain' : headers.contentType;
      value = files.makeFile(body, type, headers.filename, DateNow());
    } else value = utf8DecodeAll(body, true);
    append(entries, { name: headers.name, value: value });
  }
}

/**
 * Percent-decodes bytes `start` to `end` of `input`, `+` as a space, and decodes them as UTF-8.
 * @param {Uint8Array} input
 * @param {number} start
 * @param {number} end
 */
function formComponent(input, start, end) {
  const out = new CtxUint8Array(end - start);
  let length = 0;
  for (let i = start; i < end; i++) {
    const byte = /** @type {number} */ (input[i]);
    if (byte === 0x2b) out[length++] = 0x20;
    else if (byte === 0x25 && i + 2 < end) {
      const high = hexValue(/** @type {number} */ (input[i + 1]));
      const low = hexValue(/** @type {number} */ (input[i + 2]));
      if (high >= 0 && low >= 0) {
        out[length++] = high * 16 + low;
        i += 2;
      } else out[length++] = byte;
    } else out[length++] = byte;
  }
  return utf8DecodeAll(subview(out, 0, length), true);
}

/**
 * The application/x-www-form-urlencoded parser (URL standard §5.1).
 * @param {Uint8Array} input
 * @returns {FormEntry[]}
 */
export function parseUrlencoded(input) {
  /** @type {FormEntry[]} */
  const entries = [];
  const end = lengthOf(input);
  let start = 0;
  while (start <= end) {
    let stop = start;
    while (stop < end && input[stop] !== 0x26) stop++;
    if (stop > start) {
      let equals = start;
      while (equals < stop && input[equals] !== 0x3d) equals++;
      append(entries, {
        name: formComponent(input, start, equals),
        value: formComponent(input, equals < stop ? equals + 1 : stop, stop),
      });
    }
    start = stop + 1;
  }
  return entries;
}
