// @ts-check
/**
 * atob and btoa for tool code: the input is checked here as the HTML
 * standard's forgiving-base64 does; the conversion is the host's native
 * base64, through the bridge.
 */
import { CtxRangeError, CtxTypeError, StringCtor, charCodeAt, matches } from '../primordials.js';
import { webCall } from '../bridge.js';
import { newDOMException } from './dom-exception.js';
import { sliceOf, withoutAsciiWhitespace } from './infra.js';

const NOT_BASE64 = /[^A-Za-z0-9+/]/;
const NOT_LATIN1 = /[\u0100-\uffff]/;

/** @param {unknown} data */
export function atob(data) {
  if (arguments.length === 0) throw new CtxTypeError("atob: the 'data' argument is required");
  let text = withoutAsciiWhitespace(StringCtor(data));
  let length = text.length;
  if (length % 4 === 0 && length > 0 && charCodeAt(text, length - 1) === 0x3d) {
    length -= charCodeAt(text, length - 2) === 0x3d ? 2 : 1;
    text = sliceOf(text, 0, length);
  }
  if (length % 4 === 1 || matches(NOT_BASE64, text)) {
    throw newDOMException(
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
export function btoa(data) {
  if (arguments.length === 0) throw new CtxTypeError("btoa: the 'data' argument is required");
  const text = StringCtor(data);
  if (matches(NOT_LATIN1, text)) {
    throw newDOMException(
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
