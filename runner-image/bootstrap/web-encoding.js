// @ts-check
/**
 * TextEncoder, TextDecoder, atob and btoa for tool code. UTF-8 — the one
 * encoding TextEncoder has and nearly every TextDecoder use — is written
 * here from the Encoding standard's own algorithms (a few dozen lines, and
 * streaming falls out of them); other TextDecoder labels go to the host's
 * TextDecoder (Node's, backed by ICU) through the bridge, without streaming.
 * atob/btoa check their input here as the HTML standard's forgiving-base64
 * does and leave the conversion to the host's native base64.
 *
 * Part of the bootstrap (see install.js): compiled in the tool's realm, naming
 * no Node or host global; the intrinsics it uses are captured when it is called.
 */
/* exported createWebEncoding */

/**
 * @typedef {{
 *   TextEncoder: typeof TextEncoder,
 *   TextDecoder: typeof TextDecoder,
 *   atob: (data: unknown) => string,
 *   btoa: (data: unknown) => string,
 *   utf8Encode: (text: string) => Uint8Array,
 *   utf8DecodeAll: (bytes: Uint8Array, ignoreBOM: boolean) => string,
 * }} WebEncoding
 * @typedef {{
 *   needed: number, seen: number, codePoint: number, lower: number, upper: number,
 *   bomSeen: boolean,
 * }} Utf8State
 */

/**
 * Captures the intrinsics and returns the encoders.
 * @param {import('./web-bytes.js').WebBytes} bytes
 * @param {import('./web-events.js').DOMExceptionClass} DOMExceptionCtor this realm's DOMException (web-events.js)
 * @param {(op: string, a?: string | number, b?: string | number, c?: string | number) => unknown} webCall the bridge's `web` kind
 * @returns {WebEncoding}
 */
function createWebEncoding(bytes, DOMExceptionCtor, webCall) {
  'use strict';
  const ReflectApply = Reflect.apply;
  const CtxUint8Array = Uint8Array;
  const CtxTypeError = TypeError;
  const CtxRangeError = RangeError;
  const StringCtor = String;
  const StringFromCharCode = String.fromCharCode;
  const ObjectFreeze = Object.freeze;
  const arrayJoin = Array.prototype.join;
  const regexpExec = RegExp.prototype.exec;
  const charCodeAt = Function.prototype.call.bind(String.prototype.charCodeAt);
  const toLowerCase = Function.prototype.call.bind(String.prototype.toLowerCase);
  const TypedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype);
  const typedArrayTag = /** @type {Function} */ (
    /** @type {PropertyDescriptor} */ (
      Object.getOwnPropertyDescriptor(TypedArrayPrototype, Symbol.toStringTag)
    ).get
  );
  const ASCII_WHITESPACE = /[\t\n\f\r ]/;
  const NOT_BASE64 = /[^A-Za-z0-9+/]/;
  const NOT_LATIN1 = /[\u0100-\uffff]/;
  const UTF8_LABELS = {
    'unicode-1-1-utf-8': true,
    unicode11utf8: true,
    unicode20utf8: true,
    'utf-8': true,
    utf8: true,
    'x-unicode20utf8': true,
  };
  /** Code units per String.fromCharCode call. */
  const CHUNK = 8192;

  /**
   * @param {RegExp} pattern
   * @param {string} text
   */
  function matches(pattern, text) {
    pattern.lastIndex = 0;
    return ReflectApply(regexpExec, pattern, [text]) !== null;
  }

  // ---------------------------------------------------------------- UTF-8 encoding
  /**
   * Encodes `text` as UTF-8 into `out` from `start` while whole characters fit;
   * lone surrogates become U+FFFD (a USVString's conversion).
   * @param {string} text
   * @param {Uint8Array} out
   * @returns {[read: number, written: number]}
   */
  function utf8Write(text, out) {
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
  function utf8Encode(text) {
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

  class TextEncoder {
    get encoding() {
      return 'utf-8';
    }

    /** @param {unknown} [input] */
    encode(input) {
      return utf8Encode(input === undefined ? '' : StringCtor(input));
    }

    /**
     * @param {unknown} source
     * @param {unknown} destination a Uint8Array
     */
    encodeInto(source, destination) {
      if (ReflectApply(typedArrayTag, destination, []) !== 'Uint8Array') {
        throw new CtxTypeError('TextEncoder.encodeInto: the destination must be a Uint8Array');
      }
      const result = utf8Write(StringCtor(source), /** @type {Uint8Array} */ (destination));
      return { read: result[0], written: result[1] };
    }
  }

  // ---------------------------------------------------------------- UTF-8 decoding
  /** @returns {Utf8State} */
  function freshUtf8State() {
    return { needed: 0, seen: 0, codePoint: 0, lower: 0x80, upper: 0xbf, bomSeen: false };
  }

  /**
   * The Encoding standard's UTF-8 decoder (§8.1.1) over one chunk; `flush`
   * ends the stream (an unfinished sequence is an error).
   * @param {Utf8State} state
   * @param {Uint8Array} input
   * @param {boolean} flush
   * @param {boolean} fatal
   * @param {boolean} ignoreBOM
   */
  function utf8Decode(state, input, flush, fatal, ignoreBOM) {
    const out = stringBuilder();
    const emit = out.push;
    /** @param {number} codePoint */
    function emitCodePoint(codePoint) {
      if (!state.bomSeen) {
        state.bomSeen = true;
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
        state.needed = 0;
        state.seen = 0;
        state.codePoint = 0;
        state.lower = 0x80;
        state.upper = 0xbf;
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
      state.needed = 0;
      state.seen = 0;
      state.codePoint = 0;
      state.lower = 0x80;
      state.upper = 0xbf;
      error();
    }
    return out.text();
  }

  // ---------------------------------------------------------------- TextDecoder
  /**
   * @typedef {{ encoding: string, fatal: boolean, ignoreBOM: boolean, utf8: Utf8State | null }} DecoderState
   */
  /** @type {WeakMap<object, DecoderState>} */
  const decoders = new WeakMap();
  const weakMapGet = WeakMap.prototype.get;
  const weakMapSet = WeakMap.prototype.set;

  /** @param {unknown} decoder */
  function decoderState(decoder) {
    const state = ReflectApply(weakMapGet, decoders, [decoder]);
    if (state === undefined) throw new CtxTypeError('Illegal invocation: not a TextDecoder');
    return /** @type {DecoderState} */ (state);
  }

  class TextDecoder {
    /**
     * @param {unknown} [label] default 'utf-8'
     * @param {unknown} [options] {fatal, ignoreBOM}
     */
    constructor(label, options) {
      const given = label === undefined ? 'utf-8' : StringCtor(label);
      const name = toLowerCase(trimAsciiWhitespace(given));
      let encoding;
      if (UTF8_LABELS[/** @type {keyof typeof UTF8_LABELS} */ (name)] === true) encoding = 'utf-8';
      else {
        const known = webCall('encoding', name);
        if (typeof known !== 'string') {
          throw new CtxRangeError(
            "TextDecoder: the encoding label '" + given + "' is not supported",
          );
        }
        encoding = known;
      }
      if (options !== undefined && options !== null && typeof options !== 'object') {
        throw new CtxTypeError('TextDecoder: the options must be an object');
      }
      const fatal =
        options === undefined || options === null ? false : !!(/** @type {any} */ (options).fatal);
      const ignoreBOM =
        options === undefined || options === null
          ? false
          : !!(/** @type {any} */ (options).ignoreBOM);
      ReflectApply(weakMapSet, decoders, [
        this,
        {
          encoding: encoding,
          fatal: fatal,
          ignoreBOM: ignoreBOM,
          utf8: encoding === 'utf-8' ? freshUtf8State() : null,
        },
      ]);
    }

    get encoding() {
      return decoderState(this).encoding;
    }
    get fatal() {
      return decoderState(this).fatal;
    }
    get ignoreBOM() {
      return decoderState(this).ignoreBOM;
    }

    /**
     * @param {unknown} [input] a BufferSource
     * @param {unknown} [options] {stream}
     */
    decode(input, options) {
      const state = decoderState(this);
      /** @type {Uint8Array} */
      let view = new CtxUint8Array(0);
      if (input !== undefined) {
        const given = bytes.viewOf(input);
        if (given === null) {
          throw new CtxTypeError(
            'TextDecoder.decode: the input must be an ArrayBuffer, a typed array or a DataView',
          );
        }
        view = given;
      }
      const stream =
        options !== undefined && options !== null && !!(/** @type {any} */ (options).stream);
      if (state.utf8 !== null) {
        const utf8 = state.utf8;
        try {
          const text = utf8Decode(utf8, view, !stream, state.fatal, state.ignoreBOM);
          if (!stream) state.utf8 = freshUtf8State();
          return text;
        } catch (error) {
          state.utf8 = freshUtf8State();
          throw error;
        }
      }
      if (stream) {
        throw new CtxTypeError(
          'TextDecoder.decode: {stream: true} is available for utf-8 only in tool code, not for ' +
            state.encoding,
        );
      }
      const text = webCall(
        'decode',
        state.encoding,
        bytes.toBinary(view),
        (state.fatal ? 1 : 0) | (state.ignoreBOM ? 2 : 0),
      );
      if (typeof text === 'string') return text;
      if (text === false)
        throw new CtxTypeError('The encoded data was not valid for encoding ' + state.encoding);
      throw new CtxRangeError(
        'TextDecoder.decode: the input is too large to decode as ' + state.encoding,
      );
    }
  }

  /**
   * `text` without ASCII whitespace at either end.
   * @param {string} text
   */
  function trimAsciiWhitespace(text) {
    let start = 0;
    let end = text.length;
    while (start < end && isAsciiWhitespace(charCodeAt(text, start))) start++;
    while (end > start && isAsciiWhitespace(charCodeAt(text, end - 1))) end--;
    return start === 0 && end === text.length ? text : sliceOf(text, start, end);
  }

  /** @param {number} code */
  function isAsciiWhitespace(code) {
    return code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d || code === 0x20;
  }

  /**
   * `text` from `start` to `end`, built from its code units (String.prototype.slice is replaceable).
   * @param {string} text
   * @param {number} start
   * @param {number} end
   */
  function sliceOf(text, start, end) {
    const out = stringBuilder();
    for (let i = start; i < end; i++) out.push(charCodeAt(text, i));
    return out.text();
  }

  /**
   * `text` without any ASCII whitespace.
   * @param {string} text
   */
  function withoutAsciiWhitespace(text) {
    if (!matches(ASCII_WHITESPACE, text)) return text;
    const out = stringBuilder();
    for (let i = 0; i < text.length; i++) {
      const code = charCodeAt(text, i);
      if (!isAsciiWhitespace(code)) out.push(code);
    }
    return out.text();
  }

  /**
   * A string made of code units pushed one at a time, converted CHUNK at a
   * time (String.fromCharCode takes its units as arguments).
   */
  function stringBuilder() {
    /** @type {string[]} */
    const parts = [];
    /** @type {number[]} */
    let units = [];
    return {
      /** @param {number} unit */
      push(unit) {
        units[units.length] = unit;
        if (units.length >= CHUNK) {
          parts[parts.length] = ReflectApply(StringFromCharCode, undefined, units);
          units = [];
        }
      },
      /** @returns {string} */
      text() {
        if (units.length > 0) {
          parts[parts.length] = ReflectApply(StringFromCharCode, undefined, units);
          units = [];
        }
        if (parts.length === 0) return '';
        return parts.length === 1
          ? /** @type {string} */ (parts[0])
          : ReflectApply(arrayJoin, parts, ['']);
      },
    };
  }

  // ---------------------------------------------------------------- base64
  /** @param {unknown} data */
  function atob(data) {
    if (arguments.length === 0) throw new CtxTypeError("atob: the 'data' argument is required");
    let text = withoutAsciiWhitespace(StringCtor(data));
    let length = text.length;
    if (length % 4 === 0 && length > 0 && charCodeAt(text, length - 1) === 0x3d) {
      length -= charCodeAt(text, length - 2) === 0x3d ? 2 : 1;
      text = sliceOf(text, 0, length);
    }
    if (length % 4 === 1 || matches(NOT_BASE64, text)) {
      throw new DOMExceptionCtor(
        'atob: the string to be decoded is not correctly encoded',
        'InvalidCharacterError',
      );
    }
    if (length === 0) return '';
    const decoded = webCall('fromBase64', text);
    if (typeof decoded !== 'string')
      throw new CtxRangeError('atob: the string is too large to decode');
    return decoded;
  }

  /** @param {unknown} data */
  function btoa(data) {
    if (arguments.length === 0) throw new CtxTypeError("btoa: the 'data' argument is required");
    const text = StringCtor(data);
    if (matches(NOT_LATIN1, text)) {
      throw new DOMExceptionCtor(
        'btoa: the string to be encoded contains characters outside of the Latin1 range',
        'InvalidCharacterError',
      );
    }
    if (text.length === 0) return '';
    const encoded = webCall('toBase64', text);
    if (typeof encoded !== 'string')
      throw new CtxRangeError('btoa: the string is too large to encode');
    return encoded;
  }

  return ObjectFreeze({
    TextEncoder: TextEncoder,
    TextDecoder: TextDecoder,
    atob: atob,
    btoa: btoa,
    utf8Encode: utf8Encode,
    utf8DecodeAll: function (input, ignoreBOM) {
      return utf8Decode(freshUtf8State(), input, true, false, ignoreBOM);
    },
  });
}
