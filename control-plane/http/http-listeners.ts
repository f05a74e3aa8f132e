/**
 * The listeners: one on PORT by default, serving both sides (chosen by Host,
 * and by path for the path addresses: request-routing.ts); with ADMIN_PORT
 * set, the admin side moves to its own listener and PORT serves hosted
 * servers only. Every request gets a request id and is counted
 * by route and status. Draining (at shutdown) answers new requests with 503
 * while the ones already running finish.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { McphostError } from '../errors.js';
import { sendError } from './error-response.js';
import { listenError } from './listen-error.js';
import { createRequestRouter, type HostedTarget, type RoutingOptions } from './request-routing.js';
import { parseRequestTarget } from './request-target.js';
import { assignClientAddress, type TrustedProxies } from './client-address.js';
import { assignRequestId, requestIdOf, routeOf } from './request-context.js';

export interface ListenerOptions {
  port: number;
  adminPort?: number;
  host: string;
  /** How hosted servers are told from the admin side (BASE_DOMAIN, ROUTING, PUBLIC_URL). */
  routing: RoutingOptions;
  /** Reverse proxies whose X-Forwarded-For names the client. */
  trustedProxies: TrustedProxies;
  hosted(req: IncomingMessage, res: ServerResponse, url: URL, target: HostedTarget): Promise<void>;
  admin(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void>;
  /** Called once per answered request. */
  onRequest(
    side: 'hosted' | 'admin',
    route: string,
    status: number,
    seconds: number,
    requestId: string,
    client: string | undefined,
  ): void;
  onError(error: unknown, requestId: string): void;
}

export interface Listeners {
  /** Bound public port (useful with port 0). */
  port: number;
  /** Bound admin port; equals `port` when the sides share a listener. */
  adminPort: number;
  /** Stops taking new requests (503 with `Connection: close`), stops listening. */
  drain(): void;
  /** Closes every connection. */
  close(): Promise<void>;
}

export async function startListeners(options: ListenerOptions): Promise<Listeners> {
  const route = createRequestRouter(options.routing);
  // Path addresses live on PORT: on a separate admin listener `/servers/…` is the admin side's.
  const adminRoute = createRequestRouter({ ...options.routing, pathForm: null });
  const split = options.adminPort !== undefined;
  let draining = false;

  // Nothing a request sends may throw out of the listener's callback: an exception
  // there would end the process, every tenant's sessions and calls with it.
  const handle =
    (accepts: 'any' | 'hosted' | 'admin') => (req: IncomingMessage, res: ServerResponse) => {
      try {
        serve(accepts, req, res);
      } catch (error) {
        options.onError(error, requestIdOf(req));
        if (!res.headersSent) sendError(res, error);
        else res.destroy();
      }
    };

  const serve = (
    accepts: 'any' | 'hosted' | 'admin',
    req: IncomingMessage,
    res: ServerResponse,
  ) => {
    const started = performance.now();
    const requestId = assignRequestId(req);
    const client = assignClientAddress(req, options.trustedProxies);
    res.setHeader('x-request-id', requestId);
    const url = parseRequestTarget(req.url);
    const target =
      url === undefined
        ? undefined
        : (accepts === 'admin' ? adminRoute : route)(req.headers.host, url.pathname);
    const side = target?.side ?? (accepts === 'hosted' ? 'hosted' : 'admin');
    // 'close' also counts requests whose client went away (499, as nginx logs them).
    res.once('close', () =>
      options.onRequest(
        side,
        routeOf(req),
        res.writableFinished ? res.statusCode : 499,
        (performance.now() - started) / 1000,
        requestId,
        client,
      ),
    );
    if (draining) {
      req.resume();
      sendError(res, new McphostError('ERR_SHUTTING_DOWN', 'mcphost is shutting down'), {
        connection: 'close',
      });
      return;
    }
    if (url === undefined || target === undefined) {
      req.resume();
      sendError(
        res,
        new McphostError(
          'ERR_BAD_REQUEST',
          'the request target is not a plain path: send /path?query without //, \\ or dot segments',
        ),
      );
      return;
    }
    let work: Promise<void>;
    if (target.side === 'hosted' && accepts !== 'admin')
      work = options.hosted(req, res, url, target);
    else if (target.side === 'admin' && accepts !== 'hosted') work = options.admin(req, res, url);
    else {
      sendError(
        res,
        new McphostError('ERR_NOT_FOUND', 'nothing is served for this host on this port'),
      );
      return;
    }
    // A side answers its own failures; what escapes is logged and answered from the
    // registry (anything not a McphostError is a bug: 500, the detail in the log only).
    work.catch((error: unknown) => {
      options.onError(error, requestId);
      if (!res.headersSent) sendError(res, error);
      else res.destroy();
    });
  };

  const servers: Server[] = [];
  const listen = async (port: number, accepts: 'any' | 'hosted' | 'admin'): Promise<number> => {
    const server = createServer({ keepAliveTimeout: 65_000 }, handle(accepts));
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error) =>
        reject(listenError(error, port, options.host, accepts === 'admin' ? 'ADMIN_PORT' : 'PORT')),
      );
      server.listen(port, options.host, () => resolve());
    });
    servers.push(server);
    return (server.address() as AddressInfo).port;
  };

  const port = await listen(options.port, split ? 'hosted' : 'any');
  let adminPort = port;
  try {
    if (split) adminPort = await listen(options.adminPort!, 'admin');
  } catch (error) {
    // The start fails: the public listener bound a moment ago must not hold its port.
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    throw error;
  }
  return {
    port,
    adminPort,
    drain: () => {
      draining = true;
      for (const server of servers) {
        server.close();
        server.closeIdleConnections();
      }
    },
    close: async () => {
      draining = true;
      await Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((resolve) => {
              server.close(() => resolve());
              server.closeAllConnections();
            }),
        ),
      );
    },
  };
}
