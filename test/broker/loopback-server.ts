/** A real HTTP server on a loopback address and a free port, for broker tests. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface LoopbackServer {
  url: string;
  port: number;
  /** Paths requested so far, in order. */
  requests: string[];
  close(): Promise<void>;
}

/** Starts `handler` on `host` (default 127.0.0.1), port 0. */
export async function startLoopbackServer(
  handler: (request: IncomingMessage, response: ServerResponse, body: string) => void,
  host = '127.0.0.1',
): Promise<LoopbackServer> {
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((request, response) => {
    requests.push(request.url ?? '');
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => handler(request, response, Buffer.concat(chunks).toString('utf8')));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
