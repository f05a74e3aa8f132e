/**
 * A tiny HTTP server on 127.0.0.1 (port 0) answering fixed routes, for
 * doctored metadata documents, non-JSON answers, stalls and attacker JWKS.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How one route answers; `stall` never answers. */
export type Route =
  | { json: unknown; status?: number }
  | { text: string; contentType: string; status?: number }
  | { stall: true };

/** A running loopback server; `hits` counts requests per path. */
export interface LoopbackServer {
  origin: string;
  hits: Map<string, number>;
  close(): Promise<void>;
}

/** Serves `routes` (path → answer); any other path is 404. */
export async function startLoopbackServer(routes: Record<string, Route>): Promise<LoopbackServer> {
  const hits = new Map<string, number>();
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const route = routes[path];
    if (route === undefined) return void res.writeHead(404).end();
    answer(res, route);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback URL nothing listens on (a port just released). */
export async function closedPortOrigin(): Promise<string> {
  const server = await startLoopbackServer({});
  await server.close();
  return server.origin;
}

function answer(res: ServerResponse, route: Route): void {
  if ('stall' in route) return;
  if ('json' in route) {
    res
      .writeHead(route.status ?? 200, { 'content-type': 'application/json' })
      .end(JSON.stringify(route.json));
    return;
  }
  res.writeHead(route.status ?? 200, { 'content-type': route.contentType }).end(route.text);
}
