/**
 * A replica that cannot load the configuration is not ready: one started
 * with the wrong MASTER_KEY before any secret existed starts and serves, but
 * once another replica saves a secret it cannot decrypt, `/readyz` says 503
 * (checks.configuration "failed") instead of answering 200 while it serves
 * stale configuration; the other replica stays ready.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { onPostgresServer, postgresUrl } from '../../store/store-targets.js';
import { loopbackFetch } from '../../support/loopback-fetch.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';

const database = `mcphost_readiness_${randomBytes(6).toString('hex')}`;
let right: TestControlPlane;
let wrong: TestControlPlane;

beforeAll(async () => {
  await onPostgresServer(`CREATE DATABASE ${database}`);
  const env = { DATABASE_URL: postgresUrl(database), GENERIC_POOL_SIZE: '0', POOL_MIN_WARM: '0' };
  right = await startTestControlPlane(env);
  // No secret exists yet: nothing tells this replica its key is not the others'.
  wrong = await startTestControlPlane({
    ...env,
    MASTER_KEY: Buffer.alloc(32, 9).toString('base64'),
  });
}, 180_000);

afterAll(async () => {
  await Promise.all([right?.close(), wrong?.close()]);
  await onPostgresServer(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
});

async function readiness(plane: TestControlPlane) {
  const response = await loopbackFetch(`${plane.adminUrl}/readyz`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

it('fails readiness on a replica that cannot load a secret saved by another', async () => {
  expect((await readiness(wrong)).status).toBe(200);
  expect((await right.admin('POST', '/api/servers', { subdomain: 'keyed' })).status).toBe(201);
  expect(
    (await right.admin('PUT', '/api/servers/keyed/secrets/API_KEY', { value: 's3cret' })).status,
  ).toBe(200);
  await expect.poll(async () => (await readiness(wrong)).status, { timeout: 10_000 }).toBe(503);
  expect((await readiness(wrong)).body).toMatchObject({
    ready: false,
    checks: { configuration: 'failed' },
  });
  expect(await readiness(right)).toMatchObject({
    status: 200,
    body: { checks: { configuration: 'ok' } },
  });
}, 60_000);
