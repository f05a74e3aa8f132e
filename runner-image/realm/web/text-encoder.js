// @ts-check
/** TextEncoder (Encoding §8.2) for tool code: UTF-8 only, as on the web. */
import { CtxTypeError, ReflectApply, StringCtor, typedArrayTag } from '../primordials.js';
import { once, platformClasses } from '../webidl.js';
import { utf8Encode, utf8Write } from './utf8.js';

/** This realm's TextEncoder, created on first need. */
export const textEncoderClass = once(function () {
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
  platformClasses(TextEncoder);
  return TextEncoder;
});
