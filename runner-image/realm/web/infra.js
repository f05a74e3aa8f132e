// @ts-check
/**
 * Strings as the Infra standard speaks of them (ASCII whitespace, code units)
 * and a builder that makes a long string from code units without asking
 * String.prototype for anything (tool code may have replaced it).
 */
import {
  ReflectApply,
  StringFromCharCode,
  append,
  arrayJoin,
  bareArray,
  charCodeAt,
  matches,
} from '../primordials.js';

const ASCII_WHITESPACE = /[\t\n\f\r ]/;
/** Code units per String.fromCharCode call. */
const CHUNK = 8192;

/**
 * `text` without ASCII whitespace at either end.
 * @param {string} text
 */
export function trimAsciiWhitespace(text) {
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
export function sliceOf(text, start, end) {
  const out = stringBuilder();
  for (let i = start; i < end; i++) out.push(charCodeAt(text, i));
  return out.text();
}

/**
 * `text` without any ASCII whitespace.
 * @param {string} text
 */
export function withoutAsciiWhitespace(text) {
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
export function stringBuilder() {
  /** @type {string[]} */
  const parts = [];
  /** @type {number[]} */
  let units = bareArray();
  return {
    /** @param {number} unit */
    push(unit) {
      units[units.length] = unit;
      if (units.length >= CHUNK) {
        append(parts, ReflectApply(StringFromCharCode, undefined, units));
        units = bareArray();
      }
    },
    /** @returns {string} */
    text() {
      if (units.length > 0) {
        append(parts, ReflectApply(StringFromCharCode, undefined, units));
        units = bareArray();
      }
      if (parts.length === 0) return '';
      return parts.length === 1
        ? /** @type {string} */ (parts[0])
        : ReflectApply(arrayJoin, parts, ['']);
    },
  };
}

/**
 * `text` as a USVString (WebIDL): each lone surrogate replaced by U+FFFD.
 * @param {string} text
 */
export function toUsvString(text) {
  const length = text.length;
  let i = 0;
  for (; i < length; i++) {
    const code = charCodeAt(text, i);
    if (code < 0xd800 || code > 0xdfff) continue;
    if (code <= 0xdbff && i + 1 < length) {
      const next = charCodeAt(text, i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
    }
    break;
  }
  if (i >= length) return text;
  const out = stringBuilder();
  for (let j = 0; j < length; j++) {
    const code = charCodeAt(text, j);
    if (code >= 0xd800 && code <= 0xdbff && j + 1 < length) {
      const next = charCodeAt(text, j + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        out.push(code);
        out.push(next);
        j++;
        continue;
      }
    }
    out.push(code >= 0xd800 && code <= 0xdfff ? 0xfffd : code);
  }
  return out.text();
}
