/**
 * Rate limits across replicas sharing PostgreSQL: each replica enforces its
 * share of a server's limit (the limit divided by the live replicas, counted
 * through heartbeat rows), so a caller gets no more than the limit in total.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgresServer, postgresUrl } from '../../store/store-targets.js';
import { postInitialize } from '../../support/mcp-requests.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';

const database = `mcphost_rate_${randomBytes(6).toString('hex')}`;
let first: TestControlPlane;
let second: TestControlPlane;

beforeAll(async () => {
  await onPostgresServer(`CREATE DATABASE ${database}`);
  const env = { DATABASE_URL: postgresUrl(database), GENERIC_POOL_SIZE: '0', POOL_MIN_WARM: '0' };
  first = await startTestControlPlane(env);
  second = await startTestControlPlane(env);
}, 180_000);

afterAll(async () => {
  await Promise.all([first?.close(), second?.close()]);
  await onPostgresServer(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
});

describe('rate limits on replicas sharing PostgreSQL', () => {
  it('each of two replicas allows half of the burst', async () => {
    expect((await first.admin('POST', '/api/servers', { subdomain: 'shared' })).status).toBe(201);
    // A rate so slow that no token comes back while the ten requests run, however
    // loaded the machine: what is checked is the burst's split, not timing.
    const saved = await first.admin('PATCH', '/api/servers/shared/settings', {
      rateLimit: { perMinute: 1, burst: 10 },
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    // The second replica started after the first: its first heartbeat counted two.
    await expect
      .poll(async () => (await second.admin('GET', '/api/servers/shared')).body.rateLimit, {
        timeout: 5000,
      })
      .toEqual({ perMinute: 1, burst: 10 });
    const statuses: number[] = [];
    for (let i = 0; i < 10; i += 1) {
      const answer = await postInitialize(second.mcpUrl('shared'));
      statuses.push(answer.status);
      await answer.body?.cancel();
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.slice(5)).toEqual([429, 429, 429, 429, 429]);
  });
});
