// @ts-check
/**
 * MIME types as the MIME Sniffing standard parses and serialises them, and
 * Fetch's "extract a MIME type" from a Content-Type value: what
 * Response.blob() gives as the Blob's type and what Response.formData()
 * reads the boundary from.
 */
import {
  CtxMap,
  ReflectApply,
  append,
  charCodeAt,
  mapHas,
  mapSet,
  matches,
  toLowerCase,
} from '../primordials.js';
import { sliceOf, stringBuilder } from './infra.js';

/** @typedef {{ type: string, subtype: string, parameters: [string, string][] }} MimeType */

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// HTTP quoted-string token code points: tab, U+0020–U+007E, U+0080–U+00FF.
const QUOTED_STRING_TOKEN = /^[\t\u0020-\u007e\u0080-\u00ff]*$/;

/** @param {number} code */
function isHttpWhitespace(code) {
  return code === 0x09 || code === 0x0a || code === 0x0d || code === 0x20;
}

/**
 * The value of an HTTP quoted string starting at `start` (a `"`) and
 * ending by `end` at the latest, and where it ended.
 * @param {string} text
 * @param {number} start
 * @param {number} end
 * @returns {[value: string, end: number]}
 */
function quotedString(text, start, end) {
  const out = stringBuilder();
  let i = start + 1;
  while (i < end) {
    const code = charCodeAt(text, i);
    if (code === 0x22) {
      i++;
      break;
    }
    if (code === 0x5c) {
      i++;
      if (i >= end) {
        out.push(0x5c);
        break;
      }
      out.push(charCodeAt(text, i));
      i++;
      continue;
    }
    out.push(code);
    i++;
  }
  return [out.text(), i];
}

/**
 * Parses a MIME type (MIME Sniffing §4.4); null when it is none.
 * @param {string} input
 * @returns {MimeType | null}
 */
export function parseMimeType(input) {
  let start = 0;
  let end = input.length;
  while (start < end && isHttpWhitespace(charCodeAt(input, start))) start++;
  while (end > start && isHttpWhitespace(charCodeAt(input, end - 1))) end--;
  let i = start;
  while (i < end && charCodeAt(input, i) !== 0x2f) i++;
  const type = sliceOf(input, start, i);
  if (type === '' || !matches(TOKEN, type) || i >= end) return null;
  i++;
  const subtypeStart = i;
  while (i < end && charCodeAt(input, i) !== 0x3b) i++;
  let subtypeEnd = i;
  while (subtypeEnd > subtypeStart && isHttpWhitespace(charCodeAt(input, subtypeEnd - 1))) {
    subtypeEnd--;
  }
  const subtype = sliceOf(input, subtypeStart, subtypeEnd);
  if (subtype === '' || !matches(TOKEN, subtype)) return null;
  /** @type {MimeType} */
  const mime = { type: toLowerCase(type), subtype: toLowerCase(subtype), parameters: [] };
  // Names already taken (the first of each wins): a lookup per parameter, not a walk of the list.
  /** @type {Map<string, true>} */
  const taken = new CtxMap();
  while (i < end) {
    i++; // past ';'
    while (i < end && isHttpWhitespace(charCodeAt(input, i))) i++;
    const nameStart = i;
    while (i < end && charCodeAt(input, i) !== 0x3b && charCodeAt(input, i) !== 0x3d) i++;
    const name = toLowerCase(sliceOf(input, nameStart, i));
    if (i < end) {
      if (charCodeAt(input, i) === 0x3b) continue;
      i++; // past '='
    }
    if (i >= end) break;
    let value;
    if (charCodeAt(input, i) === 0x22) {
      const quoted = quotedString(input, i, end);
      value = quoted[0];
      i = quoted[1];
      while (i < end && charCodeAt(input, i) !== 0x3b) i++;
    } else {
      const valueStart = i;
      while (i < end && charCodeAt(input, i) !== 0x3b) i++;
      let valueEnd = i;
      while (valueEnd > valueStart && isHttpWhitespace(charCodeAt(input, valueEnd - 1))) {
        valueEnd--;
      }
      value = sliceOf(input, valueStart, valueEnd);
      if (value === '') continue;
    }
    if (
      name !== '' &&
      matches(TOKEN, name) &&
      matches(QUOTED_STRING_TOKEN, value) &&
      !ReflectApply(mapHas, taken, [name])
    ) {
      ReflectApply(mapSet, taken, [name, true]);
      append(mime.parameters, [name, value]);
    }
  }
  return mime;
}

/**
 * A parameter's value, or undefined.
 * @param {MimeType} mime
 * @param {string} name lower case
 */
export function parameterOf(mime, name) {
  const parameters = mime.parameters;
  for (let i = 0; i < parameters.length; i++) {
    const pair = /** @type {[string, string]} */ (parameters[i]);
    if (pair[0] === name) return pair[1];
  }
  return undefined;
}

/**
 * The MIME type as text (MIME Sniffing §4.5).
 * @param {MimeType} mime
 */
export function serializeMimeType(mime) {
  let text = mime.type + '/' + mime.subtype;
  const parameters = mime.parameters;
  for (let i = 0; i < parameters.length; i++) {
    const pair = /** @type {[string, string]} */ (parameters[i]);
    let value = pair[1];
    if (value === '' || !matches(TOKEN, value)) {
      const out = stringBuilder();
      out.push(0x22);
      for (let j = 0; j < value.length; j++) {
        const code = charCodeAt(value, j);
        if (code === 0x22 || code === 0x5c) out.push(0x5c);
        out.push(code);
      }
      out.push(0x22);
      value = out.text();
    }
    text += ';' + pair[0] + '=' + value;
  }
  return text;
}

/**
 * Fetch's "extract a MIME type" from a Content-Type value (the header's
 * values joined by ", "): the last that parses wins, keeping an earlier
 * charset when the essence is the same. Null when none parses.
 * @param {string | null} value
 * @returns {MimeType | null}
 */
export function extractMimeType(value) {
  if (value === null) return null;
  /** @type {MimeType | null} */
  let mime = null;
  /** @type {string | null} */
  let charset = null;
  let essence = '';
  let i = 0;
  // "get, decode, and split": values split on commas outside quoted strings.
  while (i <= value.length) {
    const start = i;
    while (i < value.length && charCodeAt(value, i) !== 0x2c) {
      if (charCodeAt(value, i) === 0x22) i = quotedString(value, i, value.length)[1];
      else i++;
    }
    const parsed = parseMimeType(sliceOf(value, start, i));
    i++;
    if (parsed === null || (parsed.type === '*' && parsed.subtype === '*')) continue;
    mime = parsed;
    const parsedEssence = parsed.type + '/' + parsed.subtype;
    const parsedCharset = parameterOf(parsed, 'charset');
    if (parsedEssence !== essence) {
      charset = null;
      if (parsedCharset !== undefined) charset = parsedCharset;
      essence = parsedEssence;
    } else if (parsedCharset === undefined && charset !== null) {
      append(parsed.parameters, ['charset', charset]);
    }
  }
  return mime;
}
