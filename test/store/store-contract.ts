/**
 * The store's behaviour, written once and run against every dialect
 * (`sqlite-store.test.ts`, `postgres-store.test.ts`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../control-plane/store/index.js';
import {
  sampleInvocation,
  sampleTool,
  TEST_MASTER_KEY,
  type StoreTarget,
} from './store-targets.js';

/** Defines the shared suite for one target. */
export function defineStoreContract(makeTarget: () => StoreTarget): void {
  const target = makeTarget();
  const open: Store[] = [];
  let store: Store;
  let counter = 0;
  /** A subdomain unused so far in this file. */
  const fresh = () => `srv-${process.pid}-${++counter}`;

  async function openTracked(options?: Parameters<StoreTarget['open']>[0]): Promise<Store> {
    const opened = await target.open(options);
    open.push(opened);
    return opened;
  }

  beforeAll(async () => {
    await target.setup();
    store = await openTracked();
  });
  afterAll(async () => {
    await Promise.all(open.map((each) => each.close()));
    await target.teardown();
  });

  describe(`store on ${target.dialect}`, () => {
    it('reports its dialect', () => {
      expect(store.dialect).toBe(target.dialect);
    });

    describe('servers', () => {
      it('creates, reads, lists, updates and deletes a server', async () => {
        const subdomain = fresh();
        const created = await store.createServer({ subdomain, name: 'Alpha' });
        expect(created).toMatchObject({
          subdomain,
          name: 'Alpha',
          securityMode: 'none',
          oauthServerUrl: null,
          oauthMetadata: null,
          oauthAudience: null,
          oauthRequiredScopes: [],
          active: true,
        });
        expect(new Date(created.createdAt).toISOString()).toBe(created.createdAt);
        expect(await store.getServer(subdomain)).toEqual(created);
        expect((await store.listServers()).map((server) => server.subdomain)).toContain(subdomain);

        const metadata = {
          issuer: 'https://as.example',
          jwks_uri: 'https://as.example/jwks',
          extra: 1,
        };
        const updated = await store.updateServerSettings(subdomain, {
          securityMode: 'oauth2',
          oauthServerUrl: 'https://as.example',
          oauthMetadata: metadata,
          oauthAudience: 'api://alpha',
          oauthRequiredScopes: ['tools:call'],
          active: false,
        });
        expect(updated).toMatchObject({
          securityMode: 'oauth2',
          oauthMetadata: metadata,
          active: false,
        });
        expect(await store.getServer(subdomain)).toEqual(updated);

        await store.deleteServer(subdomain);
        expect(await store.getServer(subdomain)).toBeUndefined();
        await expect(store.deleteServer(subdomain)).rejects.toMatchObject({
          code: 'ERR_NOT_FOUND',
        });
      });

      it('names a server after its subdomain by default', async () => {
        const subdomain = fresh();
        expect((await store.createServer({ subdomain })).name).toBe(subdomain);
      });

      it('refuses a duplicate subdomain with ERR_CONFLICT', async () => {
        const subdomain = fresh();
        await store.createServer({ subdomain });
        await expect(store.createServer({ subdomain })).rejects.toMatchObject({
          code: 'ERR_CONFLICT',
          message: `a server with subdomain "${subdomain}" already exists`,
        });
      });

      it('refuses an invalid subdomain with ERR_VALIDATION', async () => {
        await expect(store.createServer({ subdomain: 'Not_A_Label' })).rejects.toMatchObject({
          code: 'ERR_VALIDATION',
        });
      });

      it('refuses oauth2 mode without metadata and leaves the settings as they were', async () => {
        const subdomain = fresh();
        const before = await store.createServer({ subdomain });
        await expect(
          store.updateServerSettings(subdomain, { securityMode: 'oauth2' }),
        ).rejects.toMatchObject({
          code: 'ERR_VALIDATION',
        });
        expect(await store.getServer(subdomain)).toEqual(before);
        await expect(store.updateServerSettings('absent', { active: false })).rejects.toMatchObject(
          {
            code: 'ERR_NOT_FOUND',
          },
        );
      });

      it('cascades a server deletion to tools, versions, secrets and pool settings', async () => {
        const subdomain = fresh();
        const server = await store.createServer({ subdomain });
        await store.saveTool(subdomain, 'add', sampleTool());
        await store.putSecret(subdomain, 'API_KEY', 'k');
        await store.putPoolSettings(subdomain, 'add', { minWarm: 1, maxSize: 2 });
        await store.deleteServer(subdomain);
        for (const table of ['server_entries', 'secrets', 'pool_settings']) {
          expect(
            await target.raw(`SELECT * FROM ${table} WHERE server_id = ?`, [server.id]),
          ).toEqual([]);
        }
        const orphans = await target.raw(
          'SELECT v.entry_id FROM server_entry_versions v LEFT JOIN server_entries e ON e.id = v.entry_id WHERE e.id IS NULL',
        );
        expect(orphans).toEqual([]);
      });
    });

    describe('tools', () => {
      it('saves a tool with defaults, lists, reads and deletes it', async () => {
        const subdomain = fresh();
        await store.createServer({ subdomain });
        const saved = await store.saveTool(subdomain, 'add', sampleTool());
        expect(saved).toMatchObject({
          subdomain,
          name: 'add',
          version: 1,
          strict: false,
          secrets: ['API_KEY'],
          limits: { timeoutMs: 5000 },
        });
        expect(saved.parameters[0]).toEqual({
          name: 'a',
          type: 'number',
          required: true,
          description: 'first',
        });
        expect(await store.getTool(subdomain, 'add')).toEqual(saved);
        expect(await store.listTools(subdomain)).toEqual([saved]);

        await store.deleteTool(subdomain, 'add');
        expect(await store.getTool(subdomain, 'add')).toBeUndefined();
        await expect(store.deleteTool(subdomain, 'add')).rejects.toMatchObject({
          code: 'ERR_NOT_FOUND',
        });
      });

      it('validates definitions and names', async () => {
        const subdomain = fresh();
        await store.createServer({ subdomain });
        await expect(
          store.saveTool(
            subdomain,
            'x',
            sampleTool({ parameters: [{ name: 'a', type: 'date', required: true }] }),
          ),
        ).rejects.toMatchObject({
          code: 'ERR_VALIDATION',
          message: expect.stringContaining('parameters.0.type'),
        });
        await expect(store.saveTool(subdomain, 'bad name!', sampleTool())).rejects.toMatchObject({
          code: 'ERR_VALIDATION',
        });
        await expect(store.saveTool('absent', 'x', sampleTool())).rejects.toMatchObject({
          code: 'ERR_NOT_FOUND',
          message: 'server "absent" does not exist',
        });
      });

      it('keeps every version and rolls back by saving an old snapshot as a new version', async () => {
        const subdomain = fresh();
        await store.createServer({ subdomain });
        await store.saveTool(subdomain, 'add', sampleTool({ code: 'return 1;' }));
        await store.saveTool(subdomain, 'add', sampleTool({ code: 'return 2;', strict: true }));
        const third = await store.saveTool(subdomain, 'add', sampleTool({ code: 'return 3;' }));
        expect(third.version).toBe(3);

        const versions = await store.listToolVersions(subdomain, 'add');
        expect(versions.map((version) => [version.version, version.code])).toEqual([
          [3, 'return 3;'],
          [2, 'return 2;'],
          [1, 'return 1;'],
        ]);
        expect(versions[1]?.strict).toBe(true);

        const rolledBack = await store.rollbackTool(subdomain, 'add', 2);
        expect(rolledBack).toMatchObject({ version: 4, code: 'return 2;', strict: true });
        expect(rolledBack.createdAt).toBe(third.createdAt);
        expect(await store.getTool(subdomain, 'add')).toEqual(rolledBack);
        expect((await store.listToolVersions(subdomain, 'add')).length).toBe(4);

        await expect(store.rollbackTool(subdomain, 'add', 99)).rejects.toMatchObject({
          code: 'ERR_NOT_FOUND',
          message: 'version 99 of tool "add" does not exist',
        });
      });

      it('leaves nothing changed when a save fails half-way', async () => {
        const subdomain = fresh();
        await store.createServer({ subdomain });
        const first = await store.saveTool(subdomain, 'add', sampleTool());
        await target.plantToolVersionFailure();
        // The tools row is updated before the version row fails to insert: both must roll back.
        await expect(
          store.saveTool(subdomain, 'add', sampleTool({ description: 'explode' })),
        ).rejects.toMatchObject({
          code: 'ERR_STORE',
          message: expect.stringContaining('planted failure'),
        });
        expect(await store.getTool(subdomain, 'add')).toEqual(first);
        expect((await store.listToolVersions(subdomain, 'add')).length).toBe(1);
        await expect(
          store.saveTool(subdomain, 'other', sampleTool({ description: 'explode' })),
        ).rejects.toMatchObject({
          code: 'ERR_STORE',
        });
        expect(await store.getTool(subdomain, 'other')).toBeUndefined();
      });

      it('keeps title, annotations and schemas as written, through versions and rollback', async () => {
        const subdomain = fresh();
        await store.createServer({ subdomain });
        const inputSchema = {
          $schema: 'https://json-schema.org/draft/2020-12/schema',
          type: 'object',
          $defs: { point: { type: 'object', properties: { x: { type: 'number' } } } },
          properties: { at: { $ref: '#/$defs/point' }, mode: { enum: ['a', 'b'] } },
          additionalProperties: false,
        };
        const outputSchema = { type: 'object', properties: { ok: { type: 'boolean' } } };
        const annotations = { title: 'Mover', readOnlyHint: false, destructiveHint: false };
        const saved = await store.saveTool(
          subdomain,
          'move',
          sampleTool({ parameters: [], title: 'Move', annotations, inputSchema, outputSchema }),
        );
        expect(saved).toMatchObject({ title: 'Move', annotations, inputSchema, outputSchema });
        const read = await store.getTool(subdomain, 'move');
        expect(read).toEqual(saved);
        // Stored as the JSON text it arrived as: key order ($schema first) included.
        expect(JSON.stringify(read?.inputSchema)).toBe(JSON.stringify(inputSchema));
        const [row] = await target.raw(
          "select definition from server_entries where kind = 'tool' and name = ? and server_id = (select id from servers where subdomain = ?)",
          ['move', subdomain],
        );
        const stored = String(row!.definition);
        expect(stored).toContain(`"inputSchema":${JSON.stringify(inputSchema)}`);
        expect(stored).toContain(`"outputSchema":${JSON.stringify(outputSchema)}`);
        expect(JSON.parse(stored)).toMatchObject({ title: 'Move' });

        // A version without metadata reads back without it (absent, not null).
        const plain = await store.saveTool(subdomain, 'move', sampleTool());
        const plainRead = await store.getTool(subdomain, 'move');
        for (const key of ['title', 'annotations', 'inputSchema', 'outputSchema']) {
          expect(plain).not.toHaveProperty(key);
          expect(plainRead).not.toHaveProperty(key);
        }
        expect(plainRead).toEqual(plain);
        const rolledBack = await store.rollbackTool(subdomain, 'move', 1);
        expect(rolledBack).toMatchObject({ version: 3, title: 'Move', inputSchema, outputSchema });
        expect((await store.listToolVersions(subdomain, 'move'))[2]).toMatchObject({
          version: 1,
          annotations,
        });
      });

      it('refuses a bad schema, or a schema beside parameters, naming the path', async () => {
        const subdomain = fresh();
        await store.createServer({ subdomain });
        await expect(
          store.saveTool(
            subdomain,
            'x',
            sampleTool({
              parameters: [],
              inputSchema: { type: 'object', properties: { a: { type: 'text' } } },
            }),
          ),
        ).rejects.toMatchObject({
          code: 'ERR_VALIDATION',
          message: expect.stringContaining('inputSchema.properties.a.type'),
        });
        await expect(
          store.saveTool(subdomain, 'x', sampleTool({ inputSchema: { type: 'object' } })),
        ).rejects.toMatchObject({
          code: 'ERR_VALIDATION',
          message: expect.stringContaining('either as parameters or as an inputSchema'),
        });
        await expect(
          store.saveTool(subdomain, 'x', sampleTool({ outputSchema: { type: 'string' } })),
        ).rejects.toMatchObject({ message: expect.stringContaining('outputSchema.type') });
        expect(await store.getTool(subdomain, 'x')).toBeUndefined();
      });

      it('gives concurrent saves of one tool distinct versions', async () => {
        const subdomain = fresh();
        await store.createServer({ subdomain });
        await store.saveTool(subdomain, 'add', sampleTool());
        const saves = await Promise.all(
          [1, 2, 3, 4].map((n) =>
            store.saveTool(subdomain, 'add', sampleTool({ code: `return ${n};` })),
          ),
        );
        expect(saves.map((save) => save.version).sort()).toEqual([2, 3, 4, 5]);
        expect((await store.getTool(subdomain, 'add'))?.version).toBe(5);
      });
    });

    describe('secrets', () => {
      it('stores values encrypted, lists names only, decrypts for the cache', async () => {
        const subdomain = fresh();
        const server = await store.createServer({ subdomain });
        const plaintext = 'sk-live-very-secret-value';
        const summary = await store.putSecret(subdomain, 'API_KEY', plaintext);
        expect(summary).toEqual({ name: 'API_KEY', updatedAt: expect.any(String) });
        await store.putSecret(subdomain, 'OTHER', plaintext);
        expect(await store.listSecrets(subdomain)).toEqual([
          { name: 'API_KEY', updatedAt: summary.updatedAt },
          { name: 'OTHER', updatedAt: expect.any(String) },
        ]);
        expect(await store.readSecrets(subdomain)).toEqual({
          API_KEY: plaintext,
          OTHER: plaintext,
        });

        const rows = await target.raw('SELECT name, ciphertext FROM secrets WHERE server_id = ?', [
          server.id,
        ]);
        expect(rows).toHaveLength(2);
        for (const row of rows) {
          const stored = String(row.ciphertext);
          expect(stored).not.toContain(plaintext);
          expect(stored).not.toContain(Buffer.from(plaintext).toString('base64').slice(0, 12));
        }
        // A fresh IV per value: equal plaintexts do not give equal ciphertexts.
        expect(rows[0]?.ciphertext).not.toBe(rows[1]?.ciphertext);

        await store.putSecret(subdomain, 'API_KEY', 'rotated');
        expect((await store.readSecrets(subdomain)).API_KEY).toBe('rotated');
        await store.deleteSecret(subdomain, 'OTHER');
        expect((await store.listSecrets(subdomain)).map((secret) => secret.name)).toEqual([
          'API_KEY',
        ]);
        await expect(store.deleteSecret(subdomain, 'OTHER')).rejects.toMatchObject({
          code: 'ERR_NOT_FOUND',
        });
      });

      it('binds a ciphertext to its secret: copied onto another name it does not decrypt', async () => {
        const subdomain = fresh();
        const server = await store.createServer({ subdomain });
        await store.putSecret(subdomain, 'A', 'value-a');
        await store.putSecret(subdomain, 'B', 'value-b');
        const [a] = await target.raw(
          'SELECT ciphertext FROM secrets WHERE server_id = ? AND name = ?',
          [server.id, 'A'],
        );
        await target.raw('UPDATE secrets SET ciphertext = ? WHERE server_id = ? AND name = ?', [
          a?.ciphertext,
          server.id,
          'B',
        ]);
        await expect(store.readSecrets(subdomain)).rejects.toMatchObject({
          code: 'ERR_STORE',
          message: 'cannot decrypt secret B: wrong MASTER_KEY?',
        });
      });

      it('says the master key is wrong when another key reads the secrets', async () => {
        const subdomain = fresh();
        await store.createServer({ subdomain });
        await store.putSecret(subdomain, 'TOKEN', 'x');
        const other = await openTracked({ masterKey: Buffer.alloc(32, 9) });
        await expect(other.readSecrets(subdomain)).rejects.toMatchObject({
          code: 'ERR_STORE',
          message: 'cannot decrypt secret TOKEN: wrong MASTER_KEY?',
        });
        expect(await other.listSecrets(subdomain)).toHaveLength(1);
      });
    });

    describe('pool settings and meta', () => {
      it('stores pool sizing per tool, replacing earlier values', async () => {
        const subdomain = fresh();
        await store.createServer({ subdomain });
        await store.putPoolSettings(subdomain, 'add', { minWarm: 1, maxSize: 3 });
        const saved = await store.putPoolSettings(subdomain, 'add', { minWarm: 0, maxSize: 5 });
        expect(saved).toMatchObject({ subdomain, tool: 'add', minWarm: 0, maxSize: 5 });
        const mine = (await store.getPoolSettings()).filter(
          (entry) => entry.subdomain === subdomain,
        );
        expect(mine).toEqual([saved]);
        await expect(
          store.putPoolSettings(subdomain, 'add', { minWarm: 4, maxSize: 2 }),
        ).rejects.toMatchObject({
          code: 'ERR_VALIDATION',
        });
        await expect(
          store.putPoolSettings('absent', 'add', { minWarm: 0, maxSize: 1 }),
        ).rejects.toMatchObject({
          code: 'ERR_NOT_FOUND',
        });
      });

      it('gets and sets meta values', async () => {
        expect(await store.getMeta('absent-key')).toBeUndefined();
        await store.setMeta('admin_token_hash', 'h1');
        await store.setMeta('admin_token_hash', 'h2');
        expect(await store.getMeta('admin_token_hash')).toBe('h2');
      });
    });

    describe('invocations', () => {
      it('appends and lists newest first, filtered by server and tool', async () => {
        const server = fresh();
        await store.appendInvocations([
          sampleInvocation(1, { server }),
          sampleInvocation(2, {
            server,
            tool: 'other',
            ok: false,
            errorCode: 'ERR_TOOL_ERROR',
            errorMessage: 'boom',
            era: 'modern',
            inputRounds: 2,
          }),
          sampleInvocation(3, {
            server,
            logs: [{ level: 'log', text: 'hi' }],
            caller: { kind: 'admin' },
            requestId: 'r1',
          }),
        ]);
        const all = await store.listInvocations({ server });
        expect(all.map((entry) => entry.id)).toEqual(['inv-3', 'inv-2', 'inv-1']);
        expect(all[0]).toEqual({
          ...sampleInvocation(3, { server }),
          // Entries written without a kind are tool calls.
          kind: 'tool',
          // And without a client address, have none.
          client: null,
          // An entry written without an era (a test run) has none, and no input rounds.
          era: null,
          inputRounds: 0,
          durationMs: 13,
          errorCode: null,
          errorMessage: null,
          logs: [{ level: 'log', text: 'hi' }],
          caller: { kind: 'admin' },
          requestId: 'r1',
        });
        expect(all[1]).toMatchObject({
          ok: false,
          errorCode: 'ERR_TOOL_ERROR',
          errorMessage: 'boom',
          era: 'modern',
          inputRounds: 2,
        });
        expect(
          (await store.listInvocations({ server, tool: 'other' })).map((entry) => entry.id),
        ).toEqual(['inv-2']);
        expect(await store.listInvocations({ server, limit: 1 })).toHaveLength(1);
        await expect(store.appendInvocations([{ id: 'x' } as never])).rejects.toMatchObject({
          code: 'ERR_VALIDATION',
        });
      });

      it('prunes per server: each keeps its floor and its newest rows, the largest pruned first', async () => {
        const small = await openTracked({
          invocationRetention: 20,
          invocationRetentionPerServer: 10,
        });
        await target.raw('DELETE FROM invocations');
        const [quiet, loud, gone] = [fresh(), fresh(), fresh()];
        await small.createServer({ subdomain: quiet });
        await small.createServer({ subdomain: loud });
        const rows = (server: string, count: number) =>
          Array.from({ length: count }, (_, index) => sampleInvocation(index, { server }));
        await small.appendInvocations([...rows(quiet, 8), ...rows(loud, 40), ...rows(gone, 6)]);
        expect(await small.pruneInvocations()).toBe(54 - 20);
        const ids = async (server: string) =>
          (await small.listInvocations({ server, limit: 1000 })).map((entry) => entry.id);
        // Quiet keeps all 8 (within its floor), loud its floor of 10, and the server
        // that no longer exists (no floor) what the bound of 20 leaves: 2.
        expect(await ids(quiet)).toHaveLength(8);
        expect(await ids(loud)).toEqual(
          Array.from({ length: 10 }, (_, index) => `inv-${39 - index}`),
        );
        expect(await ids(gone)).toEqual(['inv-5', 'inv-4']);
        expect(await small.pruneInvocations()).toBe(0);
      });

      it('adds refusal counts across replicas, lists and sums them, and prunes them by age', async () => {
        const other = await openTracked({ refusalRetentionHours: 1 });
        const [server, neighbour] = [fresh(), fresh()];
        const now = Date.now();
        const bucket = (minutesAgo: number) =>
          new Date(Math.floor(now / 60_000) * 60_000 - minutesAgo * 60_000).toISOString();
        const count = (code: string, minutesAgo: number, times: number, at = server) => ({
          server: at,
          code,
          bucketStart: bucket(minutesAgo),
          count: times,
        });
        // Two replicas add to the same bucket (at once only on PostgreSQL: two SQLite
        // stores in one process would wait on each other); one batch may name a bucket twice.
        const first = store.countRefusals([
          count('ERR_INVALID_ARGUMENT', 0, 3),
          count('ERR_INVALID_ARGUMENT', 0, 2),
        ]);
        if (target.dialect === 'sqlite') await first;
        await Promise.all([
          first,
          other.countRefusals([
            count('ERR_INVALID_ARGUMENT', 0, 4),
            count('ERR_UNKNOWN_TOOL', 2, 1),
          ]),
        ]);
        await other.countRefusals([
          count('ERR_INVALID_ARGUMENT', 120, 7),
          count('ERR_RATE_LIMITED', 0, 1, neighbour),
        ]);
        expect(await store.listRefusals({ servers: [server] })).toEqual([
          count('ERR_INVALID_ARGUMENT', 0, 9),
          count('ERR_UNKNOWN_TOOL', 2, 1),
          count('ERR_INVALID_ARGUMENT', 120, 7),
        ]);
        expect(await store.sumRefusals({ servers: [server] })).toEqual([
          {
            server,
            code: 'ERR_INVALID_ARGUMENT',
            count: 16,
            firstBucket: bucket(120),
            lastBucket: bucket(0),
          },
          {
            server,
            code: 'ERR_UNKNOWN_TOOL',
            count: 1,
            firstBucket: bucket(2),
            lastBucket: bucket(2),
          },
        ]);
        expect(await store.sumRefusals({ servers: [server], since: bucket(5) })).toHaveLength(2);
        expect((await store.sumRefusals({ servers: [server], since: bucket(5) }))[0]?.count).toBe(
          9,
        );
        expect(await store.listRefusals({ servers: [] })).toEqual([]);
        await expect(
          store.countRefusals([{ ...count('ERR_INVALID_ARGUMENT', 0, 1), code: 'made up' }]),
        ).rejects.toMatchObject({ code: 'ERR_VALIDATION' });
        // Kept an hour by the second store: the bucket of two hours ago goes.
        await other.pruneInvocations();
        expect((await store.listRefusals({ servers: [server] })).map((each) => each.count)).toEqual(
          [9, 1],
        );
      });
    });

    describe('lifecycle', () => {
      it('keeps everything across close and reopen', async () => {
        const subdomain = fresh();
        const first = await target.open();
        await first.createServer({ subdomain, name: 'Kept' });
        const tool = await first.saveTool(subdomain, 'add', sampleTool());
        await first.putSecret(subdomain, 'API_KEY', 'kept-secret');
        await first.close();

        const second = await openTracked({ masterKey: Buffer.from(TEST_MASTER_KEY) });
        expect((await second.getServer(subdomain))?.name).toBe('Kept');
        expect(await second.getTool(subdomain, 'add')).toEqual(tool);
        expect(await second.readSecrets(subdomain)).toEqual({ API_KEY: 'kept-secret' });
      });

      it('announces committed configuration writes to listeners in this process', async () => {
        const subdomain = fresh();
        const changes: unknown[] = [];
        const unsubscribe = store.onChange((change) => changes.push(change));
        await store.createServer({ subdomain });
        await store.saveTool(subdomain, 'add', sampleTool());
        await store.putSecret(subdomain, 'K', 'v');
        await expect(store.saveTool(subdomain, 'bad name!', sampleTool())).rejects.toThrow();
        unsubscribe();
        await store.deleteServer(subdomain);
        expect(changes).toEqual([
          { subdomain, kind: 'server' },
          { subdomain, kind: 'tools', name: 'add' },
          { subdomain, kind: 'secrets' },
        ]);
      });
    });
  });
}
