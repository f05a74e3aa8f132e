// @ts-check
/**
 * UTF-8, the one encoding TextEncoder has and nearly every TextDecoder use,
 * written from the Encoding standard's own algorithms (a few dozen lines,
 * and streaming falls out of them).
 */
import { CtxTypeError, CtxUint8Array, charCodeAt } from '../primordials.js';
import { stringBuilder } from './infra.js';

/**
 * @typedef {{
 *   needed: number, seen: number, codePoint: number, lower: number, upper: number,
 *   bomSeen: boolean,
 * }} Utf8State
 */

/**
 * Encodes `text` as UTF-8 into `out` from `start` while whole characters fit;
 * lone surrogates become U+FFFD (a USVString's conversion).
 * @param {string} text
 * @param {Uint8Array} out
 * @returns {[read: number, written: number]}
 */
export function utf8Write(text, out) {
  const length = text.length;
  const room = out.length;
  let read = 0;
  let written = 0;
  while (read < length) {
    let code = charCodeAt(text, read);
    let units = 1;
    if (code >= 0xd800 && code <= 0xdfff) {
      const next = read + 1 < length ? charCodeAt(text, read + 1) : 0;
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        code = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00);
        units = 2;
      } else {
        code = 0xfffd;
      }
    }
    if (code < 0x80) {
      if (written + 1 > room) break;
      out[written++] = code;
    } else if (code < 0x800) {
      if (written + 2 > room) break;
      out[written++] = 0xc0 | (code >> 6);
      out[written++] = 0x80 | (code & 0x3f);
    } else if (code < 0x10000) {
      if (written + 3 > room) break;
      out[written++] = 0xe0 | (code >> 12);
      out[written++] = 0x80 | ((code >> 6) & 0x3f);
      out[written++] = 0x80 | (code & 0x3f);
    } else {
      if (written + 4 > room) break;
      out[written++] = 0xf0 | (code >> 18);
      out[written++] = 0x80 | ((code >> 12) & 0x3f);
      out[written++] = 0x80 | ((code >> 6) & 0x3f);
      out[written++] = 0x80 | (code & 0x3f);
    }
    read += units;
  }
  return [read, written];
}

/**
 * The UTF-8 bytes of `text`.
 * @param {string} text
 */
export function utf8Encode(text) {
  const length = text.length;
  let size = 0;
  for (let i = 0; i < length; i++) {
    const code = charCodeAt(text, i);
    if (code < 0x80) size += 1;
    else if (code < 0x800) size += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < length) {
      const next = charCodeAt(text, i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        size += 4;
        i++;
      } else size += 3;
    } else size += 3;
  }
  const out = new CtxUint8Array(size);
  utf8Write(text, out);
  return out;
}

/** @returns {Utf8State} */
export function freshUtf8State() {
  return { needed: 0, seen: 0, codePoint: 0, lower: 0x80, upper: 0xbf, bomSeen: false };
}

/**
 * Makes `state` that of a stream not yet begun.
 * @param {Utf8State} state
 */
export function restartUtf8(state) {
  resetSequence(state);
  state.bomSeen = false;
}

/**
 * Forgets the sequence being decoded (an error ended it).
 * @param {Utf8State} state
 */
function resetSequence(state) {
  state.needed = 0;
  state.seen = 0;
  state.codePoint = 0;
  state.lower = 0x80;
  state.upper = 0xbf;
}

/**
 * The Encoding standard's UTF-8 decoder (§8.1.1) over one chunk; `flush`
 * ends the stream (an unfinished sequence is an error). A fatal error throws
 * with the sequence in `state` already forgotten, and the rest of the chunk
 * is dropped, as Node does. Whether a byte order mark was seen is recorded
 * in `state` only when the chunk's text is returned (the standard's
 * "serialize I/O queue"): a chunk that throws outputs nothing, so its
 * characters are not the stream's first and a BOM after it is still one.
 * @param {Utf8State} state
 * @param {Uint8Array} input
 * @param {boolean} flush
 * @param {boolean} fatal
 * @param {boolean} ignoreBOM
 */
export function utf8Decode(state, input, flush, fatal, ignoreBOM) {
  const out = stringBuilder();
  const emit = out.push;
  let bomSeen = state.bomSeen;
  /** @param {number} codePoint */
  function emitCodePoint(codePoint) {
    if (!bomSeen) {
      bomSeen = true;
      if (codePoint === 0xfeff && !ignoreBOM) return;
    }
    if (codePoint > 0xffff) {
      const offset = codePoint - 0x10000;
      emit(0xd800 + (offset >> 10));
      emit(0xdc00 + (offset & 0x3ff));
    } else emit(codePoint);
  }
  function error() {
    if (fatal) throw new CtxTypeError('The encoded data was not valid for encoding utf-8');
    emitCodePoint(0xfffd);
  }
  const length = input.length;
  for (let i = 0; i < length; i++) {
    const byte = /** @type {number} */ (input[i]);
    if (state.needed === 0) {
      if (byte <= 0x7f) emitCodePoint(byte);
      else if (byte >= 0xc2 && byte <= 0xdf) {
        state.needed = 1;
        state.codePoint = byte & 0x1f;
      } else if (byte >= 0xe0 && byte <= 0xef) {
        if (byte === 0xe0) state.lower = 0xa0;
        if (byte === 0xed) state.upper = 0x9f;
        state.needed = 2;
        state.codePoint = byte & 0xf;
      } else if (byte >= 0xf0 && byte <= 0xf4) {
        if (byte === 0xf0) state.lower = 0x90;
        if (byte === 0xf4) state.upper = 0x8f;
        state.needed = 3;
        state.codePoint = byte & 0x7;
      } else error();
      continue;
    }
    if (byte < state.lower || byte > state.upper) {
      resetSequence(state);
      error();
      i--; // the byte starts over (it is "prepended to the stream")
      continue;
    }
    state.lower = 0x80;
    state.upper = 0xbf;
    state.codePoint = (state.codePoint << 6) | (byte & 0x3f);
    state.seen++;
    if (state.seen === state.needed) {
      const codePoint = state.codePoint;
      state.needed = 0;
      state.seen = 0;
      state.codePoint = 0;
      emitCodePoint(codePoint);
    }
  }
  if (flush && state.needed !== 0) {
    resetSequence(state);
    error();
  }
  state.bomSeen = bomSeen;
  return out.text();
}

/**
 * The whole of `input` decoded, replacing what is not UTF-8 (what whatwg-url asks for).
 * @param {Uint8Array} input
 * @param {boolean} ignoreBOM
 */
export function utf8DecodeAll(input, ignoreBOM) {
  return utf8Decode(freshUtf8State(), input, true, false, ignoreBOM);
}
