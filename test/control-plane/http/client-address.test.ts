/**
 * Who the client is behind a reverse proxy: X-Forwarded-For counts only
 * when the socket's peer is one of TRUSTED_PROXIES, read from the right
 * past trusted hops; the answer reaches the invocation log and the per-client
 * rate limit, and a client cannot set it itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import {
  assignClientAddress,
  clientAddressFromHeaders,
  clientAddressOf,
  TrustedProxies,
} from '../../../control-plane/http/client-address.js';
import { loopbackFetch } from '../../support/loopback-fetch.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { INITIALIZE_BODY } from '../../support/mcp-requests.js';

describe('clientAddressOf', () => {
  const proxies = TrustedProxies.parse(['10.0.0.0/8', '192.168.1.1', 'fd00::/8']);

  it('believes X-Forwarded-For only from a trusted peer, read from the right', () => {
    expect(clientAddressOf('203.0.113.9', '198.51.100.1', proxies)).toBe('203.0.113.9');
    expect(clientAddressOf('10.1.2.3', '198.51.100.1', proxies)).toBe('198.51.100.1');
    // What the client wrote on the left is its own claim: the first untrusted hop from the right wins.
    expect(clientAddressOf('10.1.2.3', '1.1.1.1, 198.51.100.1, 10.9.9.9', proxies)).toBe(
      '198.51.100.1',
    );
    expect(clientAddressOf('10.1.2.3', ['1.1.1.1', '198.51.100.2'], proxies)).toBe('198.51.100.2');
    expect(clientAddressOf('10.1.2.3', '10.2.2.2, 192.168.1.1', proxies)).toBe('10.2.2.2');
    expect(clientAddressOf('10.1.2.3', undefined, proxies)).toBe('10.1.2.3');
    expect(clientAddressOf('10.1.2.3', 'not-an-ip', proxies)).toBe('10.1.2.3');
    expect(clientAddressOf('::ffff:10.1.2.3', '198.51.100.3', proxies)).toBe('198.51.100.3');
    expect(clientAddressOf('fd00::1', '2001:db8::1', proxies)).toBe('2001:db8::1');
    expect(clientAddressOf('10.1.2.3', '1.1.1.1', TrustedProxies.parse([]))).toBe('10.1.2.3');
  });

  it('replaces a client-sent internal header, whatever its casing or repetition', async () => {
    const server = createServer((req, res) => {
      assignClientAddress(req, TrustedProxies.parse([]));
      res.end(String(clientAddressFromHeaders(req.headers)));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const body = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1', () =>
        socket.end(
          'GET / HTTP/1.1\r\nHost: x\r\nX-MCPHOST-Client-Address: 6.6.6.6\r\n' +
            'x-mcphost-client-address: 7.7.7.7\r\nX-Forwarded-For: 8.8.8.8\r\nConnection: close\r\n\r\n',
        ),
      );
      let data = '';
      socket.on('data', (chunk) => (data += chunk));
      socket.on('end', () => resolve(data.split('\r\n\r\n')[1]!));
    });
    server.close();
    expect(body).toBe('127.0.0.1');
  });

  it('refuses a TRUSTED_PROXIES entry that is no address', () => {
    expect(() => TrustedProxies.parse(['proxy.example'])).toThrow(/not an IP address or CIDR/);
  });
});

describe('a control plane behind a trusted proxy', () => {
  let plane: TestControlPlane;

  beforeAll(async () => {
    plane = await startTestControlPlane({ TRUSTED_PROXIES: '127.0.0.1' });
    expect((await plane.admin('POST', '/api/servers', { subdomain: 'proxied' })).status).toBe(201);
    const limited = await plane.admin('PATCH', '/api/servers/proxied/settings', {
      rateLimit: { perMinute: 1, burst: 1 },
    });
    expect(limited.status).toBe(200);
    const saved = await plane.admin('PUT', '/api/servers/proxied/tools/hi', {
      description: 'hi',
      code: "return 'hi';",
    });
    expect(saved.status).toBe(201);
  }, 180_000);

  afterAll(async () => {
    await plane?.close();
  });

  it('logs the forwarded client of a call, not what a client claims in our header', async () => {
    const response = await loopbackFetch(`${plane.adminUrl}/api/servers/proxied/tools/hi/invoke`, {
      method: 'POST',
      headers: {
        authorization: 'Bearer test-admin-token-0123456789abcdef',
        'content-type': 'application/json',
        'x-forwarded-for': '6.6.6.6, 203.0.113.7',
        'x-mcphost-client-address': '9.9.9.9',
      },
      body: '{}',
    });
    expect(response.status).toBe(200);
    // GET /api/invocations flushes the log before it reads.
    await expect
      .poll(
        async () =>
          (await plane.admin('GET', '/api/invocations?server=proxied')).body.invocations[0]?.client,
        {
          timeout: 10_000,
        },
      )
      .toBe('203.0.113.7');
  });

  it('counts each forwarded client against its own rate limit', async () => {
    const initialize = (client: string) =>
      loopbackFetch(plane.mcpUrl('proxied'), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-forwarded-for': client,
        },
        body: INITIALIZE_BODY,
      });
    expect((await initialize('198.51.100.10')).status).toBe(200);
    expect((await initialize('198.51.100.10')).status).toBe(429);
    // Another client behind the same proxy has its own budget.
    expect((await initialize('198.51.100.11')).status).toBe(200);
  });
});
