/**
 * The request target as this service reads it, or undefined when it must be
 * refused (400). Only origin-form (`/path?query`) in normal form is taken:
 * - A target Node's URL parser would read differently from a reverse proxy in
 *   front of us is refused rather than guessed at: `//host/…` (a URL parser
 *   reads a host, nginx merges the slashes), `\` (a separator to a URL parser,
 *   a character to nginx), and dot segments raw or escaped (`/a/../b`,
 *   `/a/%2e%2e/b`, which a parser resolves and a proxy's path rules may not).
 *   Otherwise a path rule at the proxy (a `deny` on `/servers/beta/`, an
 *   `allow` list on `/api/`) could be walked around.
 * - Absolute-form (`http://host/path`) is what clients send to a forward
 *   proxy, never to an origin server: refused, so the Host header alone names
 *   the host. `*` (OPTIONS to the server as a whole) is refused too.
 * Nothing here throws: a target that does not parse is refused like the rest.
 */

/** A fixed origin for parsing paths: only `pathname` and `search` are ever read. */
const BASE = 'http://request.invalid';

export function parseRequestTarget(target: string | undefined): URL | undefined {
  if (target === undefined || !target.startsWith('/') || target.startsWith('//')) return undefined;
  if (target.includes('\\')) return undefined;
  let url: URL;
  try {
    url = new URL(`${BASE}${target}`);
  } catch {
    return undefined;
  }
  const queryAt = target.indexOf('?');
  const rawPath = queryAt === -1 ? target : target.slice(0, queryAt);
  // The parser resolves dot segments and escapes what a path may not hold raw:
  // a path it changed was not in normal form.
  if (url.pathname !== rawPath || /(^|\/)(\.|%2e){1,2}(\/|$)/i.test(rawPath)) return undefined;
  return url;
}
