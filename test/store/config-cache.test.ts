/**
 * The configuration cache follows the store: within one SQLite process, and
 * across two Store instances on one PostgreSQL database (a replica
 * simulation through LISTEN/NOTIFY).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigCache, type Store } from '../../control-plane/store/index.js';
import { postgresTarget, sampleTool, sqliteTarget, type StoreTarget } from './store-targets.js';

for (const makeTarget of [sqliteTarget, postgresTarget]) {
  const target: StoreTarget = makeTarget();
  const replicated = target.dialect === 'postgres';

  describe(`ConfigCache on ${target.dialect}${replicated ? ' (writes by another replica)' : ''}`, () => {
    let writer: Store;
    let reader: Store;
    let cache: ConfigCache;
    const invalidated: string[] = [];

    beforeAll(async () => {
      await target.setup();
      writer = await target.open();
      // On PostgreSQL the cache sits on a second Store, as on another control-plane replica.
      reader = replicated ? await target.open() : writer;
      await writer.createServer({ subdomain: 'preloaded' });
      await writer.saveTool('preloaded', 'add', sampleTool());
      await writer.putSecret('preloaded', 'API_KEY', 'secret-1');
      cache = new ConfigCache(reader);
      cache.onInvalidate((subdomain) => invalidated.push(subdomain));
      await cache.start();
    });
    afterAll(async () => {
      cache.stop();
      await writer.close();
      if (reader !== writer) await reader.close();
      await target.teardown();
    });

    it('serves what was stored at start synchronously, records frozen', () => {
      expect(cache.server('preloaded')).toMatchObject({ subdomain: 'preloaded', active: true });
      expect(cache.tool('preloaded', 'add')).toMatchObject({
        version: 1,
        code: 'return params.a + params.b;',
      });
      expect(cache.tools('preloaded').map((tool) => tool.name)).toEqual(['add']);
      expect(cache.secrets('preloaded')).toEqual({ API_KEY: 'secret-1' });
      expect(cache.server('absent')).toBeUndefined();
      expect(cache.tools('absent')).toEqual([]);
      expect(cache.secrets('absent')).toEqual({});
      const tool = cache.tool('preloaded', 'add')!;
      expect(() => {
        (tool.parameters as { name: string }[])[0]!.name = 'mutated';
      }).toThrow(TypeError);
    });

    it('picks up a new tool version and announces the server', async () => {
      invalidated.length = 0;
      await writer.saveTool('preloaded', 'add', sampleTool({ code: 'return 42;' }));
      await vi.waitFor(() => expect(cache.tool('preloaded', 'add')?.version).toBe(2), {
        timeout: 5000,
      });
      expect(cache.tool('preloaded', 'add')?.code).toBe('return 42;');
      expect(invalidated).toEqual(['preloaded']);
    });

    it('picks up secret changes, new servers and settings, and deletions', async () => {
      await writer.putSecret('preloaded', 'API_KEY', 'secret-2');
      await writer.createServer({ subdomain: 'later' });
      await writer.updateServerSettings('later', { active: false });
      await vi.waitFor(
        () => {
          expect(cache.secrets('preloaded').API_KEY).toBe('secret-2');
          expect(cache.server('later')?.active).toBe(false);
        },
        { timeout: 5000 },
      );
      expect(cache.servers().map((server) => server.subdomain)).toEqual(['later', 'preloaded']);

      invalidated.length = 0;
      await writer.deleteServer('later');
      await vi.waitFor(() => expect(cache.server('later')).toBeUndefined(), { timeout: 5000 });
      expect(invalidated).toEqual(['later']);
    });

    it('does not announce writes that leave the configuration as it was', async () => {
      invalidated.length = 0;
      await writer.putPoolSettings('preloaded', 'add', { minWarm: 1, maxSize: 2 });
      await writer.setMeta('some_key', 'value');
      await writer.saveTool('preloaded', 'touch', sampleTool());
      await vi.waitFor(() => expect(cache.tool('preloaded', 'touch')).toBeDefined(), {
        timeout: 5000,
      });
      await cache.settled();
      expect(invalidated).toEqual(['preloaded']);
    });

    if (replicated) {
      it('re-establishes a lost LISTEN connection and resynchronises', async () => {
        const changes: unknown[] = [];
        const unsubscribe = reader.onChange((change) => changes.push(change));
        const [database] = await target.raw('SELECT current_database() AS name');
        const terminated = await target.raw(
          `SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity
           WHERE datname = ? AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()`,
          [database?.name],
        );
        expect(terminated.length).toBeGreaterThanOrEqual(2); // writer's and reader's listeners
        await vi.waitFor(
          () => expect(changes).toContainEqual({ subdomain: null, kind: 'resync' }),
          {
            timeout: 10_000,
          },
        );
        await writer.saveTool('preloaded', 'after-reconnect', sampleTool());
        await vi.waitFor(() => expect(cache.tool('preloaded', 'after-reconnect')).toBeDefined(), {
          timeout: 5000,
        });
        unsubscribe();
      });
    }
  });
}

describe('ConfigCache start', () => {
  const target = sqliteTarget();
  afterAll(() => target.teardown());

  it('fails with the wrong-key message when the master key does not fit', async () => {
    const store = await target.open();
    await store.createServer({ subdomain: 'keyed' });
    await store.putSecret('keyed', 'TOKEN', 'value');
    await store.close();
    const wrongKey = await target.open({ masterKey: Buffer.alloc(32, 1) });
    const cache = new ConfigCache(wrongKey);
    await expect(cache.start()).rejects.toMatchObject({
      code: 'ERR_STORE',
      message: 'cannot decrypt secret TOKEN: wrong MASTER_KEY?',
    });
    cache.stop();
    await wrongKey.close();
  });
});
