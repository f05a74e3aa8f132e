/**
 * sdk.db isolation end to end: tools of two servers in real runner
 * containers, against the real PostgreSQL and MariaDB. A tool that throws
 * between BEGIN and COMMIT loses its own work and nothing of another
 * server's; a transaction over several calls commits; a declared parameter
 * named `__proto__` is refused when the tool is saved.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  openTestDatabase,
  testConnection,
  uniqueTableName,
  type DatabaseType,
  type TestDatabase,
} from '../../broker/database-targets.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { startLoopbackServer, type LoopbackServer } from '../../support/loopback-server.js';

let plane: TestControlPlane;

const invoke = async (server: string, tool: string, params: object = {}) =>
  (await plane.admin('POST', `/api/servers/${server}/tools/${tool}/invoke`, { params })).body;

beforeAll(async () => {
  plane = await startTestControlPlane();
  for (const subdomain of ['alpha', 'beta'])
    expect((await plane.admin('POST', '/api/servers', { subdomain })).status).toBe(201);
}, 180_000);

afterAll(async () => {
  await plane?.close();
});

it('refuses a declared parameter named __proto__, constructor or prototype at save', async () => {
  for (const name of ['__proto__', 'constructor', 'prototype']) {
    const saved = await plane.admin('PUT', '/api/servers/alpha/tools/reserved', {
      description: 'x',
      code: 'return params;',
      parameters: [{ name, type: 'string', required: false }],
    });
    expect(saved.status).toBe(400);
    expect(JSON.stringify(saved.body)).toContain(
      'a parameter may not be named __proto__, constructor or prototype',
    );
  }
});

describe.each<DatabaseType>(['pg', 'mysql'])('sdk.db (%s) across servers', (type) => {
  let database: TestDatabase;
  const table = uniqueTableName(`isolation_${type}`);
  // Alpha's tool calls here from inside its open transaction and is held until the test lets it go.
  let gate: LoopbackServer;
  let releaseAlpha = () => {};
  const alphaReleased = new Promise<void>((resolve) => (releaseAlpha = resolve));
  const names = async (): Promise<string[]> =>
    ((await database.admin(`select name from ${table} order by id`)) as { name: string }[]).map(
      (row) => row.name,
    );

  beforeAll(async () => {
    gate = await startLoopbackServer(async (_request, response) => {
      await alphaReleased;
      response.end('go on');
    });
    database = await openTestDatabase(type);
    const id = type === 'pg' ? 'id serial primary key' : 'id int auto_increment primary key';
    await database.admin(`create table ${table} (${id}, name varchar(50) not null)`);
    const db = `const db = sdk.db({ type: '${type}', connection: ${JSON.stringify(testConnection(type))} });`;
    const save = async (server: string, name: string, code: string) =>
      expect(
        (
          await plane.admin('PUT', `/api/servers/${server}/tools/${name}_${type}`, {
            description: name,
            code: `${db}\n${code}`,
          })
        ).status,
      ).toBe(201);
    // Waits with its transaction open and its connection idle, then fails before COMMIT.
    await save(
      'alpha',
      'begin_then_throw',
      `await db.query('BEGIN');
await db.insert('${table}', { name: 'alpha-uncommitted' });
await sdk.http({ url: '${gate.url}/in-transaction' });
throw new Error('failed before COMMIT');`,
    );
    await save('beta', 'add', `return db.insert('${table}', { name: 'beta' });`);
    await save(
      'alpha',
      'two_in_one_transaction',
      `await db.query('BEGIN');
await db.insert('${table}', { name: 'alpha-1' });
await db.insert('${table}', { name: 'alpha-2' });
await db.query('COMMIT');
return (await db.select('${table}', {})).length;`,
    );
    await save(
      'alpha',
      'proto_filter',
      `return db.select('${table}', JSON.parse('{"__proto__": "nobody"}'));`,
    );
  }, 60_000);

  afterAll(async () => {
    releaseAlpha();
    await gate?.close();
    await database?.admin(`drop table if exists ${table}`);
    await database?.end();
  });

  it("rolls back a tool that throws between BEGIN and COMMIT, and keeps another server's row", async () => {
    const alpha = invoke('alpha', `begin_then_throw_${type}`);
    // BEGIN and the insert are done (a cold container start may come first).
    await expect.poll(() => gate.requests, { timeout: 20_000 }).toContain('/in-transaction');
    const beta = await invoke('beta', `add_${type}`);
    expect(beta).toMatchObject({ ok: true, result: { id: expect.any(Number), name: 'beta' } });
    releaseAlpha();
    expect(await alpha).toMatchObject({
      ok: false,
      error: { code: 'ERR_TOOL_ERROR', message: 'failed before COMMIT' },
    });
    // The reset runs right after the answer.
    await expect.poll(names, { timeout: 5_000 }).toEqual(['beta']);
  });

  it('commits a transaction spread over several calls of one invocation', async () => {
    expect(await invoke('alpha', `two_in_one_transaction_${type}`)).toMatchObject({
      ok: true,
      result: 3,
    });
    expect(await names()).toEqual(['beta', 'alpha-1', 'alpha-2']);
  });

  it('refuses a __proto__ filter instead of returning every row', async () => {
    expect(await invoke('alpha', `proto_filter_${type}`)).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining('"__proto__" is not accepted as a column name') },
    });
  });
});
