/**
 * The park relay against a hostile caller, on two in-process control planes
 * sharing PostgreSQL: a modern retry is relayed to the replica its
 * `requestState` names only when the state is bound to this server, this
 * caller and this request, and a relayed message is deleted once its
 * replica takes it. Before, one state of the attacker's own parked call
 * turned every request it sent to any server's /mcp on the other replica
 * into a ~2 MB row of the database every tenant shares (10 retries: +20 MB,
 * kept 1–2 minutes), refused only on arrival.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgresServer, postgresUrl } from '../store/store-targets.js';
import { startTestControlPlane, type TestControlPlane } from '../support/control-plane.js';
import { modernToolCall, type ModernCallOptions } from '../support/mcp-requests.js';

const database = `mcphost_hr29_relay_${randomBytes(6).toString('hex')}`;
let replicaA: TestControlPlane;
let replicaB: TestControlPlane;
function call(
  plane: TestControlPlane,
  server: string,
  tool: string,
  extra: ModernCallOptions = {},
): Promise<{ status: number; body: any }> {
  return modernToolCall(plane.mcpUrl(server), tool, extra);
}

beforeAll(async () => {
  await onPostgresServer(`CREATE DATABASE ${database}`);
  const env = {
    DATABASE_URL: postgresUrl(database),
    GENERIC_POOL_SIZE: '0',
    POOL_MIN_WARM: '0',
    RATE_LIMIT_PER_MINUTE: '0',
    TOOL_TIMEOUT_MS: '60000',
  };
  replicaA = await startTestControlPlane(env);
  replicaB = await startTestControlPlane(env);
  for (const server of ['attacker', 'bystander']) {
    expect((await replicaA.admin('POST', '/api/servers', { subdomain: server })).status).toBe(201);
  }
  const ask = await replicaA.admin('PUT', '/api/servers/attacker/tools/ask', {
    description: 'asks a name',
    code: `const answer = await sdk.elicit('Name?', { type: 'object', properties: { name: { type: 'string' } } }, { key: 'name' });
      return 'hello ' + answer.content.name;`,
  });
  expect(ask.status).toBe(201);
  const other = await replicaA.admin('PUT', '/api/servers/bystander/tools/ask', {
    description: 'a tool of another tenant',
    code: 'return 1;',
  });
  expect(other.status).toBe(201);
  // Both replicas have heard of both servers.
  for (let tries = 0; ; tries++) {
    const answer = await call(replicaB, 'bystander', 'ask');
    if (answer.body.result?.content?.[0]?.text === '1') break;
    if (tries > 50)
      throw new Error(`replica B does not serve bystander: ${JSON.stringify(answer.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}, 180_000);

afterAll(async () => {
  await Promise.all([replicaA?.close(), replicaB?.close()]);
  await onPostgresServer(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
});

describe('the park relay', () => {
  it('refuses a state of another server on the replica it reached, writing nothing to the shared database', async () => {
    const db = new pg.Client({ connectionString: postgresUrl(database) });
    await db.connect();
    const stored = async () => {
      const { rows } = await db.query(
        `SELECT count(*)::int AS rows, coalesce(sum(octet_length(message)), 0)::bigint AS bytes,
                pg_total_relation_size('mcp_session_messages')::bigint AS relation
           FROM mcp_session_messages`,
      );
      return {
        rows: Number(rows[0].rows),
        bytes: Number(rows[0].bytes),
        relation: Number(rows[0].relation),
      };
    };
    try {
      // The attacker parks one call of its own on replica B: one state.
      const first = await call(replicaB, 'attacker', 'ask');
      expect(first.body.result?.resultType, JSON.stringify(first.body)).toBe('input_required');
      const state = first.body.result.requestState as string;
      const before = await stored();
      // Retries on replica A, at another tenant's server, with incompressible padding under a key nobody asked.
      const padding = randomBytes(1_500_000).toString('base64');
      const retries = 10;
      const refusals: string[] = [];
      const started = performance.now();
      for (let i = 0; i < retries; i++) {
        const answer = await call(replicaA, 'bystander', 'ask', {
          state,
          answers: { [`junk${i}`]: padding },
        });
        refusals.push(String(answer.body.error?.code ?? answer.body.result?.resultType));
      }
      const tookMs = performance.now() - started;
      const after = await stored();
      // The rightful retry still resumes the call (nothing else went wrong).
      const rightful = await call(replicaA, 'attacker', 'ask', {
        state,
        answers: { name: { action: 'accept', content: { name: 'Ada' } } },
      });
      const writtenMb = (after.bytes - before.bytes) / 1e6;
      console.log(
        `[figures] attacker: ${retries} retries of one state sent to replica A at server "bystander" (answers: ${[...new Set(refusals)].join(',')}) in ${tookMs.toFixed(0)} ms; ` +
          `shared PostgreSQL: mcp_session_messages ${before.rows} → ${after.rows} rows, +${writtenMb.toFixed(1)} MB of message text, relation ${(before.relation / 1e6).toFixed(1)} → ${(after.relation / 1e6).toFixed(1)} MB ` +
          `(before the fix: 0 → 20 rows, +20.0 MB); the attacker's own retry, relayed: ${rightful.body.result?.content?.[0]?.text}`,
      );
      expect(refusals.every((code) => code === '-32602')).toBe(true);
      expect(rightful.body.result?.content?.[0]?.text).toBe('hello Ada');
      expect(writtenMb, 'bytes refused retries put in the shared database').toBeLessThan(1);
      // The rightful retry's relayed messages were taken by the replicas they went to.
      expect((await stored()).rows).toBe(0);
    } finally {
      await db.end();
    }
  }, 120_000);
});
