/**
 * Egress as a tenant sees it, through real connections to loopback and to
 * this machine's own interface address only: the host's own address is
 * refused (in every spelling), a server's `egressAllow` opens a private
 * destination for that server alone (sdk.http and sdk.db), and one server
 * holding every connection to a slow origin does not delay another server.
 */
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Broker, EgressPolicy, type HostLookup } from '../../control-plane/broker/index.js';
import { brokerWithDefaults } from './broker-with-defaults.js';
import { context, failure } from './call-helpers.js';
import { startLoopbackServer, type LoopbackServer } from '../support/loopback-server.js';
import { testConnection } from './database-targets.js';

/** This machine's first non-loopback IPv4 address (the test machine has one). */
function ownIpv4(): string {
  for (const list of Object.values(networkInterfaces())) {
    for (const entry of list ?? [])
      if (entry.family === 'IPv4' && !entry.internal) return entry.address;
  }
  throw new Error('this machine has no non-loopback IPv4 address');
}

const brokers: Broker[] = [];
function makeBroker(allow: string[], lookup?: HostLookup, connections?: number): Broker {
  const broker = brokerWithDefaults({
    egress: EgressPolicy.fromAllowList(allow),
    http: {
      totalTimeoutMs: 10_000,
      ...(connections === undefined ? {} : { connectionsPerServerOrigin: connections }),
    },
    ...(lookup === undefined ? {} : { lookup }),
  });
  brokers.push(broker);
  return broker;
}

afterAll(async () => {
  await Promise.all(brokers.map((broker) => broker.close()));
});

describe("egress into this host's own address", () => {
  const ip = ownIpv4();
  let wildcard: LoopbackServer; // bound to 0.0.0.0: answers on the interface address too

  beforeAll(async () => {
    wildcard = await startLoopbackServer((_request, response) => response.end('host service'), {
      host: '0.0.0.0',
    });
  });
  afterAll(() => wildcard.close());

  it.each([
    ['the interface address', (port: number) => `http://${ip}:${port}/healthz`],
    ['its IPv4-mapped IPv6 form', (port: number) => `http://[::ffff:${ip}]:${port}/healthz`],
    ['a hostname resolving to it', (port: number) => `http://host-alias.test:${port}/healthz`],
  ])('refuses %s without connecting', async (_label, url) => {
    const lookup: HostLookup = async () => [{ family: 4, address: ip }];
    const broker = makeBroker([], lookup);
    const error = await failure(broker.handle('http', { url: url(wildcard.port) }, context()));
    expect(error.code).toBe('ERR_EGRESS_DENIED');
    expect(error.message).toMatch(
      new RegExp(
        `${ip.replaceAll('.', '\\.')} is .*; or, for every server, add it to EGRESS_ALLOW and restart mcphost\\.$`,
      ),
    );
    expect(wildcard.requests).toEqual([]);
  });

  it('refuses sdk.db to the interface address by policy, not by a refused connection', async () => {
    const broker = makeBroker([]);
    const connection = { ...testConnection('pg'), host: ip };
    const error = await failure(
      broker.handle('db.query', { type: 'pg', connection, sql: 'select 1', values: [] }, context()),
    );
    expect(error.code).toBe('ERR_EGRESS_DENIED');
    expect(error.message).not.toContain('ECONNREFUSED');
  });
});

describe("a server's own egressAllow", () => {
  let internal: LoopbackServer;
  beforeAll(async () => {
    internal = await startLoopbackServer((_request, response) => response.end('internal api'));
  });
  afterAll(() => internal.close());

  it('lets that server, and no other, reach the entry (host and port) over sdk.http', async () => {
    const broker = makeBroker([]);
    const own = context({ server: 'tenant-a', egressAllow: [`127.0.0.1:${internal.port}`] });
    expect(await broker.handle('http', { url: `${internal.url}/x` }, own)).toMatchObject({
      status: 200,
      body: 'internal api',
    });
    const other = await failure(
      broker.handle('http', { url: `${internal.url}/y` }, context({ server: 'tenant-b' })),
    );
    expect(other.code).toBe('ERR_EGRESS_DENIED');
    const otherPort = context({
      server: 'tenant-c',
      egressAllow: [`127.0.0.1:${internal.port + 1}`],
    });
    expect(
      (await failure(broker.handle('http', { url: `${internal.url}/z` }, otherPort))).message,
    ).toContain(`but not on port ${internal.port}`);
    expect(internal.requests).toEqual(['/x']);
  });

  it('lets that server, and no other, reach its database over sdk.db', async () => {
    const broker = makeBroker([]);
    const connection = testConnection('pg');
    const args = { type: 'pg', connection, sql: 'select 1 as one', values: [] };
    const allowed = context({ server: 'tenant-a', egressAllow: [`127.0.0.1:${connection.port}`] });
    expect(await broker.handle('db.query', args, allowed)).toMatchObject({ rows: [{ one: 1 }] });
    const other = await failure(broker.handle('db.query', args, context({ server: 'tenant-b' })));
    expect(other.code).toBe('ERR_EGRESS_DENIED');
  });
});

describe('connection slots per server', () => {
  let upstream: LoopbackServer;
  // `/slow` requests are held until the test releases them; any other path answers its own path.
  let releaseSlow = () => {};
  const slowReleased = new Promise<void>((resolve) => (releaseSlow = resolve));
  beforeAll(async () => {
    upstream = await startLoopbackServer(async (request, response) => {
      if (request.url === '/slow') await slowReleased;
      response.end(request.url);
    });
  });
  afterAll(() => {
    releaseSlow();
    return upstream.close();
  });

  it("does not make one server's request wait for another server's slow requests", async () => {
    const broker = makeBroker(['127.0.0.1']); // default: 16 connections per server and origin
    const hog = context({ server: 'tenant-a' });
    const slow = Array.from({ length: 16 }, () =>
      broker.handle('http', { url: `${upstream.url}/slow` }, hog),
    );
    const slowArrived = () => upstream.requests.filter((target) => target === '/slow').length;
    await expect.poll(slowArrived, { timeout: 10_000 }).toBe(16); // the hog holds all 16 connections
    const other = context({ server: 'tenant-b' });
    // Answered while every slow request is still held: it needed none of the hog's slots.
    expect(await broker.handle('http', { url: `${upstream.url}/other` }, other)).toMatchObject({
      status: 200,
      body: '/other',
    });
    // The hog's own 17th request waits for one of its slots: the bound is per server.
    const seventeenth = broker.handle('http', { url: `${upstream.url}/hog-17th` }, hog);
    // A whole round trip of the other server later, the 17th has still not been sent.
    await broker.handle('http', { url: `${upstream.url}/other-again` }, other);
    expect(upstream.requests).not.toContain('/hog-17th');
    releaseSlow();
    expect(await seventeenth).toMatchObject({ status: 200, body: '/hog-17th' });
    await Promise.all(slow);
    expect(broker.openHttpAgents()).toBe(2);
  }, 15_000);
});
