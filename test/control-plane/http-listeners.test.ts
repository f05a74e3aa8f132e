/**
 * What the listeners answer themselves, with statuses and bodies from the
 * error registry: a host not served on a port, and a failure a side let
 * escape (a McphostError keeps its code and status, hiding what the registry
 * hides; anything else is a 500 ERR_INTERNAL that says nothing of it).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { GENERIC_MESSAGE, McphostError } from '../../control-plane/errors.js';
import { TrustedProxies } from '../../control-plane/http/index.js';
import { startListeners, type Listeners } from '../../control-plane/http/http-listeners.js';
import { loopbackFetch } from '../support/loopback-fetch.js';
import { freePort } from '../support/loopback-server.js';

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
    baseDomain: 'localhost',
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
