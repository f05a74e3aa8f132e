/**
 * What the listeners answer themselves, with statuses and bodies from the
 * error registry: a host not served on a port, and a failure a side let
 * escape (a McphostError keeps its code and status, hiding what the registry
 * hides; anything else is a 500 ERR_INTERNAL that says nothing of it).
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { GENERIC_MESSAGE, McphostError } from '../../../control-plane/errors.js';
import { TrustedProxies } from '../../../control-plane/http/index.js';
import { startListeners, type Listeners } from '../../../control-plane/http/http-listeners.js';
import { loopbackFetch } from '../../support/loopback-fetch.js';
import { freePort } from '../../support/loopback-server.js';

let listeners: Listeners;
const logged: unknown[] = [];
const thrown: Record<string, unknown> = {
  '/store': new McphostError('ERR_STORE', 'connect ECONNREFUSED 10.1.2.3:5432'),
  '/busy': new McphostError('ERR_NO_CAPACITY', 'no container within 10000 ms'),
  '/bug': new TypeError("Cannot read properties of undefined (reading 'x')"),
};

beforeAll(async () => {
  listeners = await startListeners({
    port: await freePort(),
    adminPort: await freePort(),
    host: '127.0.0.1',
    routing: { baseDomain: 'localhost', hostForm: true, pathForm: null },
    trustedProxies: TrustedProxies.parse([]),
    hosted: async (_req, _res, url) => {
      throw thrown[url.pathname];
    },
    admin: async (_req, res) => void res.writeHead(204).end(),
    onRequest: () => undefined,
    onError: (error) => logged.push(error),
  });
});
afterAll(() => listeners.close());

async function get(port: number, host: string, path = '/') {
  const response = await loopbackFetch(`http://${host}:${port}${path}`);
  return { status: response.status, body: await response.json() };
}

it('answers 404 ERR_NOT_FOUND for a host this port does not serve', async () => {
  expect(await get(listeners.adminPort, 'demo.localhost')).toEqual({
    status: 404,
    body: {
      error: { code: 'ERR_NOT_FOUND', message: 'nothing is served for this host on this port' },
    },
  });
});

it('answers an escaped failure from the registry, logging it', async () => {
  expect(await get(listeners.port, 'demo.localhost', '/busy')).toEqual({
    status: 503,
    body: { error: { code: 'ERR_NO_CAPACITY', message: 'no container within 10000 ms' } },
  });
  expect(await get(listeners.port, 'demo.localhost', '/store')).toEqual({
    status: 503,
    body: { error: { code: 'ERR_STORE', message: GENERIC_MESSAGE } },
  });
  expect(await get(listeners.port, 'demo.localhost', '/bug')).toEqual({
    status: 500,
    body: { error: { code: 'ERR_INTERNAL', message: GENERIC_MESSAGE } },
  });
  expect(logged).toEqual([thrown['/busy'], thrown['/store'], thrown['/bug']]);
});

/** One raw HTTP/1.1 request line (a target no fetch would send); the status line answered. */
async function rawStatusLine(port: number, requestLine: string): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  socket.write(`${requestLine}\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
  let text = '';
  for await (const chunk of socket) text += String(chunk);
  return text.split('\r\n')[0]!;
}

it('refuses a target that is not a plain path with 400, and keeps serving', async () => {
  // Each of these once threw out of the listener's callback and ended the process.
  for (const target of ['//a:99999/x', '//[', '//%', 'http://other/servers/beta/mcp', '/x/../y']) {
    expect(await rawStatusLine(listeners.port, `GET ${target} HTTP/1.1`), target).toBe(
      'HTTP/1.1 400 Bad Request',
    );
  }
  expect((await get(listeners.port, 'demo.localhost', '/busy')).status).toBe(503);
  expect(
    logged.filter((error) => error instanceof TypeError && /Invalid URL/.test(String(error))),
  ).toEqual([]);
});
