/**
 * Authorization Server metadata and JWKS are fetched through the tool egress
 * policy (broker/http/guarded-fetch.ts, as app.ts wires it): cloud metadata
 * and this host's own address are refused before any connection, loopback
 * only with OAUTH_ALLOW_INSECURE_LOOPBACK. Real connections go to loopback
 * and to this machine's own interface address only.
 */
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createAccessTokenVerifier,
  fetchAuthorizationServerMetadata,
} from '../../control-plane/identity/index.js';
import {
  createGuardedFetch,
  EgressPolicy,
  systemLookup,
  type GuardedFetch,
} from '../../control-plane/broker/index.js';
import { McphostError } from '../../control-plane/errors.js';
import {
  startAuthorizationServer,
  type TestAuthorizationServer,
} from '../fixtures/authorization-server.js';
import { startLoopbackServer } from '../support/loopback-server.js';
import { metadataFailure } from './metadata-failure.js';

const guards: GuardedFetch[] = [];
function guardedFetch(allowLoopback: boolean): typeof fetch {
  const guard = createGuardedFetch({
    policy: EgressPolicy.fromAllowList([]),
    lookup: systemLookup,
    allowLoopback,
    connectTimeoutMs: 2_000,
  });
  guards.push(guard);
  return guard.fetch;
}
afterAll(async () => {
  await Promise.all(guards.map((guard) => guard.agent.close()));
});

describe('Authorization Server metadata through the egress policy', () => {
  it('refuses https://169.254.169.254/ without connecting', async () => {
    // The policy's own refusal (a connection attempt would end in a timeout or ECONNREFUSED instead).
    const error = await metadataFailure(
      fetchAuthorizationServerMetadata('https://169.254.169.254/', {
        allowInsecureLoopback: true,
        fetch: guardedFetch(true),
      }),
    );
    expect(error.message).toBe(
      'mcphost may not connect to https://169.254.169.254/, so no metadata was read: egress to 169.254.169.254 is not allowed: cloud metadata addresses are always refused',
    );
  });

  it("refuses this host's own interface address (a service bound to 0.0.0.0 answers there)", async () => {
    const ip = Object.values(networkInterfaces())
      .flatMap((list) => list ?? [])
      .find((entry) => entry.family === 'IPv4' && !entry.internal)?.address;
    expect(ip).toBeDefined();
    const server = await startLoopbackServer((_request, response) => response.end('{}'), {
      host: '0.0.0.0',
    });
    try {
      const url = `https://${ip}:${server.port}/.well-known/oauth-authorization-server`;
      const error = await metadataFailure(
        fetchAuthorizationServerMetadata(url, {
          allowInsecureLoopback: true,
          fetch: guardedFetch(true),
        }),
      );
      expect(error.message).toMatch(
        new RegExp(`so no metadata was read: egress to ${ip} is not allowed: ${ip} is `),
      );
      expect(server.requests).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

describe('JWKS through the egress policy', () => {
  let as: TestAuthorizationServer;
  beforeAll(async () => {
    as = await startAuthorizationServer();
  });
  afterAll(() => as.close());

  const verifierWith = (allowLoopback: boolean) =>
    createAccessTokenVerifier({
      issuer: as.issuer,
      jwksUri: as.jwksUri,
      audience: 'http://tenant.localhost:8080/mcp',
      allowInsecureLoopback: true,
      fetch: guardedFetch(allowLoopback),
    });

  it('fetches loopback keys when insecure loopback is allowed', async () => {
    const token = await as.issueTokenFor('http://tenant.localhost:8080/mcp');
    await expect(verifierWith(true).verify(token)).resolves.toMatchObject({
      scopes: expect.arrayContaining(['mcp:tools']),
    });
  });

  it('refuses loopback keys otherwise (the policy, not a connection, says no)', async () => {
    const token = await as.issueTokenFor('http://tenant.localhost:8080/mcp');
    const error = await verifierWith(false)
      .verify(token)
      .then(
        () => undefined,
        (thrown: unknown) => thrown as McphostError,
      );
    expect(error?.code).toBe('ERR_AUTH_SERVER_UNAVAILABLE');
    const cause = (error?.cause as Error | undefined)?.cause;
    expect(cause).toMatchObject({ code: 'ERR_EGRESS_DENIED' });
  });
});
