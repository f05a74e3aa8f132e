/**
 * Requests for `{subdomain}.{BASE_DOMAIN}`: the hosted MCP server. Unknown
 * subdomain → 404; deactivated → 503; OAuth 2.0 mode → the protected-resource
 * metadata paths exist and every `/mcp` request needs a valid bearer token;
 * API-key mode → every `/mcp` request needs one of the server's keys (no
 * metadata paths: there is no authorization server to discover).
 * On `/mcp`, in order: the browser `Origin` (403 unless allowed; preflights
 * answered here), authentication, the caller's request rate (429), then the
 * MCP endpoint. The Host header is never echoed: it is the caller's text.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { McphostError } from '../errors.js';
import type { Authentication } from '../http/index.js';
import { clientAddressFromHeaders, sendError, sendJson, sendJsonRpcError } from '../http/index.js';
import { corsHeaders, decideOrigin, preflightHeaders } from '../http/index.js';
import { setRoute } from '../http/index.js';
import type { RateLimit, ServerRecord } from '../store/index.js';
import { quotaKeyOf } from './caller-identity.js';
import type { McpEndpoint } from './mcp-endpoint.js';
import type { RateDecision } from './rate-limiter.js';

export interface HostedSideOptions {
  /** The server of a subdomain, from the in-memory cache. */
  server(subdomain: string): ServerRecord | undefined;
  /** Checks credentials of a request for a server (OAuth 2.0 or API-key mode), or admits it (mode none). */
  authenticate(server: ServerRecord, req: IncomingMessage, url: URL): Promise<Authentication>;
  /** RFC 9728 metadata of a server in OAuth 2.0 mode. */
  protectedResourceMetadata(server: ServerRecord): object;
  endpoint: McpEndpoint;
  /** Counts a refused request by reason (e.g. invalid_token). */
  onAuthFailure(reason: string): void;
  /** Limit of servers without their own `rateLimit`; null = unlimited. */
  defaultRateLimit: RateLimit | null;
  /** Takes requests of a caller from its bucket (see RateLimiter.take). */
  takeRate(
    subdomain: string,
    quotaKey: string,
    limit: RateLimit,
    count?: number,
    alreadyTaken?: number,
  ): RateDecision;
  /** Counts a request refused on `/mcp` before the endpoint (`reason`: origin, rate). */
  onRefused(subdomain: string, reason: 'origin' | 'rate'): void;
}

const METADATA_PATHS = new Set([
  '/.well-known/oauth-protected-resource',
  '/.well-known/oauth-protected-resource/mcp',
]);

export function createHostedSide(options: HostedSideOptions) {
  return async (
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    subdomain: string,
  ): Promise<void> => {
    const server = options.server(subdomain);
    setRoute(
      req,
      METADATA_PATHS.has(url.pathname)
        ? 'protected-resource-metadata'
        : url.pathname === '/mcp'
          ? '/mcp'
          : 'unmatched',
    );
    if (!server) {
      // The subdomain is the caller's own text (`evil@…`, markup): never echoed.
      sendError(res, new McphostError('ERR_NOT_FOUND', 'no server at this address'));
      return;
    }
    if (
      METADATA_PATHS.has(url.pathname) &&
      server.securityMode === 'oauth2' &&
      req.method === 'GET'
    ) {
      // Public discovery document: any origin may read it.
      sendJson(res, 200, options.protectedResourceMetadata(server), {
        'access-control-allow-origin': '*',
      });
      return;
    }
    if (url.pathname !== '/mcp') {
      sendError(res, new McphostError('ERR_NOT_FOUND', `no such path: ${url.pathname}`));
      return;
    }
    // Responses differ by Origin: caches must key on it.
    res.setHeader('vary', 'Origin');
    const origin = decideOrigin(req.headers.origin, server.allowedOrigins);
    if (origin.kind === 'forbidden') {
      options.onRefused(subdomain, 'origin');
      req.resume();
      sendJsonRpcError(
        res,
        new McphostError('ERR_FORBIDDEN', 'Forbidden: this origin may not call this server'),
      );
      return;
    }
    if (req.method === 'OPTIONS') {
      req.resume();
      res.writeHead(
        204,
        origin.kind === 'allowed'
          ? preflightHeaders(origin.origin)
          : { allow: 'GET, POST, DELETE, OPTIONS' },
      );
      res.end();
      return;
    }
    if (origin.kind === 'allowed') {
      // Set before anything answers, so 401 challenges and errors are readable too.
      for (const [name, value] of Object.entries(corsHeaders(origin.origin))) {
        res.setHeader(name, value);
      }
    }
    if (!server.active) {
      sendJsonRpcError(
        res,
        new McphostError('ERR_SERVER_INACTIVE', `server "${subdomain}" is deactivated`),
      );
      return;
    }
    const authentication = await options.authenticate(server, req, url);
    if (!authentication.ok) {
      options.onAuthFailure(authentication.reason);
      req.resume();
      sendJson(res, authentication.status, authentication.body, authentication.headers);
      return;
    }
    const caller = authentication.caller;
    // The client behind TRUSTED_PROXIES, else the socket's peer (the listener set it).
    const quotaKey = quotaKeyOf(caller, clientAddressFromHeaders(req.headers));
    const limit = server.rateLimit ?? options.defaultRateLimit;
    const decision: RateDecision = limit
      ? options.takeRate(subdomain, quotaKey, limit)
      : { allowed: true };
    if (limit && !decision.allowed) {
      options.onRefused(subdomain, 'rate');
      req.resume();
      sendJsonRpcError(res, rateLimited(limit, decision.retryAfterSeconds), {
        'retry-after': String(decision.retryAfterSeconds),
      });
      return;
    }
    // One token was taken for the POST; a batch pays for each further request it holds,
    // before any of them is answered.
    const chargeBatch = (requests: number) => {
      if (!limit || requests <= 1) return;
      const more = options.takeRate(subdomain, quotaKey, limit, requests - 1, 1);
      if (!more.allowed) {
        options.onRefused(subdomain, 'rate');
        throw rateLimited(limit, more.retryAfterSeconds);
      }
    };
    await options.endpoint.handle(req, res, subdomain, caller, quotaKey, chargeBatch);
  };
}

function rateLimited(limit: RateLimit, retryAfterSeconds: number): McphostError {
  return new McphostError(
    'ERR_RATE_LIMITED',
    `Too many requests: this caller may make ${limit.perMinute} requests a minute to this server; retry after ${retryAfterSeconds} s`,
    { details: { retryAfterSeconds } },
  );
}
