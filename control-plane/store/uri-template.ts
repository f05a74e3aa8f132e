/**
 * RFC 6570 URI templates of resource templates (`test://items/{id}`): parsed
 * and checked when a resource is saved, matched against the URIs clients
 * read or subscribe to. Matching is ours and deterministic, without regular
 * expressions: a template becomes a row of literals and value slots, and the
 * literals between slots are found with one indexOf or lastIndexOf each (see
 * matchUri). A client's URI cannot make a backtracking engine (or RE2's NFA,
 * ~0.7 s per 2 KiB URI on a crafted template) stall the main thread.
 *
 * Supported: simple strings (`{var}`), reserved (`{+var}`), fragment
 * (`{#var}`), labels (`{.var}`), path segments (`{/var}`), query
 * (`{?a,b}`, `{&c}`), several names in one expression. Refused at save:
 * prefix modifiers (`{var:3}`), explode (`{var*}`), and two variables with
 * no literal between them (`{a}{b}`: no URI says where one ends).
 */

/** The most variables a template may have. */
export const MAX_TEMPLATE_VARIABLES = 16;
/** The longest template, and the longest URI matched against one. */
export const MAX_TEMPLATE_LENGTH = 2048;
export const MAX_MATCHED_URI_LENGTH = 2048;

type Operator = '' | '+' | '#' | '.' | '/' | '?' | '&';

interface Expression {
  operator: Operator;
  names: string[];
}

/** A value slot: its variable, and the characters its value may not contain (before decoding). */
interface Slot {
  name: string;
  excluded: RegExp;
  /** Query values may be empty (`?q=`); others hold at least one character. */
  mayBeEmpty: boolean;
}

/** A parsed, matchable template. */
export interface UriTemplate {
  readonly template: string;
  /** Variable names in order of appearance. */
  readonly variables: readonly string[];
  /** The variables of `uri` (percent-decoded), or undefined when it does not match. */
  match(uri: string): Record<string, string> | undefined;
  /** The URI with `values` substituted (percent-encoded as the operator says). */
  expand(values: Readonly<Record<string, string>>): string;
}

/** A template that cannot be used, with why. */
export class UriTemplateError extends Error {}

const OPERATORS = new Set(['+', '#', '.', '/', '?', '&']);
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const FORBIDDEN_NAMES = new Set(['__proto__', 'constructor', 'prototype']);

// What a value of each operator may not contain as it appears in the URI.
const SIMPLE = /[/?#&,]/;
const ANYTHING = /(?!)/;
const LABEL = /[/?#&,.]/;
const QUERY = /[&#]/;

/** Parses a template; throws UriTemplateError saying what is wrong. */
export function parseUriTemplate(template: string): UriTemplate {
  if (template.length > MAX_TEMPLATE_LENGTH) {
    throw new UriTemplateError(`a URI template is at most ${MAX_TEMPLATE_LENGTH} characters`);
  }
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(template)) {
    throw new UriTemplateError('a URI template starts with a scheme, e.g. file:///{path}');
  }
  const parts = parseParts(template);
  const variables = parts.flatMap((part) => (typeof part === 'string' ? [] : part.names));
  if (variables.length === 0) {
    throw new UriTemplateError('a URI template has at least one {variable}');
  }
  if (variables.length > MAX_TEMPLATE_VARIABLES) {
    throw new UriTemplateError(`a URI template has at most ${MAX_TEMPLATE_VARIABLES} variables`);
  }
  const row = matchRow(parts);
  return {
    template,
    variables,
    match: (uri) => matchUri(row, uri),
    expand(values) {
      return parts.map((part) => (typeof part === 'string' ? part : expand(part, values))).join('');
    },
  };
}

function parseParts(template: string): (string | Expression)[] {
  const parts: (string | Expression)[] = [];
  const seen = new Set<string>();
  let literal = '';
  for (let i = 0; i < template.length; i++) {
    const char = template[i]!;
    if (char === '}') throw new UriTemplateError(`unopened "}" at character ${i + 1}`);
    if (char !== '{') {
      if (/[\s<>"\\^`|]/.test(char) || char.charCodeAt(0) < 0x20) {
        throw new UriTemplateError(`character ${i + 1} may not appear in a URI template`);
      }
      literal += char;
      continue;
    }
    const end = template.indexOf('}', i);
    if (end === -1) throw new UriTemplateError(`unclosed "{" at character ${i + 1}`);
    const text = template.slice(i + 1, end);
    let body = text;
    let operator: Operator = '';
    if (OPERATORS.has(body[0] ?? '')) {
      operator = body[0] as Operator;
      body = body.slice(1);
    }
    const names = body.split(',');
    for (const name of names) {
      if (name.endsWith('*') || name.includes(':')) {
        throw new UriTemplateError(
          `{${text}}: explode (*) and prefix (:n) modifiers are not supported`,
        );
      }
      if (!VARIABLE_NAME.test(name) || FORBIDDEN_NAMES.has(name)) {
        throw new UriTemplateError(
          `{${text}}: a variable name is letters, digits and _ (not first), and not __proto__, constructor or prototype`,
        );
      }
      if (seen.has(name)) throw new UriTemplateError(`variable "${name}" appears twice`);
      seen.add(name);
    }
    if (literal) parts.push(literal);
    literal = '';
    parts.push({ operator, names });
    i = end;
  }
  if (literal) parts.push(literal);
  return parts;
}

/**
 * The template as alternating literals and slots: `items[0]` is a literal
 * (maybe empty), then slot, literal, slot, literal… Two slots with an empty
 * literal between them cannot be told apart in a URI: refused.
 */
function matchRow(parts: (string | Expression)[]): (string | Slot)[] {
  const items: (string | Slot)[] = [''];
  const addLiteral = (text: string) => {
    items[items.length - 1] = (items[items.length - 1] as string) + text;
  };
  const addSlot = (slot: Slot) => {
    if (items[items.length - 1] === '' && items.length > 1) {
      throw new UriTemplateError(
        `{${(items[items.length - 2] as Slot).name}} and {${slot.name}} follow each other with nothing between them: put a literal between them (e.g. "/" or "-")`,
      );
    }
    items.push(slot, '');
  };
  for (const part of parts) {
    if (typeof part === 'string') {
      addLiteral(part);
      continue;
    }
    part.names.forEach((name, index) => {
      const { operator } = part;
      const first = index === 0;
      switch (operator) {
        case '':
        case '+':
          if (!first) addLiteral(',');
          addSlot({ name, excluded: operator === '' ? SIMPLE : ANYTHING, mayBeEmpty: false });
          break;
        case '#':
          addLiteral(first ? '#' : ',');
          addSlot({ name, excluded: ANYTHING, mayBeEmpty: false });
          break;
        case '.':
          addLiteral('.');
          addSlot({ name, excluded: LABEL, mayBeEmpty: false });
          break;
        case '/':
          addLiteral('/');
          addSlot({ name, excluded: SIMPLE, mayBeEmpty: false });
          break;
        case '?':
        case '&':
          addLiteral(`${first ? operator : '&'}${name}=`);
          addSlot({ name, excluded: QUERY, mayBeEmpty: true });
          break;
      }
    });
  }
  return items;
}

/**
 * The values of `uri`, or undefined. Boundaries (the literals between slots)
 * are found left to right at their first occurrence until one whose next
 * slot may not contain it (`{+dir}/{name}`: a name holds no "/"); from there
 * they are found right to left, from the anchored tail, at their last
 * occurrence. The slot where the two passes meet takes what lies between.
 * Linear in the URI: one indexOf or lastIndexOf per boundary.
 */
function matchUri(items: (string | Slot)[], uri: string): Record<string, string> | undefined {
  if (uri.length > MAX_MATCHED_URI_LENGTH) return undefined;
  const head = items[0] as string;
  const tail = items[items.length - 1] as string;
  // Both ends first: most URIs of other templates fail here, before any scan.
  if (!uri.startsWith(head) || !uri.endsWith(tail)) return undefined;
  const slotCount = (items.length - 1) / 2;
  const slot = (i: number) => items[2 * i - 1] as Slot;
  const boundary = (i: number) => items[2 * i] as string;
  const raw: string[] = [];
  let position = head.length;
  let meet = 1;
  for (; meet < slotCount && !slot(meet + 1).excluded.test(boundary(meet)); meet++) {
    const literal = boundary(meet);
    const at = uri.indexOf(literal, slot(meet).mayBeEmpty ? position : position + 1);
    if (at === -1) return undefined;
    raw[meet] = uri.slice(position, at);
    position = at + literal.length;
  }
  let end = uri.length - tail.length;
  if (end < position) return undefined;
  for (let i = slotCount; i > meet; i--) {
    const literal = boundary(i - 1);
    const at = uri.lastIndexOf(literal, end - literal.length - (slot(i).mayBeEmpty ? 0 : 1));
    if (at === -1 || at < position) return undefined;
    raw[i] = uri.slice(at + literal.length, end);
    end = at;
  }
  raw[meet] = uri.slice(position, end);
  const values: Record<string, string> = Object.create(null);
  for (let i = 1; i <= slotCount; i++) {
    const { name, excluded, mayBeEmpty } = slot(i);
    const value = raw[i]!;
    if ((!mayBeEmpty && value.length === 0) || excluded.test(value)) return undefined;
    values[name] = decode(value);
  }
  return values;
}

function expand(part: Expression, values: Readonly<Record<string, string>>): string {
  const { operator, names } = part;
  const reserved = operator === '+' || operator === '#';
  const encode = (value: string) => (reserved ? encodeURI(value) : encodeURIComponent(value));
  const encoded = names.map((name) => encode(values[name] ?? ''));
  switch (operator) {
    case '':
    case '+':
      return encoded.join(',');
    case '#':
      return '#' + encoded.join(',');
    case '.':
      // A label holds no ".", so one in a value is encoded (match decodes it).
      return encoded.map((value) => '.' + value.replaceAll('.', '%2E')).join('');
    case '/':
      return encoded.map((value) => '/' + value).join('');
    case '?':
    case '&':
      return names
        .map((name, index) => `${index === 0 ? operator : '&'}${name}=${encoded[index]}`)
        .join('');
  }
}

function decode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
