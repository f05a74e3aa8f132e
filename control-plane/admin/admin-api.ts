/**
 * The admin side: the REST API behind the admin bearer token, the dashboard,
 * the unauthenticated health checks and OpenAPI document, and the Prometheus
 * metrics (admin token or the metrics token).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isMcphostError, McphostError } from '../errors.js';
import { sendError, sendJson } from '../http/index.js';
import { setRoute } from '../http/index.js';
import { Router } from '../http/index.js';
import type { AdminContext } from './admin-context.js';
import type { AdminToken } from './admin-token.js';
import { openApiDocument } from './openapi.js';
import { addServerRoutes } from './server-routes.js';
import { addToolRoutes } from './tool-routes.js';
import { addEntryRoutes } from './entry-routes.js';
import { addPoolRoutes } from './pool-routes.js';
import { addInvocationRoutes } from './invocation-routes.js';
import { addSecretRoutes } from './secret-routes.js';

export interface AdminApiOptions {
  context: AdminContext;
  token: AdminToken;
  /** A second token that may read /metrics only; undefined = admin token only. */
  metricsToken?: AdminToken;
  version: string;
  /** Readiness: resolves when the store and the sandbox answer. */
  readiness(): Promise<{ ready: boolean; checks: Record<string, string> }>;
  /** The Prometheus exposition. */
  metrics(): Promise<{ contentType: string; body: string }>;
  /** Counts a refused admin request. */
  onAuthFailure(reason: string): void;
  /** The dashboard's pages and assets; resolves true when it answered the request. */
  dashboard?: (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<boolean>;
}

type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>;

/** Builds the admin request handler. */
export function createAdminApi(options: AdminApiOptions): Handler {
  const api = new Router();
  addServerRoutes(api, options.context);
  addToolRoutes(api, options.context);
  addEntryRoutes(api, options.context);
  addSecretRoutes(api, options.context);
  addInvocationRoutes(api, options.context);
  addPoolRoutes(api, options.context);
  // The new token is answered once and never stored: only its hash is.
  api.add('POST', '/api/admin-token/rotate', async ({ res }) => {
    const token = await options.token.rotate(options.context.store);
    sendJson(res, 200, {
      token,
      note: 'the previous admin token no longer works; this one is shown only now',
    });
  });

  const checkToken = (req: IncomingMessage, token: AdminToken, alternative?: AdminToken) => {
    try {
      token.check(req);
    } catch (error) {
      if (alternative) {
        try {
          alternative.check(req);
          return;
        } catch {
          // fall through: report the admin token's refusal
        }
      }
      if (isMcphostError(error, 'ERR_UNAUTHORIZED')) {
        options.onAuthFailure(
          req.headers.authorization === undefined ? 'missing_token' : 'invalid_admin_token',
        );
      }
      throw error;
    }
  };

  const fixed: Record<string, Handler> = {
    '/healthz': async (_req, res) => sendJson(res, 200, { status: 'ok', version: options.version }),
    '/readyz': async (_req, res) => {
      const readiness = await options.readiness();
      sendJson(res, readiness.ready ? 200 : 503, readiness);
    },
    '/api/openapi.json': async (_req, res) => sendJson(res, 200, openApiDocument(options.version)),
    '/metrics': async (req, res) => {
      checkToken(req, options.token, options.metricsToken);
      const { contentType, body } = await options.metrics();
      res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' }).end(body);
    },
  };

  return async (req, res, url) => {
    try {
      const fixedHandler = req.method === 'GET' ? fixed[url.pathname] : undefined;
      if (fixedHandler) {
        setRoute(req, url.pathname);
        await fixedHandler(req, res, url);
        return;
      }
      if (!url.pathname.startsWith('/api/') && options.dashboard) {
        setRoute(req, 'dashboard');
        if (await options.dashboard(req, res, url)) return;
      }
      const match = api.match(req.method ?? 'GET', url.pathname);
      if (match.kind === 'not-found') {
        setRoute(req, 'unmatched');
        throw new McphostError('ERR_NOT_FOUND', `no such endpoint: ${req.method} ${url.pathname}`);
      }
      checkToken(req, options.token);
      if (match.kind === 'method-not-allowed') {
        sendError(
          res,
          new McphostError(
            'ERR_METHOD_NOT_ALLOWED',
            `${req.method} is not allowed on ${url.pathname}`,
          ),
          { allow: match.allowed.join(', ') },
        );
        return;
      }
      setRoute(req, `${req.method} ${match.pattern}`);
      await match.handler({ req, res, url, params: match.params });
    } catch (error) {
      if (!res.headersSent) sendError(res, error);
      else res.destroy();
    }
  };
}
