/**
 * Two control planes sharing one PostgreSQL database, as replicas do: a
 * change made through one takes effect on the other at once, with no
 * restart — tools, the security mode, pool sizes.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startAuthorizationServer,
  type TestAuthorizationServer,
} from '../../fixtures/authorization-server.js';
import { onPostgresServer, postgresUrl } from '../../store/store-targets.js';
import { postInitialize } from '../../support/mcp-requests.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';

const database = `mcphost_replicas_${randomBytes(6).toString('hex')}`;
let first: TestControlPlane;
let second: TestControlPlane;
let as: TestAuthorizationServer;

const initialize = (plane: TestControlPlane) => postInitialize(plane.mcpUrl('shared'));

beforeAll(async () => {
  await onPostgresServer(`CREATE DATABASE ${database}`);
  const env = { DATABASE_URL: postgresUrl(database), GENERIC_POOL_SIZE: '0', POOL_MIN_WARM: '0' };
  first = await startTestControlPlane(env);
  second = await startTestControlPlane(env);
  as = await startAuthorizationServer();
}, 180_000);

afterAll(async () => {
  await Promise.all([first?.close(), second?.close(), as?.close()]);
  await onPostgresServer(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
});

describe('replicas sharing PostgreSQL', () => {
  it('serve a tool saved through the other at once', async () => {
    expect((await first.admin('POST', '/api/servers', { subdomain: 'shared' })).status).toBe(201);
    expect(
      (
        await first.admin('PUT', '/api/servers/shared/tools/hello', {
          description: 'hi',
          code: "return 'v1';",
        })
      ).status,
    ).toBe(201);
    await expect
      .poll(
        async () =>
          (await second.admin('POST', '/api/servers/shared/tools/hello/invoke', {})).body.result,
        { timeout: 5000 },
      )
      .toBe('v1');
    expect(
      (
        await first.admin('PUT', '/api/servers/shared/tools/hello', {
          description: 'hi',
          code: "return 'v2';",
        })
      ).status,
    ).toBe(200);
    await expect
      .poll(
        async () =>
          (await second.admin('POST', '/api/servers/shared/tools/hello/invoke', {})).body.result,
        { timeout: 5000 },
      )
      .toBe('v2');
  });

  it('switch the security mode on every replica at once', async () => {
    expect((await initialize(second)).status).toBe(200);
    const saved = await first.admin('PATCH', '/api/servers/shared/settings', {
      securityMode: 'oauth2',
      oauthServerUrl: as.metadataUrl,
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    await expect.poll(async () => (await initialize(second)).status, { timeout: 5000 }).toBe(401);
    expect(
      (await first.admin('PATCH', '/api/servers/shared/settings', { securityMode: 'none' })).status,
    ).toBe(200);
    await expect.poll(async () => (await initialize(second)).status, { timeout: 5000 }).toBe(200);
  });

  it('resize a pool on every replica', async () => {
    expect((await first.admin('PUT', '/api/pools/shared', { minWarm: 0, maxSize: 3 })).status).toBe(
      200,
    );
    // The second replica's pool of that server (created by a call) has the new size.
    await expect
      .poll(
        async () => {
          await second.admin('POST', '/api/servers/shared/tools/hello/invoke', { params: {} });
          return (await second.admin('GET', '/api/pools')).body.pools.find(
            (p: { server?: string; tool?: string }) => p.server === 'shared' && !p.tool,
          )?.maxSize;
        },
        { timeout: 5000 },
      )
      .toBe(3);
  });
});
