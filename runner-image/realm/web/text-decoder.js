// @ts-check
/**
 * TextDecoder (Encoding §8.1) for tool code. UTF-8 is decoded here, streaming
 * included (utf8.js); other labels go to the host's TextDecoder (Node's,
 * backed by ICU) through the bridge, without streaming.
 */
import {
  CtxRangeError,
  CtxTypeError,
  CtxUint8Array,
  CtxWeakMap,
  StringCtor,
  toLowerCase,
} from '../primordials.js';
import { webCall } from '../bridge.js';
import { member, once, platformClasses, remember, stateOf } from '../webidl.js';
import { toBinary, viewOf } from './bytes.js';
import { trimAsciiWhitespace } from './infra.js';
import { freshUtf8State, restartUtf8, utf8Decode } from './utf8.js';

/** @typedef {import('./utf8.js').Utf8State} Utf8State */

/** This realm's TextDecoder, created on first need. */
export const textDecoderClass = once(function () {
  const UTF8_LABELS = {
    'unicode-1-1-utf-8': true,
    unicode11utf8: true,
    unicode20utf8: true,
    'utf-8': true,
    utf8: true,
    'x-unicode20utf8': true,
  };

  /**
   * @typedef {{
   *   encoding: string, fatal: boolean, ignoreBOM: boolean, utf8: Utf8State | null,
   *   doNotFlush: boolean,
   * }} DecoderState
   */
  /** @type {WeakMap<object, DecoderState>} */
  const decoders = new CtxWeakMap();

  /** @param {unknown} decoder */
  function decoderState(decoder) {
    return stateOf(decoders, decoder, 'a TextDecoder');
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
      const fatal = !!member(options, 'fatal');
      const ignoreBOM = !!member(options, 'ignoreBOM');
      remember(decoders, this, {
        encoding: encoding,
        fatal: fatal,
        ignoreBOM: ignoreBOM,
        utf8: encoding === 'utf-8' ? freshUtf8State() : null,
        doNotFlush: false,
      });
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
        const given = viewOf(input);
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
        // The standard's "do not flush" flag: a call begins a new stream only
        // when the call before it did not ask for {stream: true}. A call that
        // throws (fatal) ends nothing: the stream goes on with its next chunk,
        // and the BOM seen before the error stays seen, as in Node.
        if (!state.doNotFlush) restartUtf8(state.utf8);
        state.doNotFlush = stream;
        return utf8Decode(state.utf8, view, !stream, state.fatal, state.ignoreBOM);
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
        toBinary(view),
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
  platformClasses(TextDecoder);
  return TextDecoder;
});
