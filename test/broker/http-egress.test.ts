import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { createSecureContext } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Broker, EgressPolicy, type HostLookup } from '../../control-plane/broker/index.js';
import { brokerWithDefaults } from './broker-with-defaults.js';
import { startLoopbackServer, type LoopbackServer } from '../support/loopback-server.js';
import { context, failure } from './call-helpers.js';

describe('sdk.http egress policy', () => {
  // Two servers the allow list can tell apart: 127.0.0.1 is allowed, 127.0.0.2 is not.
  let allowed: LoopbackServer;
  let refused: LoopbackServer;
  const brokers: Broker[] = [];
  const makeBroker = (allow: string[], lookup?: HostLookup): Broker => {
    const broker = brokerWithDefaults({
      egress: EgressPolicy.fromAllowList(allow),
      http: { totalTimeoutMs: 5_000 },
      lookup,
    });
    brokers.push(broker);
    return broker;
  };

  beforeAll(async () => {
    refused = await startLoopbackServer(
      (_request, response) => response.end('secret internal data'),
      { host: '127.0.0.2' },
    );
    allowed = await startLoopbackServer((request, response) => {
      const target = new URL(request.url ?? '/', 'http://x').searchParams.get('to');
      if (target !== null) response.writeHead(302, { location: target }).end();
      else response.writeHead(200, { connection: 'close' }).end('public');
    });
  });

  afterAll(async () => {
    await Promise.all(brokers.map((broker) => broker.close()));
    await Promise.all([allowed.close(), refused.close()]);
  });

  it.each([
    'http://169.254.169.254/latest/meta-data/',
    'http://2852039166/',
    'http://0xa9fea9fe/',
    'http://0251.0376.0251.0376/',
    'http://169.254.43518/',
    'http://169.16689662/',
    'http://[::ffff:169.254.169.254]/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://[::a9fe:a9fe]/',
    'http://[64:ff9b::a9fe:a9fe]/',
    'http://[fd00:ec2::254]/',
    'https://169.254.169.254/',
  ])('refuses the metadata service at %s at once, whatever is allowed', async (url) => {
    const broker = makeBroker(['0.0.0.0/0', '::/0']);
    // The policy's own refusal, before any connection (none could succeed on this machine).
    const error = await failure(broker.handle('http', { url }, context()));
    expect(error.code).toBe('ERR_EGRESS_DENIED');
    expect(error.message).toMatch(
      /^egress to .+ is not allowed: cloud metadata addresses are always refused$/,
    );
  });

  it('refuses a private address unless the allow list names it', async () => {
    const publicOnly = makeBroker([]);
    expect(await failure(publicOnly.handle('http', { url: allowed.url }, context()))).toMatchObject(
      {
        code: 'ERR_EGRESS_DENIED',
        // Tool traffic is told the calling server's own setting first, EGRESS_ALLOW second.
        message:
          'egress to 127.0.0.1 is not allowed: 127.0.0.1 is a loopback address. ' +
          `To let this server's tools reach it, add 127.0.0.1:${allowed.port} to "Private hosts its tools may reach" in its settings ` +
          '(dashboard: Settings, Sharing this host; API: egressAllow in PATCH /api/servers/tenant-a/settings), ' +
          'which takes effect at once; or, for every server, add it to EGRESS_ALLOW and restart mcphost.',
      },
    );
    const permitted = makeBroker(['127.0.0.1/32']);
    expect(await permitted.handle('http', { url: allowed.url }, context())).toMatchObject({
      status: 200,
      body: 'public',
    });
  });

  it('refuses a hostname that resolves to a refused address (system resolver: localhost)', async () => {
    const error = await failure(
      makeBroker([]).handle('http', { url: `http://localhost:${allowed.port}/` }, context()),
    );
    expect(error.code).toBe('ERR_EGRESS_DENIED');
    expect(error.message).toContain('egress to localhost (127.0.0.1) is not allowed');
  });

  it('allows a listed hostname at a private address but never at the metadata address', async () => {
    const lookup: HostLookup = async (name) => [
      { family: 4, address: name === 'evil.test' ? '169.254.169.254' : '127.0.0.1' },
    ];
    const broker = makeBroker(['localhost', 'evil.test'], lookup);
    expect(
      await broker.handle('http', { url: `http://localhost:${allowed.port}/` }, context()),
    ).toMatchObject({ status: 200 });
    const error = await failure(broker.handle('http', { url: 'http://evil.test/' }, context()));
    expect(error).toMatchObject({
      code: 'ERR_EGRESS_DENIED',
      message: expect.stringContaining('evil.test (169.254.169.254)'),
    });
  });

  it('refuses a redirect from an allowed host into a refused one, and the refused host sees nothing', async () => {
    const broker = makeBroker(['127.0.0.1/32']);
    for (const target of [
      `${refused.url}/`,
      'http://169.254.169.254/latest/',
      'http://[::ffff:127.0.0.2]:' + refused.port + '/',
    ]) {
      const error = await failure(
        broker.handle(
          'http',
          { url: `${allowed.url}/?to=${encodeURIComponent(target)}` },
          context(),
        ),
      );
      expect(error.code).toBe('ERR_EGRESS_DENIED');
    }
    expect(refused.requests).toEqual([]);
    // The same redirect is followed when the target is allowed too.
    const both = makeBroker(['127.0.0.1/32', '127.0.0.2/32']);
    const value = await both.handle(
      'http',
      { url: `${allowed.url}/?to=${encodeURIComponent(refused.url)}` },
      context(),
    );
    expect(value).toMatchObject({ status: 200, body: 'secret internal data' });
  });

  it('checks every new connection, so a DNS answer that rebinds to a refused address is caught', async () => {
    let answers = 0;
    const rebinding: HostLookup = async () => [
      { family: 4, address: answers++ === 0 ? '127.0.0.1' : '169.254.169.254' },
    ];
    const broker = makeBroker(['127.0.0.1/32'], rebinding);
    const url = `http://rebind.test:${allowed.port}/`;
    expect(await broker.handle('http', { url }, context())).toMatchObject({
      status: 200,
      body: 'public',
    });
    // The server closed the connection, so the second request dials (and resolves) again.
    const error = await failure(broker.handle('http', { url }, context()));
    expect(error).toMatchObject({
      code: 'ERR_EGRESS_DENIED',
      message: expect.stringContaining('rebind.test (169.254.169.254)'),
    });
  });

  it('refuses a name that resolves to several addresses when one of them is refused', async () => {
    const mixed: HostLookup = async () => [
      { family: 4, address: '127.0.0.1' },
      { family: 6, address: '::ffff:169.254.169.254' },
    ];
    const error = await failure(
      makeBroker(['127.0.0.1/32'], mixed).handle(
        'http',
        { url: `http://mixed.test:${allowed.port}/` },
        context(),
      ),
    );
    expect(error.code).toBe('ERR_EGRESS_DENIED');
  });

  it('reports a name that does not resolve as ERR_HTTP_FAILED naming it', async () => {
    // An injected resolver: no DNS traffic leaves this machine.
    const nowhere: HostLookup = async (name) => {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    };
    const broker = makeBroker([], nowhere);
    const error = await failure(
      broker.handle('http', { url: 'http://no-such-host.invalid/' }, context()),
    );
    expect(error).toMatchObject({
      code: 'ERR_HTTP_FAILED',
      message:
        'HTTP request to no-such-host.invalid failed: cannot resolve no-such-host.invalid (ENOTFOUND)',
    });
  });

  it('gives up on a resolver that never answers within the connect timeout', async () => {
    const hanging: HostLookup = () => new Promise(() => undefined);
    const broker = brokerWithDefaults({
      egress: EgressPolicy.fromAllowList([]),
      http: { connectTimeoutMs: 200 },
      lookup: hanging,
    });
    brokers.push(broker);
    // The resolver never answers: only the 200 ms connect timeout can end this call.
    expect(
      await failure(broker.handle('http', { url: 'http://slow.test/' }, context())),
    ).toMatchObject({
      code: 'ERR_HTTP_TIMEOUT',
      message: 'HTTP request to slow.test timed out after 200 ms resolving slow.test',
    });
  });

  it('reaches IPv6 loopback only when allowed', async (test) => {
    const server = await startLoopbackServer((_request, response) => response.end('v6'), {
      host: '::1',
    }).catch(() => undefined); // no IPv6 on this machine
    if (server === undefined) return test.skip();
    try {
      const url = `${server.url}/`;
      expect(await makeBroker(['::1']).handle('http', { url }, context())).toMatchObject({
        status: 200,
        body: 'v6',
      });
      expect(
        await failure(makeBroker(['127.0.0.1/32']).handle('http', { url }, context())),
      ).toMatchObject({
        code: 'ERR_EGRESS_DENIED',
        message: expect.stringContaining('egress to ::1 is not allowed'),
      });
    } finally {
      await server.close();
    }
  });

  it('dials the checked address for HTTPS but keeps the hostname for SNI and certificate checks', async () => {
    const key = readFileSync(new URL('./fixtures/localhost-key.pem', import.meta.url));
    const cert = readFileSync(new URL('./fixtures/localhost-cert.pem', import.meta.url));
    const serverNames: string[] = [];
    const context_ = createSecureContext({ key, cert });
    const server = createHttpsServer(
      {
        key,
        cert,
        SNICallback: (name, callback) => (serverNames.push(name), callback(null, context_)),
      },
      (_request, response) => response.end('tls'),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `https://localhost:${(server.address() as AddressInfo).port}/`;
      const error = await failure(makeBroker(['localhost']).handle('http', { url }, context()));
      // The self-signed certificate is (rightly) not trusted; the handshake happened with SNI "localhost".
      expect(error.code).toBe('ERR_HTTP_FAILED');
      expect(error.message).toMatch(
        /^HTTP request to localhost:\d+ failed: .*self-signed certificate/,
      );
      expect(serverNames).toContain('localhost');
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
