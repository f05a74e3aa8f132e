/**
 * A loopback reverse proxy that gives every request one fixed `Host` header.
 *
 * mcphost picks the hosted server from the `Host` header
 * (`{subdomain}.{BASE_DOMAIN}`, control-plane/http/request-routing.ts), but
 * `*.localhost` does not resolve on every machine and the conformance CLI
 * takes only a URL: it can set neither a Host header nor a resolver. So the
 * CLI is pointed at `http://127.0.0.1:{proxy}/mcp`, and this proxy forwards
 * each request unchanged but for `Host` — as a reverse proxy in front of
 * mcphost would — streaming both ways so SSE answers arrive as they are sent.
 * A client that goes away closes the upstream request too, so the control
 * plane sees the disconnect. Only loopback is ever contacted.
 */
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running proxy. */
export interface HostForwardingProxy {
  /** `http://127.0.0.1:{port}`, no trailing slash. */
  url: string;
  /** Ends open connections both ways and stops listening. */
  close(): Promise<void>;
}

/** Where the proxy sends requests: a loopback port and the `Host` header to give them. */
export interface ForwardingTarget {
  port: number;
  /** Value of the forwarded `Host` header, e.g. `conformance.localhost:8080`. */
  host: string;
}

export async function startHostForwardingProxy(
  target: ForwardingTarget,
): Promise<HostForwardingProxy> {
  const agent = new Agent({ keepAlive: true });
  const forward = (request: IncomingMessage, response: ServerResponse): void => {
    const upstream = httpRequest(
      {
        host: '127.0.0.1',
        port: target.port,
        method: request.method,
        path: request.url,
        headers: { ...request.headers, host: target.host },
        agent,
      },
      (upstreamResponse) => {
        response.writeHead(upstreamResponse.statusCode ?? 502, upstreamResponse.headers);
        upstreamResponse.pipe(response);
      },
    );
    upstream.on('error', () => {
      if (!response.headersSent) response.writeHead(502).end();
      else response.destroy();
    });
    response.on('close', () => {
      if (!response.writableFinished) upstream.destroy();
    });
    request.pipe(upstream);
  };

  const server = createServer(forward);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
}
