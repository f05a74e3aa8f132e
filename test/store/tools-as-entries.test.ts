/**
 * Migration 0013 moves every tool, with its kept versions, from `tools` and
 * `tool_versions` into the entries every other definition uses: a store an
 * older mcphost wrote reads back the same tools, histories, versions and
 * times, keeps versioning and rolling them back, and a backup taken before
 * the migration restores into a store after it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../control-plane/store/index.js';
import { postgresTarget, sqliteTarget, type StoreTarget } from './store-targets.js';

const BEFORE = '0012-invocation-protocol';
const SERVER_ID = '00000000-0000-4000-8000-000000000001';
const MOVE_ID = '00000000-0000-4000-8000-000000000002';
const PLAIN_ID = '00000000-0000-4000-8000-000000000003';
const inputSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: { to: { type: 'string' } },
};

/** A tool's definition columns as an mcphost before 0013 wrote them. */
function legacyColumns(description: string, withMetadata: boolean) {
  return {
    description,
    code: `return "${description}";`,
    parameters: '[]',
    secret_names: '["API_KEY"]',
    limits: '{"timeoutMs":5000}',
    strict: withMetadata ? 1 : 0,
    title: withMetadata ? 'Move' : null,
    annotations: withMetadata ? '{"readOnlyHint":true}' : null,
    input_schema: withMetadata ? JSON.stringify(inputSchema) : null,
    output_schema: null,
  };
}

async function insert(target: StoreTarget, table: string, row: Record<string, unknown>) {
  const columns = Object.keys(row);
  await target.raw(
    `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
    Object.values(row),
  );
}

/** A server row as an mcphost before 0013 wrote it (later columns take their defaults). */
async function insertServer(target: StoreTarget, subdomain: string): Promise<void> {
  await insert(target, 'servers', {
    id: SERVER_ID,
    subdomain,
    name: subdomain,
    security_mode: 'none',
    oauth_required_scopes: '[]',
    active: 1,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
  });
}

/** What an older mcphost left: a server with two tools, one with a history of three. */
async function writeOlderStore(target: StoreTarget): Promise<void> {
  await target.migrateTo(BEFORE);
  await insertServer(target, 'older');
  const tool = (id: string, name: string, version: number, withMetadata: boolean) => ({
    id,
    server_id: SERVER_ID,
    name,
    ...legacyColumns(`${name} v${version}`, withMetadata),
    version,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: `2026-01-0${version}T00:00:00.000Z`,
  });
  await insert(target, 'tools', tool(MOVE_ID, 'move', 3, true));
  await insert(target, 'tools', tool(PLAIN_ID, 'plain', 1, false));
  for (const version of [1, 2, 3]) {
    await insert(target, 'tool_versions', {
      tool_id: MOVE_ID,
      version,
      ...legacyColumns(`move v${version}`, version === 3),
      saved_at: `2026-01-0${version}T00:00:00.000Z`,
    });
  }
  await insert(target, 'tool_versions', {
    tool_id: PLAIN_ID,
    version: 1,
    ...legacyColumns('plain v1', false),
    saved_at: '2026-01-01T00:00:00.000Z',
  });
  await insert(target, 'pool_settings', {
    server_id: SERVER_ID,
    tool_name: 'plain',
    min_warm: 1,
    max_size: 2,
    updated_at: '2026-01-01T00:00:00.000Z',
  });
}

const expectedMove = {
  subdomain: 'older',
  name: 'move',
  title: 'Move',
  description: 'move v3',
  code: 'return "move v3";',
  parameters: [],
  inputSchema,
  annotations: { readOnlyHint: true },
  secrets: ['API_KEY'],
  limits: { timeoutMs: 5000 },
  strict: true,
  version: 3,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-03T00:00:00.000Z',
};

for (const makeTarget of [sqliteTarget, postgresTarget]) {
  const target = makeTarget();

  describe(`tools become entries on ${target.dialect}`, () => {
    let store: Store;

    beforeAll(async () => {
      await target.setup();
      await writeOlderStore(target);
      store = await target.open();
    });
    afterAll(async () => {
      await store?.close();
      await target.teardown();
    });

    it('reads back every tool as it was, metadata absent where it had none', async () => {
      expect(await store.getTool('older', 'move')).toEqual(expectedMove);
      const plain = await store.getTool('older', 'plain');
      expect(plain).toMatchObject({ description: 'plain v1', strict: false, version: 1 });
      for (const key of ['title', 'annotations', 'inputSchema', 'outputSchema']) {
        expect(plain).not.toHaveProperty(key);
      }
      expect((await store.listTools('older')).map((tool) => tool.name)).toEqual(['move', 'plain']);
      // Key order of a schema as written is kept ($schema first).
      expect(JSON.stringify((await store.getTool('older', 'move'))?.inputSchema)).toBe(
        JSON.stringify(inputSchema),
      );
    });

    it('keeps the history, which versions and rolls back as before', async () => {
      const versions = await store.listToolVersions('older', 'move');
      expect(
        versions.map((version) => [version.version, version.description, version.savedAt]),
      ).toEqual([
        [3, 'move v3', '2026-01-03T00:00:00.000Z'],
        [2, 'move v2', '2026-01-02T00:00:00.000Z'],
        [1, 'move v1', '2026-01-01T00:00:00.000Z'],
      ]);
      const rolledBack = await store.rollbackTool('older', 'move', 1);
      expect(rolledBack).toMatchObject({ version: 4, description: 'move v1' });
      expect(rolledBack).not.toHaveProperty('title');
      const saved = await store.saveTool('older', 'move', {
        description: 'new',
        code: 'return 1;',
      });
      expect(saved.version).toBe(5);
    });

    it('drops the old tables, and a tool deleted now takes its pool settings along', async () => {
      const tables = await target.raw(
        target.dialect === 'sqlite'
          ? "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('tools', 'tool_versions')"
          : "SELECT table_name FROM information_schema.tables WHERE table_name IN ('tools', 'tool_versions')",
      );
      expect(tables).toEqual([]);
      expect(await store.getPoolSettings()).toHaveLength(1);
      await store.deleteTool('older', 'plain');
      expect(await store.getPoolSettings()).toEqual([]);
    });
  });
}

describe('a backup taken before tools became entries', () => {
  const target = sqliteTarget();
  let store: Store;

  beforeAll(async () => {
    await target.setup();
    store = await target.open();
  });
  afterAll(async () => {
    await store?.close();
    await target.teardown();
  });

  /** A backup as an mcphost before 0013 wrote it: the tools in their own tables. */
  function olderBackup(toolRows: Record<string, unknown>[]) {
    return {
      format: 'mcphost-backup',
      formatVersion: 1,
      createdAt: '2026-01-04T00:00:00.000Z',
      migrations: ['0001-initial', BEFORE],
      tables: {
        servers: [
          {
            id: SERVER_ID,
            subdomain: 'older',
            name: 'older',
            security_mode: 'none',
            oauth_server_url: null,
            oauth_metadata: null,
            oauth_audience: null,
            oauth_required_scopes: '[]',
            limits: '{}',
            tenancy: '{}',
            active: 1,
            created_at: '2026-01-01T00:00:00.000Z',
            updated_at: '2026-01-01T00:00:00.000Z',
          },
        ],
        tools: toolRows,
        tool_versions: [
          {
            tool_id: MOVE_ID,
            version: 3,
            ...legacyColumns('move v3', true),
            saved_at: '2026-01-03T00:00:00.000Z',
          },
        ],
        secrets: [],
        pool_settings: [],
        server_entries: [],
        server_entry_versions: [],
      },
    };
  }

  it('restores its tools as entries', async () => {
    const counts = await store.importBackup(
      olderBackup([
        {
          id: MOVE_ID,
          server_id: SERVER_ID,
          name: 'move',
          ...legacyColumns('move v3', true),
          version: 3,
          created_at: '2026-01-01T00:00:00.000Z',
          updated_at: '2026-01-03T00:00:00.000Z',
        },
      ]),
      { replace: false },
    );
    expect(counts).toEqual({ servers: 1, tools: 1, secrets: 0 });
    expect(await store.getTool('older', 'move')).toEqual(expectedMove);
    expect((await store.listToolVersions('older', 'move')).map((v) => v.version)).toEqual([3]);
    // And a backup of it now is of the new shape.
    const backup = await store.exportBackup();
    expect(backup.tables).not.toHaveProperty('tools');
    expect(backup.tables.server_entries).toHaveLength(1);
  });

  it('refuses one whose tool rows are malformed, writing nothing', async () => {
    const broken = olderBackup([
      { id: PLAIN_ID, server_id: SERVER_ID, name: 'x', parameters: '{' },
    ]);
    await expect(store.importBackup(broken, { replace: true })).rejects.toMatchObject({
      code: 'ERR_VALIDATION',
      message: expect.stringContaining(
        `the backup's tools cannot be read (tool ${PLAIN_ID} ("x"): description`,
      ),
    });
    expect(await store.getTool('older', 'move')).toEqual(expectedMove);
  });
});

describe('a move that fails on SQLite, and a server over the bound from before', () => {
  const target = sqliteTarget();
  const ids = Array.from(
    { length: 1001 },
    (_, index) => `10000000-0000-4000-8000-${String(index).padStart(12, '0')}`,
  );
  const broken = ids[700]!;

  beforeAll(async () => {
    await target.setup();
    await target.migrateTo(BEFORE);
    await insertServer(target, 'crowded');
    // 1,001 tools: more than a server may hold now, as a store from before the bound could.
    const rows = ids.map((id, index) => ({
      id,
      server_id: SERVER_ID,
      name: `t${index}`,
      ...legacyColumns(`t${index}`, false),
      ...(id === broken ? { parameters: '{' } : {}),
      version: 1,
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
    }));
    const columns = Object.keys(rows[0]!);
    await target.raw(
      `INSERT INTO tools (${columns.join(', ')}) VALUES ${rows.map(() => `(${columns.map(() => '?').join(', ')})`).join(', ')}`,
      rows.flatMap((row) => Object.values(row)),
    );
  });
  afterAll(async () => {
    await target.teardown();
  });

  it('changes nothing when a row cannot be moved, names it, and moves all once it is mended', async () => {
    await expect(target.open()).rejects.toMatchObject({
      code: 'ERR_STORE',
      message: expect.stringContaining(`tool ${broken} ("t700"): parameters is not JSON text`),
    });
    expect(await target.raw("SELECT id FROM server_entries WHERE kind = 'tool'")).toEqual([]);
    expect(await target.raw('SELECT count(*) AS n FROM tools')).toEqual([{ n: 1001 }]);

    await target.raw('UPDATE tools SET parameters = ? WHERE id = ?', ['[]', broken]);
    const store = await target.open();
    try {
      expect(await store.listTools('crowded')).toHaveLength(1001);
      // Over the bound, it still updates and rolls back what it has, and takes no new tool.
      expect(
        (await store.saveTool('crowded', 't0', { description: 'again', code: 'return 2;' }))
          .version,
      ).toBe(2);
      expect((await store.rollbackTool('crowded', 't0', 2)).version).toBe(3);
      await expect(
        store.saveTool('crowded', 'one-more', { description: '', code: 'return 1;' }),
      ).rejects.toMatchObject({
        code: 'ERR_VALIDATION',
        message: expect.stringContaining('at most 1000 tools'),
      });
    } finally {
      await store.close();
    }
  });
});
