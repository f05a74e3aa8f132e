/**
 * Which browser origins may call a hosted server's `/mcp` (MCP Streamable
 * HTTP: a server MUST validate `Origin`, against DNS rebinding and
 * cross-site calls). A request without `Origin` (any non-browser client) is
 * unaffected; one with an origin the server does not list in
 * `allowedOrigins` is refused (403). Allowed origins get CORS headers:
 * bearer tokens travel in `Authorization`, never in cookies, so credentials
 * mode is not enabled.
 */

export type OriginDecision =
  { kind: 'no-origin' } | { kind: 'allowed'; origin: string } | { kind: 'forbidden' };

/** Methods and request headers a browser client of `/mcp` needs. */
const ALLOWED_METHODS = 'GET, POST, DELETE';
const ALLOWED_HEADERS =
  'authorization, x-api-key, content-type, accept, mcp-session-id, mcp-protocol-version, last-event-id';
/** Response headers a browser client must read: the session, the auth challenge, the wait. */
const EXPOSED_HEADERS = 'mcp-session-id, mcp-protocol-version, www-authenticate, retry-after';
/** How long a browser may cache a preflight answer, in seconds. */
const PREFLIGHT_MAX_AGE_SECONDS = '600';

/** Checks a request's `Origin` header against a server's allowed origins. */
export function decideOrigin(
  header: string | string[] | undefined,
  allowedOrigins: readonly string[],
): OriginDecision {
  if (header === undefined) return { kind: 'no-origin' };
  // Several Origin headers, `null` (sandboxed frames, file:) or garbage: never allowed.
  if (typeof header !== 'string' || !URL.canParse(header)) return { kind: 'forbidden' };
  // Stored origins are in URL.origin form (records.ts), so compare that form.
  const origin = new URL(header).origin;
  return origin === header.toLowerCase() && allowedOrigins.includes(origin)
    ? { kind: 'allowed', origin }
    : { kind: 'forbidden' };
}

/** Headers of every `/mcp` response to an allowed origin. */
export function corsHeaders(origin: string): Record<string, string> {
  return {
    'access-control-allow-origin': origin,
    'access-control-expose-headers': EXPOSED_HEADERS,
  };
}

/** Headers of the answer to an allowed origin's preflight (`OPTIONS /mcp`). */
export function preflightHeaders(origin: string): Record<string, string> {
  return {
    'access-control-allow-origin': origin,
    'access-control-allow-methods': ALLOWED_METHODS,
    'access-control-allow-headers': ALLOWED_HEADERS,
    'access-control-max-age': PREFLIGHT_MAX_AGE_SECONDS,
  };
}
