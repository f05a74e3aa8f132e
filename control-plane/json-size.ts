/**
 * Sizes of values as JSON, in the bytes that are sent: every limit that
 * guards an answer counts these, not characters of text. A character of
 * text is 1 to 6 bytes once in a JSON string: `"` and `\` take 2, a control
 * character 6 (`\u0001`), a lone surrogate 6, other characters their UTF-8
 * length (JSON.stringify escapes exactly these). An answer may also carry a
 * value's JSON as text (a tool's result, a resource's contents), which
 * escapes it once more: each `"` and `\` of that JSON takes 2 bytes.
 * Counted without building the JSON text, so that measuring a value costs
 * no copy of it, and stopped past a limit, so that it costs no more than
 * the limit.
 */

/** UTF-8 bytes of `text` as a JSON string, its two quotes included (JSON.stringify's escaping). */
export function jsonStringBytes(text: string): number {
  return stringSizes(text).bytes;
}

/**
 * UTF-8 bytes of `JSON.stringify(value)` (a value parsed from JSON, or built
 * of the same kinds), or a number above `limit` as soon as it passes it: the
 * walk stops there, so its cost is bounded by `limit`, not by the value.
 */
export function jsonBytesAtMost(value: unknown, limit: number): number {
  return measure(value, limit, false);
}

/**
 * UTF-8 bytes of `JSON.stringify(JSON.stringify(value))`: the value's JSON
 * sent as a string (a text block holding it), or a number above `limit` as
 * soon as it passes it.
 */
export function jsonTextBytesAtMost(value: unknown, limit: number): number {
  // The JSON text's own quotes, and each of its `"` and `\` once more.
  return 2 + measure(value, limit - 2, true);
}

/** \b \t \n \f \r: escaped in two characters; other control characters take six. */
const SHORT_ESCAPES = new Set([0x08, 0x09, 0x0a, 0x0c, 0x0d]);

/**
 * A string's bytes in JSON (quotes included), and how many of those bytes
 * are `"` or `\` (each escaped again when that JSON is itself a string).
 */
function stringSizes(text: string): { bytes: number; escapedAgain: number } {
  // The two quotes.
  let bytes = 2;
  let escapedAgain = 2;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (unit < 0x20) {
      // `\n` or `\u0001`: one backslash either way.
      bytes += SHORT_ESCAPES.has(unit) ? 2 : 6;
      escapedAgain += 1;
    } else if (unit === 0x22 || unit === 0x5c) {
      // `\"` and `\\`: two characters that each escape again.
      bytes += 2;
      escapedAgain += 2;
    } else if (unit < 0x80) {
      bytes += 1;
    } else if (unit < 0x800) {
      bytes += 2;
    } else if (unit >= 0xd800 && unit <= 0xdbff && isLowSurrogate(text.charCodeAt(index + 1))) {
      bytes += 4;
      index++;
    } else if (unit >= 0xd800 && unit <= 0xdfff) {
      // A lone surrogate is written `\udxxx`.
      bytes += 6;
      escapedAgain += 1;
    } else {
      bytes += 3;
    }
  }
  return { bytes, escapedAgain };
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/** JSON bytes of `value` (and, `asText`, its `"` and `\` once more), stopping past `limit`. */
function measure(value: unknown, limit: number, asText: boolean): number {
  let bytes = 0;
  const addString = (text: string) => {
    // Every character takes a byte at least: a string past what is left need not be read.
    if (text.length > limit - bytes) {
      bytes += text.length + 2;
      return;
    }
    const sizes = stringSizes(text);
    bytes += sizes.bytes + (asText ? sizes.escapedAgain : 0);
  };
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    if (bytes > limit) return bytes;
    const next = pending.pop();
    if (typeof next === 'string') {
      addString(next);
    } else if (typeof next === 'number') {
      bytes += Number.isFinite(next) ? String(next).length : 4;
    } else if (typeof next === 'boolean') {
      bytes += next ? 4 : 5;
    } else if (next === null) {
      bytes += 4;
    } else if (Array.isArray(next)) {
      // Brackets and commas; an item JSON cannot hold (undefined, a function) is written null.
      bytes += 2 + Math.max(0, next.length - 1);
      for (const item of next) {
        pending.push(item === undefined || typeof item === 'function' ? null : item);
      }
    } else if (typeof next === 'object') {
      let members = 0;
      for (const [key, member] of Object.entries(next)) {
        if (member === undefined || typeof member === 'function' || typeof member === 'symbol') {
          continue;
        }
        addString(key);
        // The colon.
        bytes += 1;
        members++;
        pending.push(member);
      }
      bytes += 2 + Math.max(0, members - 1);
    }
  }
  return bytes;
}

/**
 * True when `value` (parsed JSON) nests arrays and objects deeper than
 * `maxDepth` (a scalar is depth 0, `[]` and `{}` are 1). Walked without
 * recursion, so a hostile nesting cannot overflow the stack here, and
 * stopped at the first container too deep.
 */
export function jsonDeeperThan(value: unknown, maxDepth: number): boolean {
  // Two parallel stacks of containers only: a hostile value may hold millions of them.
  const containers: object[] = [];
  const depths: number[] = [];
  if (value !== null && typeof value === 'object') {
    containers.push(value);
    depths.push(1);
  }
  while (containers.length > 0) {
    const next = containers.pop()!;
    const depth = depths.pop()!;
    if (depth > maxDepth) return true;
    if (Array.isArray(next)) {
      for (let index = 0; index < next.length; index++) {
        const member: unknown = next[index];
        if (member !== null && typeof member === 'object') {
          containers.push(member);
          depths.push(depth + 1);
        }
      }
    } else {
      for (const key in next) {
        const member: unknown = (next as Record<string, unknown>)[key];
        if (member !== null && typeof member === 'object') {
          containers.push(member);
          depths.push(depth + 1);
        }
      }
    }
  }
  return false;
}

/**
 * True when the JSON text `text` nests arrays and objects deeper than
 * `maxDepth`, read before it is parsed: one pass over its characters that
 * skips strings, several times cheaper than walking the parsed value (a
 * 3.6 MB body of a million empty arrays: ~10 ms against ~100 ms). Meant for
 * text JSON.parse then accepts; on malformed text its answer is moot.
 */
export function jsonTextDeeperThan(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (inString) {
      if (unit === 0x5c)
        index++; // `\`: the next character is escaped
      else if (unit === 0x22) inString = false;
    } else if (unit === 0x22) {
      inString = true;
    } else if (unit === 0x7b || unit === 0x5b) {
      if (++depth > maxDepth) return true;
    } else if (unit === 0x7d || unit === 0x5d) {
      depth--;
    }
  }
  return false;
}
