/**
 * RFC 6570 URI templates of resource templates (`test://items/{id}`): parsed
 * and checked when a resource is saved, matched against the URIs clients
 * read or subscribe to. Matching runs on RE2 (re2js): the pattern is built
 * from an operator's template, the URI is a client's text, and a backtracking
 * engine would let `{a}{b}{c}…` take time polynomial in the URI's length on
 * the main thread.
 *
 * Supported: simple strings (`{var}`), reserved (`{+var}`), fragment
 * (`{#var}`), labels (`{.var}`), path segments (`{/var}`), query
 * (`{?a,b}`, `{&c}`), several names in one expression. Not supported (a save
 * names it): prefix modifiers (`{var:3}`) and explode (`{var*}`).
 */
import { RE2JS } from 're2js';

/** The most variables a template may have. */
export const MAX_TEMPLATE_VARIABLES = 16;
/**
 * The longest template, and the longest URI matched against one: RE2 runs in
 * linear time, about 0.2 ms for 2 KiB here, times the templates tried.
 */
export const MAX_TEMPLATE_LENGTH = 2048;
export const MAX_MATCHED_URI_LENGTH = 2048;

type Operator = '' | '+' | '#' | '.' | '/' | '?' | '&';

interface Expression {
  operator: Operator;
  names: string[];
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
const VARIABLE_NAME = /^[A-Za-z0-9_]+$/;

/** Parses a template; throws UriTemplateError saying what is wrong. */
export function parseUriTemplate(template: string): UriTemplate {
  if (template.length > MAX_TEMPLATE_LENGTH) {
    throw new UriTemplateError(`a URI template is at most ${MAX_TEMPLATE_LENGTH} characters`);
  }
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(template)) {
    throw new UriTemplateError('a URI template starts with a scheme, e.g. file:///{path}');
  }
  const parts: (string | Expression)[] = [];
  const variables: string[] = [];
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
    let body = template.slice(i + 1, end);
    let operator: Operator = '';
    if (OPERATORS.has(body[0] ?? '')) {
      operator = body[0] as Operator;
      body = body.slice(1);
    }
    const names = body.split(',');
    for (const name of names) {
      if (name.endsWith('*') || name.includes(':')) {
        throw new UriTemplateError(
          `{${template.slice(i + 1, end)}}: explode (*) and prefix (:n) modifiers are not supported`,
        );
      }
      if (!VARIABLE_NAME.test(name)) {
        throw new UriTemplateError(
          `{${template.slice(i + 1, end)}}: a variable name is letters, digits and _`,
        );
      }
      if (variables.includes(name)) {
        throw new UriTemplateError(`variable "${name}" appears twice`);
      }
      variables.push(name);
    }
    if (literal) parts.push(literal);
    literal = '';
    parts.push({ operator, names });
    i = end;
  }
  if (literal) parts.push(literal);
  if (variables.length === 0) {
    throw new UriTemplateError('a URI template has at least one {variable}');
  }
  if (variables.length > MAX_TEMPLATE_VARIABLES) {
    throw new UriTemplateError(`a URI template has at most ${MAX_TEMPLATE_VARIABLES} variables`);
  }
  const pattern = RE2JS.compile(`^${parts.map(patternOf).join('')}$`, RE2JS.DOTALL);
  return {
    template,
    variables,
    match(uri) {
      if (uri.length > MAX_MATCHED_URI_LENGTH) return undefined;
      const matcher = pattern.matcher(uri);
      if (!matcher.matches()) return undefined;
      const values: Record<string, string> = Object.create(null);
      variables.forEach((name, index) => {
        values[name] = decode(matcher.group(index + 1) ?? '');
      });
      return values;
    },
    expand(values) {
      return parts.map((part) => (typeof part === 'string' ? part : expand(part, values))).join('');
    },
  };
}

/** The RE2 pattern of a literal or an expression; one capturing group per variable. */
function patternOf(part: string | Expression): string {
  if (typeof part === 'string') return RE2JS.quote(part);
  const { operator, names } = part;
  switch (operator) {
    case '':
      return names.map(() => '([^/?#&,]+)').join(',');
    case '+':
      return names.map(() => '(.+?)').join(',');
    case '#':
      return '#' + names.map(() => '(.+?)').join(',');
    case '.':
      return names.map(() => '\\.([^/?#&,.]+)').join('');
    case '/':
      return names.map(() => '/([^/?#&,]+)').join('');
    case '?':
    case '&':
      return names
        .map((name, index) => `${index === 0 ? '\\' + operator : '&'}${name}=([^&#]*)`)
        .join('');
  }
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
      return encoded.map((value) => '.' + value).join('');
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
