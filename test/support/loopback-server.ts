/**
 * A real HTTP server on a loopback address and a port the system picks, for
 * tests that need something to talk to: webhooks, doctored metadata
 * documents, stalls, servers the egress policy must refuse. One helper for
 * every such test; `answerRoutes` turns a table of fixed answers into a handler.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';

/** Answers one request; `body` is the whole request body as UTF-8 text. A returned promise is awaited. */
export type LoopbackHandler = (
  request: IncomingMessage,
  response: ServerResponse,
  body: string,
) => unknown;

/** A running loopback server. */
export interface LoopbackServer {
  /** `http://<host>:<port>`, no trailing slash (IPv6 hosts in brackets). */
  url: string;
  port: number;
  /** Request targets (path and query) received so far, in arrival order. */
  requests: string[];
  /** Ends open connections and stops listening; resolves once closed. */
  close(): Promise<void>;
}

/** Options of {@link startLoopbackServer}. */
export interface LoopbackServerOptions {
  /** Address to listen on; default `127.0.0.1`. */
  host?: string;
}

/** Starts `handler` on `host` and a free port; rejects when the address cannot be bound. */
export async function startLoopbackServer(
  handler: LoopbackHandler,
  options: LoopbackServerOptions = {},
): Promise<LoopbackServer> {
  const host = options.host ?? '127.0.0.1';
  const requests: string[] = [];
  const server = createServer((request, response) => {
    // Recorded on arrival, before the body: a test may wait for a request it holds.
    requests.push(request.url ?? '');
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void Promise.resolve(
        handler(request, response, Buffer.concat(chunks).toString('utf8')),
      ).catch((error: unknown) => response.writeHead(500).end(String(error)));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** How one fixed route answers: JSON, text of a content type, or never (`stall`). */
export type Route =
  | { json: unknown; status?: number }
  | { text: string; contentType: string; status?: number }
  | { stall: true };

/**
 * A handler answering `routes` by path (the query is ignored); any other path
 * is 404. Routes are looked up per request, so a test may add some later.
 */
export function answerRoutes(routes: Record<string, Route>): LoopbackHandler {
  return (request, response) => {
    const route = routes[new URL(request.url ?? '/', 'http://x').pathname];
    if (route === undefined) return void response.writeHead(404).end();
    if ('stall' in route) return;
    if ('json' in route) {
      response
        .writeHead(route.status ?? 200, { 'content-type': 'application/json' })
        .end(JSON.stringify(route.json));
      return;
    }
    response.writeHead(route.status ?? 200, { 'content-type': route.contentType }).end(route.text);
  };
}

/** A free port on 127.0.0.1: bound, then released, so nothing listens on it now. */
export async function freePort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** `http://127.0.0.1:<port>` where nothing listens: connections are refused. */
export async function closedPortUrl(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}`;
}
