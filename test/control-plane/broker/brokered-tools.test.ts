/**
 * sdk.http and sdk.db end to end: tool code in real runner containers, its
 * calls brokered by the control plane to a real HTTP server on loopback and
 * to the real PostgreSQL and MariaDB — the seed's examples, as an operator
 * writes them. Everything runs twice: on a server with `runtime: "runc"` and
 * on one with gVisor's `runtime: "runsc"` (its own control plane, no generic
 * pool, so every container it starts belongs to that server).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  openTestDatabase,
  testConnection,
  uniqueTableName,
  type DatabaseType,
  type TestDatabase,
} from '../../broker/database-targets.js';
import { DockerodeContainerClient } from '../../../control-plane/sandbox/docker/container-client.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { describeEachRuntime } from '../../support/oci-runtimes.js';
import { startLoopbackServer, type LoopbackServer } from '../../support/loopback-server.js';

describeEachRuntime('brokered tools', (runtime) => {
  let plane: TestControlPlane;
  let webhook: LoopbackServer | undefined;
  let webhookUrl: string;
  const received: { headers: IncomingHttpHeaders; body: string; method?: string }[] = [];

  const WEBHOOK_TOOL = {
    description: 'Sends an event to a webhook.',
    parameters: [
      { name: 'url', type: 'string', required: true },
      { name: 'event', type: 'string', required: true },
      { name: 'data', type: 'object', required: false },
    ],
    secrets: ['WEBHOOK_SECRET'],
    code: `
  const response = await sdk.http({
    method: 'POST',
    url: params.url,
    headers: { 'Content-Type': 'application/json', 'X-Webhook-Secret': env.WEBHOOK_SECRET },
    body: JSON.stringify({ event: params.event, data: params.data ?? {}, timestamp: new Date().toISOString() }),
  });
  if (response.status() >= 400) throw new Error('webhook answered ' + response.status() + ': ' + response.body());
  return { status: response.status(), reply: JSON.parse(response.body()) };`,
  };

  const invoke = async (tool: string, params: object) =>
    (await plane.admin('POST', `/api/servers/seed/tools/${tool}/invoke`, { params })).body;

  beforeAll(async () => {
    webhook = await startLoopbackServer((req, res, body) => {
      received.push({ headers: req.headers, body, method: req.method });
      const status = req.url === '/fail' ? 500 : 200;
      res
        .writeHead(status, { 'content-type': 'application/json' })
        .end(JSON.stringify({ accepted: status === 200 }));
    });
    webhookUrl = webhook.url;
    plane = await startTestControlPlane(runtime === 'runsc' ? { GENERIC_POOL_SIZE: '0' } : {});
    expect((await plane.admin('POST', '/api/servers', { subdomain: 'seed' })).status).toBe(201);
    const settings = await plane.admin('PATCH', '/api/servers/seed/settings', { runtime });
    expect(settings.status, JSON.stringify(settings.body)).toBe(200);
    expect(
      (await plane.admin('PUT', '/api/servers/seed/tools/send_webhook', WEBHOOK_TOOL)).status,
    ).toBe(201);
    expect(
      (
        await plane.admin('PUT', '/api/servers/seed/secrets/WEBHOOK_SECRET', {
          value: 'whsec-0123456789',
        })
      ).status,
    ).toBe(200);
  }, 180_000);

  afterAll(async () => {
    await plane?.close();
    await webhook?.close();
  });

  describe('sdk.http from a runner container', () => {
    it('posts the webhook JSON with the secret header', async () => {
      const result = await invoke('send_webhook', {
        url: `${webhookUrl}/hook`,
        event: 'order.created',
        data: { id: 7 },
      });
      expect(result).toMatchObject({
        ok: true,
        result: { status: 200, reply: { accepted: true } },
      });
      const last = received.at(-1)!;
      expect(last.method).toBe('POST');
      expect(last.headers['content-type']).toBe('application/json');
      expect(last.headers['x-webhook-secret']).toBe('whsec-0123456789');
      const body = JSON.parse(last.body);
      expect(body).toMatchObject({ event: 'order.created', data: { id: 7 } });
      expect(Date.parse(body.timestamp)).not.toBeNaN();
    });

    it('returns an error status to the code, which decides', async () => {
      const result = await invoke('send_webhook', { url: `${webhookUrl}/fail`, event: 'x' });
      expect(result).toMatchObject({
        ok: false,
        error: { code: 'ERR_TOOL_ERROR', message: 'webhook answered 500: {"accepted":false}' },
      });
    });

    it('refuses cloud metadata addresses from tool code', async () => {
      const result = await invoke('send_webhook', {
        url: 'http://[::ffff:169.254.169.254]/latest',
        event: 'x',
      });
      expect(result.ok).toBe(false);
      expect(result.error.message).toMatch(
        /egress to .* is not allowed: cloud metadata addresses are always refused/,
      );
    });
  });

  describe.each<DatabaseType>(['pg', 'mysql'])('sdk.db (%s) from a runner container', (type) => {
    let database: TestDatabase;
    const table = uniqueTableName(`seed_${type}`);

    beforeAll(async () => {
      database = await openTestDatabase(type);
      const id = type === 'pg' ? 'id serial primary key' : 'id int auto_increment primary key';
      await database.admin(
        `create table ${table} (${id}, email varchar(200) not null, region varchar(20) not null, amount int not null)`,
      );
      const connection = JSON.stringify(testConnection(type));
      const save = (name: string, body: object) =>
        plane.admin('PUT', `/api/servers/seed/tools/${name}_${type}`, body);
      expect(
        (
          await save('add_sale', {
            description: 'Inserts a sale.',
            parameters: [
              { name: 'email', type: 'string', required: true },
              { name: 'region', type: 'string', required: true },
              { name: 'amount', type: 'number', required: true },
            ],
            code: `const db = sdk.db({ type: '${type}', connection: ${connection} });
  return db.insert('${table}', { email: params.email, region: params.region, amount: params.amount });`,
          })
        ).status,
      ).toBe(201);
      expect(
        (
          await save('find_customer', {
            description: 'Finds a customer by email, or says it did not.',
            parameters: [{ name: 'email', type: 'string', required: true }],
            code: `const db = sdk.db({ type: '${type}', connection: ${connection} });
  const rows = await db.select('${table}', { email: params.email });
  if (rows.length === 0) return { found: false };
  return { found: true, id: rows[0].id, region: rows[0].region };`,
          })
        ).status,
      ).toBe(201);
      expect(
        (
          await save('sales_by_region', {
            description: 'Totals sales per region with lodash, and counts them in SQL.',
            code: `const db = sdk.db({ type: '${type}', connection: ${connection} });
  const { rows } = await db.query('select region, amount from ${table} where amount > $1', [0]);
  const totals = sdk.lodash.mapValues(sdk.lodash.groupBy(rows, 'region'), (r) => sdk.lodash.sumBy(r, 'amount'));
  const count = await db.query('select count(*) as n from ${table} where region = $1', ['eu']);
  return { totals, eu: count.rows[0].n };`,
          })
        ).status,
      ).toBe(201);
    });

    afterAll(async () => {
      await database?.admin(`drop table if exists ${table}`);
      await database?.end();
    });

    it('inserts rows and returns them with their id', async () => {
      const first = await invoke(`add_sale_${type}`, {
        email: 'ada@example.com',
        region: 'eu',
        amount: 30,
      });
      expect(first).toMatchObject({
        ok: true,
        result: { id: expect.any(Number), email: 'ada@example.com', region: 'eu', amount: 30 },
      });
      await invoke(`add_sale_${type}`, { email: 'bob@example.com', region: 'us', amount: 12 });
      await invoke(`add_sale_${type}`, { email: 'cy@example.com', region: 'eu', amount: 8 });
    });

    it('finds a row, or returns {found: false}', async () => {
      expect(await invoke(`find_customer_${type}`, { email: 'bob@example.com' })).toMatchObject({
        ok: true,
        result: { found: true, region: 'us' },
      });
      expect(await invoke(`find_customer_${type}`, { email: 'nobody@example.com' })).toMatchObject({
        ok: true,
        result: { found: false },
      });
    });

    it('groups and sums with lodash, and counts with SQL', async () => {
      expect(await invoke(`sales_by_region_${type}`, {})).toMatchObject({
        ok: true,
        result: { totals: { eu: 38, us: 12 }, eu: 2 },
      });
    });
  });

  it(`ran every container of the server under ${runtime}`, async () => {
    const client = new DockerodeContainerClient();
    const containers = await client.listByLabels({ 'mcphost.plane': plane.config.planeName! });
    expect(containers.length).toBeGreaterThan(0);
    const runtimes = await Promise.all(
      containers.map(async (container) => (await client.inspect(container.id))?.HostConfig.Runtime),
    );
    expect(new Set(runtimes)).toEqual(new Set([runtime]));
  });
});
