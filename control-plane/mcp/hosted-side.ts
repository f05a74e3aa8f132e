/**
 * Requests for a hosted MCP server, at either of its addresses
 * (`{subdomain}.{BASE_DOMAIN}/mcp`, or `{PUBLIC_URL}/servers/{subdomain}/mcp`:
 * http/request-routing.ts decided which, and which endpoint). Both are served
 * alike; only the OAuth resource differs, by the address the request came by.
 * Unknown subdomain → 404; deactivated → 503; OAuth 2.0 mode → the protected-resource
 * metadata paths exist and every MCP request needs a valid bearer token;
 * API-key mode → every MCP request needs one of the server's keys (no
 * metadata paths: there is no authorization server to discover).
 * On the MCP endpoint, in order: the browser `Origin` (403 unless allowed; preflights
 * answered here), the client network's allowance of failed authentications
 * (429 before a credential costs anything: no key lookup, no signature
 * check; the answer held back a while, so a flood waiting for its answers
 * slows down), authentication, the caller's request rate (429), then the MCP
 * endpoint. The Host header is never echoed: it is the caller's text.
 *
 * The allowance is counted per client network *and server*: tenants behind
 * one NAT share a network, and wrong keys sent to one server (the sender's
 * own, say) must not lock another tenant's right key out of its server. A
 * much higher ceiling per network over all servers still brakes a flood
 * spread over many servers. Both are bounded in memory (AddressThrottle:
 * least recently seen forgotten first), whatever keys and servers are named.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { McphostError } from '../errors.js';
import type { AddressForm } from '../config.js';
import type { Authentication, HostedTarget } from '../http/index.js';
import {
  clientAddressFromHeaders,
  requestIdOf,
  clientNetworkOf,
  sendError,
  sendJson,
  sendJsonRpcError,
} from '../http/index.js';
import { corsHeaders, decideOrigin, preflightHeaders } from '../http/index.js';
import { setRoute } from '../http/index.js';
import type { RateLimit, ServerRecord } from '../store/index.js';
import { quotaKeyOf } from './caller-identity.js';
import type { McpEndpoint } from './mcp-endpoint.js';
import type { RateDecision } from './rate-limiter.js';
import { streamCredentialOf, type AdmittedScope } from './stream-credential.js';

/** Attempts allowed per key — a client network, or a network and a server (the accounts' AddressThrottle). */
export interface AttemptAllowance {
  /** Whether `key` may try now; counts nothing. */
  check(key: string): RateDecision;
  /** Counts one attempt (here: a failed authentication) of `key`. */
  take(key: string): RateDecision;
}

export interface HostedSideOptions {
  /** The server of a subdomain, from the in-memory cache. */
  server(subdomain: string): ServerRecord | undefined;
  /**
   * Checks credentials of a request for a server (OAuth 2.0 or API-key mode) that came by
   * its `form` address, or admits it (mode none).
   */
  authenticate(
    server: ServerRecord,
    req: IncomingMessage,
    url: URL,
    form: AddressForm,
  ): Promise<Authentication>;
  /** RFC 9728 metadata of a server in OAuth 2.0 mode, for its `form` address. */
  protectedResourceMetadata(server: ServerRecord, form: AddressForm): object;
  endpoint: McpEndpoint;
  /** Counts a refused request by reason (e.g. invalid_token, throttled) and server. */
  onAuthFailure(reason: string, subdomain: string): void;
  /**
   * Failed authentications per client network at one server
   * (MCP_AUTH_FAILURES_PER_MINUTE); null = no brake at all, the ceiling included.
   */
  authFailures: AttemptAllowance | null;
  /**
   * Failed authentications per client network over all servers
   * (MCP_AUTH_FAILURES_PER_NETWORK_PER_MINUTE), while `authFailures` brakes;
   * null or absent = no ceiling.
   */
  authFailureCeiling?: AttemptAllowance | null;
  /** Sends a throttled network's refusal (`answer`) on `res`, held back a while (HeldRefusals). */
  holdRefusal(res: ServerResponse, answer: () => void): void;
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

/** The route metrics and access lines name, by endpoint and address form. */
const ROUTE_NAMES = {
  host: { mcp: '/mcp', metadata: 'protected-resource-metadata', unknown: 'unmatched' },
  path: {
    mcp: '/servers/:sub/mcp',
    metadata: 'protected-resource-metadata',
    unknown: 'unmatched',
  },
} as const;

export function createHostedSide(options: HostedSideOptions) {
  return async (
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    target: HostedTarget,
  ): Promise<void> => {
    const { subdomain, form, endpoint } = target;
    const server = options.server(subdomain);
    setRoute(req, ROUTE_NAMES[form][endpoint]);
    if (!server) {
      // The subdomain is the caller's own text (`evil@…`, markup): never echoed.
      sendError(res, new McphostError('ERR_NOT_FOUND', 'no server at this address'));
      return;
    }
    if (endpoint === 'metadata' && server.securityMode === 'oauth2' && req.method === 'GET') {
      // Public discovery document: any origin may read it.
      sendJson(res, 200, options.protectedResourceMetadata(server, form), {
        'access-control-allow-origin': '*',
      });
      return;
    }
    if (endpoint !== 'mcp') {
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
    // The client behind TRUSTED_PROXIES, else the socket's peer (the listener set it).
    const clientAddress = clientAddressFromHeaders(req.headers);
    const network = clientNetworkOf(clientAddress);
    const brakes = server.securityMode === 'none' ? [] : failureBrakes(options, network, subdomain);
    const allowance = brakes
      .map(({ brake, key }) => brake.check(key))
      .find((decision) => !decision.allowed);
    if (allowance !== undefined && !allowance.allowed) {
      // Refused before the credential is looked at: a flood of made-up ones costs two map reads each.
      options.onAuthFailure('throttled', subdomain);
      req.resume();
      const refusal = authThrottled(allowance.retryAfterSeconds);
      options.holdRefusal(res, () =>
        sendJsonRpcError(res, refusal, { 'retry-after': String(allowance.retryAfterSeconds) }),
      );
      return;
    }
    const authentication = await options.authenticate(server, req, url, form);
    if (!authentication.ok) {
      // A credential sent and refused spends the network's allowances; none sent (a
      // client discovering OAuth) or one that could not be checked now (503) does not.
      if (isCredentialRefusal(authentication.reason)) {
        for (const { brake, key } of brakes) brake.take(key);
      }
      options.onAuthFailure(authentication.reason, subdomain);
      req.resume();
      sendJson(res, authentication.status, authentication.body, authentication.headers);
      return;
    }
    const caller = authentication.caller;
    const quotaKey = quotaKeyOf(caller, clientAddress);
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
    const scope: AdmittedScope = {
      caller,
      quotaKey,
      requestId: requestIdOf(req),
      clientAddress,
      // What ends the streams and sessions this request opens (stream-credential.ts).
      credential: streamCredentialOf(authentication),
    };
    await options.endpoint.handle(req, res, subdomain, scope, chargeBatch);
  };
}

/** The allowances a failed authentication of `network` at `subdomain` spends, each with its key. */
function failureBrakes(
  options: HostedSideOptions,
  network: string,
  subdomain: string,
): { brake: AttemptAllowance; key: string }[] {
  // The ceiling is part of the brake: an operator who switched the brake off
  // (MCP_AUTH_FAILURES_PER_MINUTE=0) gets none.
  if (!options.authFailures) return [];
  // A JSON pair: no subdomain or network text can make two pairs one key.
  const brakes = [{ brake: options.authFailures, key: JSON.stringify([network, subdomain]) }];
  if (options.authFailureCeiling) brakes.push({ brake: options.authFailureCeiling, key: network });
  return brakes;
}

/** True for a refusal of a credential that was sent (not a missing one, nor a 503). */
function isCredentialRefusal(reason: string): boolean {
  return reason !== 'missing_token' && reason !== 'temporarily_unavailable';
}

function authThrottled(retryAfterSeconds: number): McphostError {
  return new McphostError(
    'ERR_RATE_LIMITED',
    `Too many failed authentications from this network; retry after ${retryAfterSeconds} s`,
    { details: { retryAfterSeconds } },
  );
}

function rateLimited(limit: RateLimit, retryAfterSeconds: number): McphostError {
  return new McphostError(
    'ERR_RATE_LIMITED',
    `Too many requests: this caller may make ${limit.perMinute} requests a minute to this server; retry after ${retryAfterSeconds} s`,
    { details: { retryAfterSeconds } },
  );
}
