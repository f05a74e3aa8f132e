import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgresServer, postgresUrl } from '../store/store-targets.js';
import { startTestControlPlane, type TestControlPlane } from '../support/control-plane.js';
import { loopbackFetch } from '../support/loopback-fetch.js';

const database = `mcphost_hr29_${randomBytes(6).toString('hex')}`;
let a: TestControlPlane;
let b: TestControlPlane;
let nextId = 1;
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
};
async function call(
  plane: TestControlPlane,
  server: string,
  tool: string,
  extra: { args?: object; state?: string; answers?: object } = {},
) {
  const response = await loopbackFetch(plane.mcpUrl(server), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': tool,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: nextId++,
      method: 'tools/call',
      params: {
        name: tool,
        arguments: extra.args ?? {},
        ...(extra.state === undefined ? {} : { requestState: extra.state }),
        ...(extra.answers === undefined ? {} : { inputResponses: extra.answers }),
        _meta: META,
      },
    }),
  });
  const text = await response.text();
  const body = text.startsWith('{') ? JSON.parse(text) : JSON.parse(text.split('data: ').at(-1)!);
  return { status: response.status, body };
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
  a = await startTestControlPlane(env);
  b = await startTestControlPlane(env);
  for (const s of ['tenant', 'other'])
    expect((await a.admin('POST', '/api/servers', { subdomain: s })).status).toBe(201);
  const saved = await a.admin('PUT', '/api/servers/tenant/tools/ask', {
    description: 'asks',
    code: `const x = await sdk.elicit('Name?', { type: 'object', properties: { name: { type: 'string' } } }, { key: 'k' }); return x.content.name;`,
    parameters: [],
  });
  expect(saved.status).toBe(201);
  const o = await a.admin('PUT', '/api/servers/other/tools/ask', {
    description: 'asks',
    code: 'return 1;',
    parameters: [],
  });
  expect(o.status).toBe(201);
  await new Promise((r) => setTimeout(r, 1000));
}, 180_000);
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await onPostgresServer(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
});

describe('relay', () => {
  it('amplifies', async () => {
    const client = new pg.Client({ connectionString: postgresUrl(database) });
    await client.connect();
    const size = async () =>
      (
        await client.query(
          `select pg_total_relation_size('mcp_session_messages') as s, (select count(*) from mcp_session_messages) as n, (select coalesce(sum(length(message)),0) from mcp_session_messages) as l`,
        )
      ).rows[0];
    const first = await call(b, 'tenant', 'ask');
    const state = first.body.result.requestState;
    console.log('parked on b', first.body.result.resultType);
    console.log('before', await size());
    const pad = 'p'.repeat(2_000_000);
    const t = performance.now();
    const answers: unknown[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await call(a, 'other', 'ask', { state, answers: { junk: pad } });
      answers.push(r.body.error?.message ?? r.body.result?.resultType);
    }
    console.log('answers', answers.slice(0, 3), (performance.now() - t).toFixed(0), 'ms');
    console.log('after', await size());
    const good = await call(a, 'tenant', 'ask', {
      state,
      answers: { k: { action: 'accept', content: { name: 'Ada' } } },
    });
    console.log('rightful', JSON.stringify(good.body).slice(0, 200));
    await client.end();
  }, 120_000);
});
