/**
 * Prompts and resources on two control planes sharing one PostgreSQL
 * database, as replicas do: what an admin saves through the first is served
 * by the second from its own memory, and the second's MCP sessions hear of
 * it — resource updates to subscribers, list changes to everyone. The
 * database sorts text linguistically (ICU, as many installations do), so
 * list pages cannot lean on the database's order of names.
 */
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgresServer, postgresUrl } from '../../store/store-targets.js';
import { connectSdkSession, type SdkSession } from '../../support/sdk-session.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';

const database = `mcphost_entries_${randomBytes(6).toString('hex')}`;
let first: TestControlPlane;
let second: TestControlPlane;
const clients: Client[] = [];

const SHARED = '/api/servers/shared';

type Connected = SdkSession;

async function connect(plane: TestControlPlane, subdomain: string): Promise<Connected> {
  const session = await connectSdkSession(plane.mcpUrl(subdomain));
  clients.push(session.client);
  return session;
}

async function put(path: string, body: unknown, status: number): Promise<void> {
  const saved = await first.admin('PUT', path, body);
  expect(saved.status, `${path}: ${JSON.stringify(saved.body)}`).toBe(status);
}

async function createServer(subdomain: string): Promise<void> {
  expect((await first.admin('POST', '/api/servers', { subdomain })).status).toBe(201);
  const limits = await first.admin('PATCH', `/api/servers/${subdomain}/settings`, {
    rateLimit: { perMinute: 100_000, burst: 10_000 },
  });
  expect(limits.status, JSON.stringify(limits.body)).toBe(200);
}

/**
 * A session on the second replica opened once it holds what the first saved:
 * capabilities are fixed at initialize, so an early session would lack them.
 */
async function connectWhenReady(
  subdomain: string,
  ready: (client: Client) => Promise<boolean>,
): Promise<Connected> {
  // A loop of its own rather than expect.poll, which only runs inside a test (not in beforeAll).
  const deadline = Date.now() + 10_000;
  for (;;) {
    const candidate = await connect(second, subdomain);
    if (await ready(candidate.client)) return candidate;
    await candidate.client.close();
    if (Date.now() > deadline) throw new Error(`the second replica never served ${subdomain}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  await onPostgresServer(
    `CREATE DATABASE ${database} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`,
  );
  const env = { DATABASE_URL: postgresUrl(database), GENERIC_POOL_SIZE: '0', POOL_MIN_WARM: '0' };
  first = await startTestControlPlane(env);
  second = await startTestControlPlane(env);

  await createServer('shared');
  await put(
    `${SHARED}/prompts/summary`,
    {
      description: 'Asks for a summary of a city',
      arguments: [{ name: 'city', required: true }],
      messages: [{ role: 'user', content: { type: 'text', text: 'Summarise {{city}}.' } }],
    },
    201,
  );
  await put(
    `${SHARED}/prompts/greeting`,
    {
      description: 'Greets someone',
      arguments: [{ name: 'who', required: true }],
      code: 'return `Hello ${params.who}`;',
    },
    201,
  );
  await put(
    `${SHARED}/resources/handbook`,
    { uri: 'docs://handbook', mimeType: 'text/markdown', text: '# Handbook' },
    201,
  );
  await put(
    `${SHARED}/resources/weather`,
    { uriTemplate: 'weather://{city}/today', code: 'return `sunny in ${params.city}`;' },
    201,
  );
}, 180_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await Promise.all([first?.close(), second?.close()]);
  await onPostgresServer(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
});

describe('a session on the second replica', () => {
  let session: Connected;

  beforeAll(async () => {
    session = await connectWhenReady('shared', async (client) => {
      const capabilities = client.getServerCapabilities();
      if (!capabilities?.prompts || !capabilities.resources) return false;
      const [prompts, templates] = await Promise.all([
        client.listPrompts(),
        client.listResourceTemplates(),
      ]);
      return prompts.prompts.length === 2 && templates.resourceTemplates.length === 1;
    });
  });

  it('lists and gets the prompts saved through the first', async () => {
    const { client } = session;
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual([
      'greeting',
      'summary',
    ]);
    expect(await client.getPrompt({ name: 'summary', arguments: { city: 'Lyon' } })).toEqual({
      description: 'Asks for a summary of a city',
      messages: [{ role: 'user', content: { type: 'text', text: 'Summarise Lyon.' } }],
    });
    const greeted = await client.getPrompt({ name: 'greeting', arguments: { who: 'Ada' } });
    expect(greeted.messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'Hello Ada' } },
    ]);
  }, 60_000);

  it('reads a static resource and a templated one', async () => {
    const { client } = session;
    expect(await client.readResource({ uri: 'docs://handbook' })).toEqual({
      contents: [{ uri: 'docs://handbook', mimeType: 'text/markdown', text: '# Handbook' }],
    });
    expect(await client.readResource({ uri: 'weather://Lyon/today' })).toEqual({
      contents: [{ uri: 'weather://Lyon/today', mimeType: 'text/plain', text: 'sunny in Lyon' }],
    });
  }, 60_000);

  it('hears of an edit made on the first replica to a resource it subscribed to', async () => {
    const { client, streamOpen } = session;
    const updates: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      updates.push(notification.params.uri);
    });
    await client.subscribeResource({ uri: 'docs://handbook' });
    await client.subscribeResource({ uri: 'weather://Lyon/today' });
    await streamOpen;

    await put(
      `${SHARED}/resources/handbook`,
      { uri: 'docs://handbook', mimeType: 'text/markdown', text: '# Handbook, second edition' },
      200,
    );
    await expect.poll(() => updates, { timeout: 10_000 }).toEqual(['docs://handbook']);
    expect(await client.readResource({ uri: 'docs://handbook' })).toMatchObject({
      contents: [{ text: '# Handbook, second edition' }],
    });

    await put(
      `${SHARED}/resources/weather`,
      { uriTemplate: 'weather://{city}/today', code: 'return `rainy in ${params.city}`;' },
      200,
    );
    await expect
      .poll(() => updates, { timeout: 10_000 })
      .toEqual(['docs://handbook', 'weather://Lyon/today']);
    expect(await client.readResource({ uri: 'weather://Lyon/today' })).toMatchObject({
      contents: [{ text: 'rainy in Lyon' }],
    });
  }, 60_000);

  it('hears of a prompt and a resource added on the first replica', async () => {
    const { client, streamOpen } = session;
    let promptChanges = 0;
    let resourceChanges = 0;
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => void promptChanges++);
    client.setNotificationHandler(
      ResourceListChangedNotificationSchema,
      () => void resourceChanges++,
    );
    await streamOpen;
    await put(`${SHARED}/prompts/farewell`, { description: 'bye', code: 'return "Bye";' }, 201);
    await expect.poll(() => promptChanges, { timeout: 10_000 }).toBe(1);
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual([
      'farewell',
      'greeting',
      'summary',
    ]);
    await put(`${SHARED}/resources/extra`, { uri: 'docs://extra', text: 'more' }, 201);
    await expect.poll(() => resourceChanges, { timeout: 10_000 }).toBe(1);
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual([
      'docs://extra',
      'docs://handbook',
    ]);
  });
});

it('pages prompts whose names the database orders differently from code units', async () => {
  // ICU puts a000…a052 before B000…B051; code units put every B first.
  await createServer('paged');
  const names = [
    ...Array.from({ length: 53 }, (_, i) => `a${String(i).padStart(3, '0')}`),
    ...Array.from({ length: 52 }, (_, i) => `B${String(i).padStart(3, '0')}`),
  ];
  for (const name of names) {
    await put(
      `/api/servers/paged/prompts/${name}`,
      { description: name, code: 'return "x";' },
      201,
    );
  }
  const { client } = await connectWhenReady(
    'paged',
    async (candidate) =>
      candidate.getServerCapabilities()?.prompts !== undefined &&
      // Saved last: once the second replica renders it, it holds every one.
      (await second.admin('POST', '/api/servers/paged/prompts/B051/render', {})).body.ok === true,
  );
  const seen: string[] = [];
  let cursor: string | undefined;
  // A bounded walk: a cursor that leads back to an earlier page must not hang the test.
  for (let page = 0; page < 4; page++) {
    const listed = await client.listPrompts(cursor === undefined ? undefined : { cursor });
    seen.push(...listed.prompts.map((p) => p.name));
    cursor = listed.nextCursor;
    if (cursor === undefined) break;
  }
  expect(cursor).toBeUndefined();
  expect(seen).toHaveLength(105);
  expect([...seen].sort()).toEqual([...names].sort());
}, 120_000);
