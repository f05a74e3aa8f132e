/**
 * The listeners: one on PORT by default, serving both sides chosen by Host;
 * with ADMIN_PORT set, the admin side moves to its own listener and PORT
 * serves hosted servers only.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendJson } from './error-response.js';
import { createHostRouter } from './host-routing.js';

export interface ListenerOptions {
  port: number;
  adminPort?: number;
  host: string;
  baseDomain: string;
  hosted(req: IncomingMessage, res: ServerResponse, url: URL, subdomain: string): Promise<void>;
  admin(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void>;
  onError(error: unknown): void;
}

export interface Listeners {
  /** Bound public port (useful with port 0). */
  port: number;
  /** Bound admin port; equals `port` when the sides share a listener. */
  adminPort: number;
  close(): Promise<void>;
}

export async function startListeners(options: ListenerOptions): Promise<Listeners> {
  const route = createHostRouter(options.baseDomain);
  const split = options.adminPort !== undefined;

  const handle =
    (side: 'any' | 'hosted' | 'admin') => (req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? '/', 'http://request.invalid');
      const target = route(req.headers.host);
      let work: Promise<void>;
      if (target.side === 'hosted' && side !== 'admin')
        work = options.hosted(req, res, url, target.subdomain);
      else if (target.side === 'admin' && side !== 'hosted') work = options.admin(req, res, url);
      else {
        sendJson(res, 404, {
          error: { code: 'ERR_NOT_FOUND', message: 'nothing is served for this host on this port' },
        });
        return;
      }
      work.catch((error: unknown) => {
        options.onError(error);
        if (!res.headersSent)
          sendJson(res, 500, {
            error: { code: 'ERR_INTERNAL', message: 'internal error; see the control plane log' },
          });
        else res.destroy();
      });
    };

  const servers: Server[] = [];
  const listen = async (port: number, side: 'any' | 'hosted' | 'admin'): Promise<number> => {
    const server = createServer({ keepAliveTimeout: 65_000 }, handle(side));
    servers.push(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, options.host, () => resolve());
    });
    return (server.address() as AddressInfo).port;
  };

  const port = await listen(options.port, split ? 'hosted' : 'any');
  const adminPort = split ? await listen(options.adminPort!, 'admin') : port;
  return {
    port,
    adminPort,
    close: async () => {
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
