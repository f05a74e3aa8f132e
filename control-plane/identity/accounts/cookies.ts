/**
 * The Cookie and Set-Cookie headers (RFC 6265), for the session and the
 * sign-in flow cookies. Parsing is tolerant (a browser sends what other
 * applications on the same host set, too); serializing is strict, because
 * its inputs are ours: a bad name or attribute is a TypeError.
 */

/** Attributes of a cookie we set. */
export interface CookieOptions {
  /** Lifetime in seconds (`Max-Age`); default none (a session cookie, gone when the browser closes). */
  maxAgeSeconds?: number;
  /** `Secure`: sent only over HTTPS. Required by `__Host-` and `__Secure-` names. */
  secure: boolean;
  /** `HttpOnly`: invisible to the page's scripts. */
  httpOnly: boolean;
  /** `SameSite`: Lax lets a top-level navigation from another site carry it (the OIDC callback). */
  sameSite: 'Lax' | 'Strict';
  /** `Path`; must start with '/'. `__Host-` names require '/'. */
  path: string;
}

/** Browsers drop a cookie whose name, value and attributes exceed this many bytes. */
export const MAX_COOKIE_BYTES = 4096;

/** RFC 7230 `token` characters, which a cookie name must consist of. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A path attribute value: printable ASCII without ';' (RFC 6265 §4.1.1 av-octet). */
const PATH_VALUE = /^\/[\x20-\x3a\x3c-\x7e]*$/;

/**
 * The cookies of a `Cookie` header by name. The first occurrence of a name
 * wins (browsers send the most specific path first); pairs without '=' or
 * with an empty name are skipped; a percent-encoded value is decoded, and one
 * that does not decode is kept as sent. Never throws.
 */
export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  if (typeof header !== 'string' || header === '') return cookies;
  for (const pair of header.split(';')) {
    const separator = pair.indexOf('=');
    if (separator < 0) continue;
    const name = pair.slice(0, separator).trim();
    if (name === '' || cookies.has(name)) continue;
    let value = pair.slice(separator + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
      value = value.slice(1, -1);
    }
    cookies.set(name, decodeValue(value));
  }
  return cookies;
}

/**
 * A `Set-Cookie` header value. The value is percent-encoded (parseCookies
 * decodes it). TypeError for a name that is not a token, a path not starting
 * with '/', a negative or fractional Max-Age, a value that cannot be encoded
 * (lone surrogate), a `__Host-`/`__Secure-` name without what its prefix
 * requires, or a result longer than MAX_COOKIE_BYTES.
 */
export function serializeCookie(name: string, value: string, options: CookieOptions): string {
  checkName(name);
  if (typeof value !== 'string') throw new TypeError(`cookie ${name}: value must be a string`);
  checkOptions(name, options);
  let encoded: string;
  try {
    encoded = encodeURIComponent(value);
  } catch {
    throw new TypeError(`cookie ${name}: value is not well-formed Unicode`);
  }
  const attributes = [`${name}=${encoded}`, `Path=${options.path}`];
  if (options.maxAgeSeconds !== undefined) attributes.push(`Max-Age=${options.maxAgeSeconds}`);
  if (options.maxAgeSeconds === 0) attributes.push('Expires=Thu, 01 Jan 1970 00:00:00 GMT');
  if (options.secure) attributes.push('Secure');
  if (options.httpOnly) attributes.push('HttpOnly');
  attributes.push(`SameSite=${options.sameSite}`);
  const header = attributes.join('; ');
  if (Buffer.byteLength(header, 'utf8') > MAX_COOKIE_BYTES) {
    throw new TypeError(`cookie ${name}: longer than ${MAX_COOKIE_BYTES} bytes; browsers drop it`);
  }
  return header;
}

/**
 * A `Set-Cookie` header value that deletes cookie `name` (empty value,
 * `Max-Age=0`, an Expires in the past). The path (and Secure, for prefixed
 * names) must be the ones it was set with, or the browser keeps it.
 */
export function clearCookie(name: string, options: Omit<CookieOptions, 'maxAgeSeconds'>): string {
  return serializeCookie(name, '', { ...options, maxAgeSeconds: 0 });
}

function decodeValue(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function checkName(name: string): void {
  if (typeof name !== 'string' || !TOKEN.test(name)) {
    throw new TypeError(`cookie name ${JSON.stringify(name)} is not an RFC 7230 token`);
  }
}

function checkOptions(name: string, options: CookieOptions): void {
  if (typeof options.path !== 'string' || !PATH_VALUE.test(options.path)) {
    throw new TypeError(
      `cookie ${name}: path must start with '/' and hold no ';' or control characters`,
    );
  }
  const maxAge = options.maxAgeSeconds;
  if (maxAge !== undefined && (!Number.isInteger(maxAge) || maxAge < 0)) {
    throw new TypeError(`cookie ${name}: maxAgeSeconds must be a non-negative integer`);
  }
  if (options.sameSite !== 'Lax' && options.sameSite !== 'Strict') {
    throw new TypeError(`cookie ${name}: sameSite must be 'Lax' or 'Strict'`);
  }
  // Browsers refuse prefixed cookies that break their prefix's rules (RFC 6265bis §4.1.3).
  if ((name.startsWith('__Host-') || name.startsWith('__Secure-')) && !options.secure) {
    throw new TypeError(`cookie ${name}: a __Host- or __Secure- cookie must be Secure`);
  }
  if (name.startsWith('__Host-') && options.path !== '/') {
    throw new TypeError(`cookie ${name}: a __Host- cookie must have Path=/`);
  }
}
