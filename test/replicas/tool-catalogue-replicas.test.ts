/**
 * `tools/list` pages on two control planes sharing one PostgreSQL database
 * (issue 28, finding 2): both give the same pages, a cursor one gave
 * continues on the other, and a tool saved through one is served by the other
 * (which reloads that tool alone; see test/store/config-cache-reload.test.ts)
 * with the pages still alike. The database sorts text linguistically (ICU),
 * so the pages cannot lean on its order of names.
 */
import { randomBytes } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ListToolsResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgresServer, postgresUrl } from '../store/store-targets.js';
import { connectSdkSession } from '../support/sdk-session.js';
import { startTestControlPlane, type TestControlPlane } from '../support/control-plane.js';

const database = `mcphost_catalogue_${randomBytes(6).toString('hex')}`;
let first: TestControlPlane;
let second: TestControlPlane;
const clients: Client[] = [];

const NAMES = Array.from({ length: 230 }, (_, i) =>
  i % 2 === 0 ? `Tool-${String(i).padStart(3, '0')}` : `tool-${String(i).padStart(3, '0')}`,
);

async function connect(plane: TestControlPlane): Promise<Client> {
  const { client } = await connectSdkSession(plane.mcpUrl('shared'));
  clients.push(client);
  return client;
}

/** Every page of tools/list, following nextCursor; `startAt` continues another replica's. */
async function pages(client: Client, startAt?: string): Promise<ListToolsResult[]> {
  const found: ListToolsResult[] = [];
  let cursor = startAt;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    found.push(page);
    cursor = page.nextCursor;
    if (found.length > 50) throw new Error('tools/list never ended');
  } while (cursor !== undefined);
  return found;
}

beforeAll(async () => {
  await onPostgresServer(
    `CREATE DATABASE ${database} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`,
  );
  const env = { DATABASE_URL: postgresUrl(database), GENERIC_POOL_SIZE: '0', POOL_MIN_WARM: '0' };
  first = await startTestControlPlane(env);
  second = await startTestControlPlane(env);
  expect((await first.admin('POST', '/api/servers', { subdomain: 'shared' })).status).toBe(201);
  const limits = await first.admin('PATCH', '/api/servers/shared/settings', {
    rateLimit: { perMinute: 100_000, burst: 10_000 },
  });
  expect(limits.status).toBe(200);
  for (const name of NAMES) {
    const saved = await first.admin('PUT', `/api/servers/shared/tools/${name}`, {
      description: name,
      code: 'return 1;',
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
  }
}, 300_000);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  await Promise.all([first?.close(), second?.close()]);
  await onPostgresServer(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
});

describe('tools/list on two replicas', () => {
  it('gives the same pages on both, and a cursor of one continues on the other', async () => {
    const [onFirst, onSecond] = [await connect(first), await connect(second)];
    await expect
      .poll(async () => (await pages(onSecond)).flatMap((page) => page.tools).length, {
        timeout: 10_000,
      })
      .toBe(NAMES.length);
    const fromFirst = await pages(onFirst);
    const fromSecond = await pages(onSecond);
    expect(fromFirst.map((page) => page.tools.length)).toEqual([100, 100, 30]);
    expect(fromSecond).toEqual(fromFirst);
    expect(fromFirst.flatMap((page) => page.tools.map((tool) => tool.name))).toEqual(
      [...NAMES].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
    );
    // The first replica's cursor, followed on the second.
    expect(await pages(onSecond, fromFirst[0]!.nextCursor)).toEqual(fromFirst.slice(1));
  }, 60_000);

  it('serves a tool saved through the other replica, pages still alike', async () => {
    const changed = await first.admin('PUT', '/api/servers/shared/tools/tool-101', {
      description: 'changed through the first replica',
      code: 'return 2;',
    });
    expect(changed.status).toBe(200);
    const onSecond = await connect(second);
    await expect
      .poll(
        async () =>
          (await pages(onSecond))
            .flatMap((page) => page.tools)
            .find((tool) => tool.name === 'tool-101')?.description,
        { timeout: 10_000 },
      )
      .toBe('changed through the first replica');
    expect(await pages(onSecond)).toEqual(await pages(await connect(first)));
  }, 60_000);
});
