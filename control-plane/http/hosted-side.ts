/**
 * Requests for `{subdomain}.{BASE_DOMAIN}`: the hosted MCP server. Unknown
 * subdomain → 404; deactivated → 503; OAuth 2.0 mode → the protected-resource
 * metadata paths exist and every `/mcp` request needs a valid bearer token.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Caller } from '../invocation/tool-invoker.js';
import type { McpEndpoint } from '../mcp/mcp-endpoint.js';
import { sendJsonRpcError } from '../mcp/mcp-endpoint.js';
import type { ServerRecord } from '../store/records.js';
import { sendJson } from './error-response.js';
import { setRoute } from './request-context.js';

/** The RFC 6750 error of a refusal, or `missing_token` when none was sent. */
function refusalReason(req: IncomingMessage, body: unknown): string {
  if (req.headers.authorization === undefined) return 'missing_token';
  const error = (body as { error?: unknown } | null)?.error;
  return typeof error === 'string' ? error : 'refused';
}

/** The outcome of checking a request's credentials for one hosted server. */
export type Authentication =
  | { ok: true; caller: Caller }
  | { ok: false; status: number; headers: Record<string, string>; body: unknown };

export interface HostedSideOptions {
  /** The server of a subdomain, from the in-memory cache. */
  server(subdomain: string): ServerRecord | undefined;
  /** Checks credentials of a request for a server (OAuth 2.0 mode), or admits it (mode none). */
  authenticate(server: ServerRecord, req: IncomingMessage, url: URL): Promise<Authentication>;
  /** RFC 9728 metadata of a server in OAuth 2.0 mode. */
  protectedResourceMetadata(server: ServerRecord): object;
  endpoint: McpEndpoint;
  /** Counts a refused request by reason (e.g. invalid_token). */
  onAuthFailure(reason: string): void;
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
      sendJson(res, 404, {
        error: { code: 'ERR_NOT_FOUND', message: `no server at ${subdomain}` },
      });
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
      sendJson(res, 404, {
        error: { code: 'ERR_NOT_FOUND', message: `no such path: ${url.pathname}` },
      });
      return;
    }
    if (!server.active) {
      sendJsonRpcError(res, 503, -32000, `server "${subdomain}" is deactivated`);
      return;
    }
    const authentication = await options.authenticate(server, req, url);
    if (!authentication.ok) {
      options.onAuthFailure(refusalReason(req, authentication.body));
      req.resume();
      sendJson(res, authentication.status, authentication.body, authentication.headers);
      return;
    }
    await options.endpoint.handle(req, res, subdomain, authentication.caller);
  };
}
