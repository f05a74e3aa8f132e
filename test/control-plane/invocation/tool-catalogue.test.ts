/**
 * A server's tool catalogue is bounded (issue 28, finding 2), as an operator
 * and an MCP client see it through the admin API and the official SDK client
 * on one control plane (SQLite):
 * - tools count toward SERVER_ENTRIES_MAX_BYTES with the server's prompts and
 *   resources: a save past it is refused naming it, a save that does not grow
 *   the server passes, and another server keeps its own budget;
 * - `tools/list` pages by count and by bytes, in one order, with a cursor only
 *   it gave;
 * - a tool's or prompt's history keeps VERSIONS_KEPT versions within
 *   VERSIONS_MAX_BYTES (the current one always), what is stored shrinks with
 *   it, and the version listing says how many are kept and that older ones
 *   are pruned.
 */
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_MAX_BYTES, PAGE_MAX_ITEMS } from '../../../control-plane/mcp/pagination.js';
import { connectSdkSession } from '../../support/sdk-session.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';

const KiB = 1024;
const MiB = 1024 * KiB;

let plane: TestControlPlane;
const clients: Client[] = [];

async function connect(subdomain: string): Promise<Client> {
  const { client } = await connectSdkSession(plane.mcpUrl(subdomain));
  clients.push(client);
  return client;
}

async function createServer(subdomain: string): Promise<void> {
  expect((await plane.admin('POST', '/api/servers', { subdomain })).status).toBe(201);
  // A test client makes many requests in seconds: more than a caller's default burst.
  const limits = await plane.admin('PATCH', `/api/servers/${subdomain}/settings`, {
    rateLimit: { perMinute: 100_000, burst: 10_000 },
  });
  expect(limits.status, JSON.stringify(limits.body)).toBe(200);
}

/** A tool whose code is about `bytes` long (ASCII: bytes and characters agree). */
function toolOfSize(bytes: number, label = 'x'): Record<string, unknown> {
  return { description: label, code: `return 1; // ${'x'.repeat(Math.max(0, bytes - 14))}` };
}

async function saveTool(sub: string, name: string, body: unknown) {
  return plane.admin('PUT', `/api/servers/${sub}/tools/${name}`, body);
}

/** Every page of tools/list, following nextCursor. */
async function allPages(client: Client): Promise<{ tools: Tool[]; nextCursor?: string }[]> {
  const pages: { tools: Tool[]; nextCursor?: string }[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    pages.push(page);
    cursor = page.nextCursor;
    if (pages.length > 50) throw new Error('tools/list never ended');
  } while (cursor !== undefined);
  return pages;
}

function storedRows(statement: string, ...values: unknown[]): Record<string, unknown>[] {
  const database = new SqliteDatabase(join(plane.dataDir, 'mcphost.db'), { readonly: true });
  try {
    return database.prepare(statement).all(...values) as Record<string, unknown>[];
  } finally {
    database.close();
  }
}

beforeAll(async () => {
  plane = await startTestControlPlane({
    GENERIC_POOL_SIZE: '0',
    POOL_MIN_WARM: '0',
    SERVER_ENTRIES_MAX_BYTES: String(4 * MiB),
    VERSIONS_KEPT: '5',
    VERSIONS_MAX_BYTES: String(2 * MiB),
  });
}, 120_000);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  await plane?.close();
});

describe("a server's tools count toward SERVER_ENTRIES_MAX_BYTES", () => {
  it('refuses the save that would pass it, naming it; shrinking passes; others keep theirs', async () => {
    await createServer('big');
    await createServer('neighbour');
    for (const name of ['t1', 't2', 't3', 't4']) {
      const saved = await saveTool('big', name, toolOfSize(900 * KiB));
      expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    }
    const refused = await saveTool('big', 't5', toolOfSize(900 * KiB));
    expect(refused.status, JSON.stringify(refused.body).slice(0, 500)).toBe(400);
    expect(refused.body.error.code).toBe('ERR_VALIDATION');
    expect(refused.body.error.message).toContain('SERVER_ENTRIES_MAX_BYTES');
    // Prompts and resources share the one budget: the tools left no room for this one.
    const prompt = await plane.admin('PUT', '/api/servers/big/prompts/long', {
      description: 'long',
      messages: [{ role: 'user', content: { type: 'text', text: 'y'.repeat(900 * KiB) } }],
    });
    expect(prompt.status, JSON.stringify(prompt.body).slice(0, 500)).toBe(400);
    expect(prompt.body.error.message).toContain('SERVER_ENTRIES_MAX_BYTES');
    // A save that makes the server smaller always passes, and then room is made.
    expect((await saveTool('big', 't4', toolOfSize(10 * KiB))).status).toBe(200);
    expect((await saveTool('big', 't5', toolOfSize(800 * KiB))).status).toBe(201);
    // Another server's budget is its own.
    for (const name of ['n1', 'n2', 'n3', 'n4']) {
      expect((await saveTool('neighbour', name, toolOfSize(900 * KiB))).status).toBe(201);
    }
    const listed = await plane.admin('GET', '/api/servers/big/tools');
    expect(listed.body.tools.map((tool: { name: string }) => tool.name)).toEqual([
      't1',
      't2',
      't3',
      't4',
      't5',
    ]);
  }, 120_000);
});

describe('tools/list', () => {
  it('pages by count in code-unit order, each name once, and refuses a cursor it did not give', async () => {
    await createServer('many');
    // Upper and lower case: ICU would interleave them, code-unit order does not.
    const names = Array.from({ length: 230 }, (_, i) =>
      i % 2 === 0 ? `Tool-${String(i).padStart(3, '0')}` : `tool-${String(i).padStart(3, '0')}`,
    );
    for (const name of names) {
      const saved = await saveTool('many', name, { description: name, code: 'return 1;' });
      expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    }
    const client = await connect('many');
    const pages = await allPages(client);
    expect(pages.map((page) => page.tools.length)).toEqual([100, 100, 30]);
    const listed = pages.flatMap((page) => page.tools.map((tool) => tool.name));
    expect(listed).toEqual([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));

    const refused = await client.listTools({ cursor: 'not a cursor!' }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(McpError);
    expect((refused as McpError).code).toBe(-32602);
  }, 180_000);

  it('pages by bytes: no page is larger than the page bound, whatever the schemas', async () => {
    await createServer('wide');
    // Each tool's listing is about 80 KB (a long description and a long schema).
    for (let i = 0; i < 30; i++) {
      const saved = await saveTool('wide', `wide-${String(i).padStart(2, '0')}`, {
        description: 'd'.repeat(16_000),
        code: 'return 1;',
        inputSchema: {
          type: 'object',
          description: 's'.repeat(60_000),
          properties: { a: { type: 'string' } },
        },
      });
      expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    }
    const client = await connect('wide');
    const pages = await allPages(client);
    expect(pages.length).toBeGreaterThan(1);
    for (const page of pages) {
      expect(page.tools.length).toBeLessThanOrEqual(PAGE_MAX_ITEMS);
      expect(Buffer.byteLength(JSON.stringify(page.tools))).toBeLessThanOrEqual(PAGE_MAX_BYTES);
    }
    expect(pages.flatMap((page) => page.tools).map((tool) => tool.name)).toEqual(
      Array.from({ length: 30 }, (_, i) => `wide-${String(i).padStart(2, '0')}`),
    );
  }, 120_000);
});

describe('version history', () => {
  it('keeps VERSIONS_KEPT versions of a tool, says so, and refuses a rollback to a pruned one', async () => {
    await createServer('history');
    for (let save = 1; save <= 30; save++) {
      const saved = await saveTool('history', 'busy', {
        description: `save ${save}`,
        code: `return ${save};`,
      });
      expect(saved.status).toBe(save === 1 ? 201 : 200);
    }
    const listed = await plane.admin('GET', '/api/servers/history/tools/busy/versions');
    expect(listed.status).toBe(200);
    expect(listed.body.versions.map((v: { version: number }) => v.version)).toEqual([
      30, 29, 28, 27, 26,
    ]);
    expect(listed.body.retention).toMatchObject({ versionsKept: 5, maxBytes: 2 * MiB });
    const [{ id }] = storedRows(
      "SELECT e.id FROM server_entries e JOIN servers s ON s.id = e.server_id WHERE s.subdomain = 'history' AND e.kind = 'tool' AND e.name = 'busy'",
    ) as [{ id: string }];
    expect(
      storedRows('SELECT version FROM server_entry_versions WHERE entry_id = ?', id),
    ).toHaveLength(5);

    const pruned = await plane.admin('POST', '/api/servers/history/tools/busy/rollback', {
      version: 3,
    });
    expect(pruned.status).toBe(404);
    expect(pruned.body.error.message).toContain('pruned');
    const rolledBack = await plane.admin('POST', '/api/servers/history/tools/busy/rollback', {
      version: 27,
    });
    expect(rolledBack.status).toBe(200);
    expect(rolledBack.body.version).toBe(31);
  }, 120_000);

  it('keeps a tool’s versions within VERSIONS_MAX_BYTES, the current one always', async () => {
    await createServer('heavy');
    for (let save = 1; save <= 4; save++) {
      expect((await saveTool('heavy', 'fat', toolOfSize(900 * KiB, `save ${save}`))).status).toBe(
        save === 1 ? 201 : 200,
      );
    }
    const listed = await plane.admin('GET', '/api/servers/heavy/tools/fat/versions');
    expect(listed.body.versions.map((v: { version: number }) => v.version)).toEqual([4, 3]);
    const [{ bytes }] = storedRows(
      "SELECT sum(octet_length(v.definition)) AS bytes FROM server_entry_versions v JOIN server_entries e ON e.id = v.entry_id WHERE e.kind = 'tool' AND e.name = 'fat'",
    ) as [{ bytes: number }];
    expect(bytes).toBeLessThanOrEqual(2 * MiB);
  }, 120_000);

  it('bounds a prompt’s versions the same way', async () => {
    await createServer('prompted');
    for (let save = 1; save <= 8; save++) {
      const saved = await plane.admin('PUT', '/api/servers/prompted/prompts/hello', {
        description: `save ${save}`,
        code: 'return "hi";',
      });
      expect(saved.status).toBe(save === 1 ? 201 : 200);
    }
    const listed = await plane.admin('GET', '/api/servers/prompted/prompts/hello/versions');
    expect(listed.body.versions.map((v: { version: number }) => v.version)).toEqual([
      8, 7, 6, 5, 4,
    ]);
    expect(listed.body.retention).toMatchObject({ versionsKept: 5 });
  }, 60_000);
});
