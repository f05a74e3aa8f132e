/**
 * The four formats an MCP form's string field may name (`email`, `uri`,
 * `date`, `date-time`), checked on the control plane's thread over text a
 * client chose. Each check is one pass over the text with no regular
 * expression, so its cost is linear in the answer whatever the answer is: a
 * backtracking pattern here would let one client stall every tenant.
 */

/** The formats MCP allows on a form's string field (PrimitiveSchemaDefinition, 2025-11-25). */
export const FORM_FORMATS = ['email', 'uri', 'date', 'date-time'] as const;
export type FormFormat = (typeof FORM_FORMATS)[number];

/** Whether `text` is written in `format`. */
export function matchesFormat(format: FormFormat, text: string): boolean {
  switch (format) {
    case 'email':
      return isEmail(text);
    case 'uri':
      return isUri(text);
    case 'date':
      return isDate(text, 0) && text.length === DATE_LENGTH;
    case 'date-time':
      return isDateTime(text);
  }
}

/**
 * `local@domain`: one `@`, both sides non-empty, nothing blank or a control
 * character, and a domain of non-empty dot-separated labels. Looser than
 * RFC 5321 on purpose: the form is the client's to enforce, this only keeps
 * what is plainly not an address from reaching the tool as one.
 */
function isEmail(text: string): boolean {
  const at = text.indexOf('@');
  if (at <= 0 || at !== text.lastIndexOf('@') || at === text.length - 1) return false;
  let previous = '@';
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code <= 0x20 || code === 0x7f) return false;
    const character = text[index]!;
    // In the domain: no empty label (a leading, doubled or trailing dot).
    if (index > at && character === '.' && (previous === '.' || previous === '@')) return false;
    previous = character;
  }
  return previous !== '.';
}

/** An absolute URI: a scheme, then what the WHATWG parser (one linear pass) accepts; no blanks. */
function isUri(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code <= 0x20 || code === 0x7f) return false;
  }
  return URL.canParse(text);
}

/** `YYYY-MM-DD` (RFC 3339 full-date). */
const DATE_LENGTH = 10;

/** Whether an RFC 3339 full-date, a real day of its month, starts at `start`. */
function isDate(text: string, start: number): boolean {
  const year = digits(text, start, 4);
  const month = digits(text, start + 5, 2);
  const day = digits(text, start + 8, 2);
  if (text[start + 4] !== '-' || text[start + 7] !== '-') return false;
  if (year < 0 || month < 1 || month > 12 || day < 1) return false;
  return day <= daysIn(year, month);
}

/**
 * RFC 3339 date-time: full-date, `T` (or `t`, or a space, as RFC 3339 lets
 * applications choose), `HH:MM:SS`, an optional fraction, then `Z` or an
 * offset `±HH:MM`.
 */
function isDateTime(text: string): boolean {
  if (!isDate(text, 0)) return false;
  const separator = text[DATE_LENGTH];
  if (separator !== 'T' && separator !== 't' && separator !== ' ') return false;
  let index = DATE_LENGTH + 1;
  if (!isTime(text, index)) return false;
  index += 8;
  if (text[index] === '.') {
    const first = ++index;
    while (index < text.length && isDigit(text.charCodeAt(index))) index++;
    if (index === first) return false;
  }
  const zone = text[index];
  if (zone === 'Z' || zone === 'z') return index + 1 === text.length;
  if (zone !== '+' && zone !== '-') return false;
  // An offset has hours and minutes only.
  const hours = digits(text, index + 1, 2);
  const minutes = digits(text, index + 4, 2);
  return (
    text[index + 3] === ':' &&
    hours >= 0 &&
    hours <= 23 &&
    minutes >= 0 &&
    minutes <= 59 &&
    index + 6 === text.length
  );
}

/** `HH:MM:SS` at `start`; second 60 is a leap second. */
function isTime(text: string, start: number): boolean {
  const hours = digits(text, start, 2);
  const minutes = digits(text, start + 3, 2);
  const seconds = digits(text, start + 6, 2);
  if (text[start + 2] !== ':' || text[start + 5] !== ':') return false;
  return (
    hours >= 0 && hours <= 23 && minutes >= 0 && minutes <= 59 && seconds >= 0 && seconds <= 60
  );
}

/** The decimal number of `count` ASCII digits at `start`, or -1 when they are not all digits. */
function digits(text: string, start: number, count: number): number {
  if (start + count > text.length) return -1;
  let value = 0;
  for (let index = start; index < start + count; index++) {
    const code = text.charCodeAt(index);
    if (!isDigit(code)) return -1;
    value = value * 10 + (code - 0x30);
  }
  return value;
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

function daysIn(year: number, month: number): number {
  if (month === 2) {
    const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
    return leap ? 29 : 28;
  }
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
