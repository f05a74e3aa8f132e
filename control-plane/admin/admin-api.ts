/**
 * The admin side: the REST API behind the admin bearer token, plus the
 * unauthenticated health check and the OpenAPI document.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendError, sendJson } from '../http/error-response.js';
import { Router } from '../http/router.js';
import type { AdminContext } from './admin-context.js';
import type { AdminToken } from './admin-token.js';
import { openApiDocument } from './openapi.js';
import { addServerRoutes } from './server-routes.js';
import { addToolRoutes } from './tool-routes.js';
import { addOperationsRoutes, addSecretRoutes } from './secret-and-log-routes.js';

export interface AdminApiOptions {
  context: AdminContext;
  token: AdminToken;
  version: string;
  /** Readiness: resolves when the store and the sandbox answer. */
  readiness(): Promise<{ ready: boolean; checks: Record<string, string> }>;
}

/** Builds the admin request handler. */
export function createAdminApi(
  options: AdminApiOptions,
): (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void> {
  const api = new Router();
  addServerRoutes(api, options.context);
  addToolRoutes(api, options.context);
  addSecretRoutes(api, options.context);
  addOperationsRoutes(api, options.context);

  return async (req, res, url) => {
    try {
      if (url.pathname === '/healthz' && req.method === 'GET') {
        sendJson(res, 200, { status: 'ok', version: options.version });
        return;
      }
      if (url.pathname === '/readyz' && req.method === 'GET') {
        const readiness = await options.readiness();
        sendJson(res, readiness.ready ? 200 : 503, readiness);
        return;
      }
      if (url.pathname === '/api/openapi.json' && req.method === 'GET') {
        sendJson(res, 200, openApiDocument(options.version));
        return;
      }
      const match = api.match(req.method ?? 'GET', url.pathname);
      if (match.kind === 'not-found') {
        sendJson(res, 404, {
          error: {
            code: 'ERR_NOT_FOUND',
            message: `no such endpoint: ${req.method} ${url.pathname}`,
          },
        });
        return;
      }
      options.token.check(req);
      if (match.kind === 'method-not-allowed') {
        sendJson(
          res,
          405,
          {
            error: {
              code: 'ERR_VALIDATION',
              message: `${req.method} is not allowed on ${url.pathname}`,
            },
          },
          { allow: match.allowed.join(', ') },
        );
        return;
      }
      await match.handler({ req, res, url, params: match.params });
    } catch (error) {
      if (!res.headersSent) sendError(res, error);
      else res.destroy();
    }
  };
}
