/**
 * What a server's definitions may hold in the store (issue 28, finding 2),
 * on SQLite and PostgreSQL: the current tools, prompts and resources of a
 * server share one byte budget (serverEntriesMaxBytes), checked so that two
 * saves at once cannot both pass it; and their histories are bounded — the
 * newest `versionsKept` of each within `versionsMaxBytes` (the current one
 * always), and a server's whole history within `serverVersionsMaxBytes`,
 * the oldest versions of any of its definitions going first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../control-plane/store/index.js';
import { postgresTarget, sqliteTarget, type StoreTarget } from './store-targets.js';

/** A tool of about `bytes` bytes as stored (code, description and the JSON columns). */
function toolOf(bytes: number, description = 'd') {
  return { description, code: 'x'.repeat(bytes - 10) };
}

/** A prompt of about `bytes` bytes as stored. */
function promptOf(bytes: number, description = 'd') {
  return {
    description,
    messages: [
      { role: 'user' as const, content: { type: 'text' as const, text: 'y'.repeat(bytes - 90) } },
    ],
  };
}

for (const makeTarget of [sqliteTarget, postgresTarget]) {
  const target: StoreTarget = makeTarget();

  describe(`definition bounds on ${target.dialect}`, () => {
    let store: Store;
    let counter = 0;
    // One second per write: "oldest" is then never a tie between two saves.
    let clock = Date.UTC(2031, 0, 1);
    const fresh = async () => {
      const subdomain = `bounds-${++counter}`;
      await store.createServer({ subdomain });
      return subdomain;
    };
    const versionsOf = async (sub: string, name: string) =>
      (await store.listToolVersions(sub, name)).map((version) => version.version);
    const historyBytes = async (sub: string) => {
      const [entries] = await target.raw(
        `SELECT coalesce(sum(octet_length(v.definition)), 0) AS bytes FROM server_entry_versions v
           JOIN server_entries e ON e.id = v.entry_id JOIN servers s ON s.id = e.server_id WHERE s.subdomain = ?`,
        [sub],
      );
      return Number(entries!.bytes);
    };

    beforeAll(async () => {
      await target.setup();
      store = await target.open({
        serverEntriesMaxBytes: 30_000,
        versionsKept: 3,
        versionsMaxBytes: 10_000,
        serverVersionsMaxBytes: 40_000,
        now: () => new Date((clock += 1000)),
      });
    });
    afterAll(async () => {
      await store?.close();
      await target.teardown();
    });

    it('keeps the newest versionsKept versions of a tool and of a prompt', async () => {
      const sub = await fresh();
      for (let save = 1; save <= 6; save++) {
        await store.saveTool(sub, 'counted', { description: `save ${save}`, code: 'return 1;' });
        await store.saveEntry('prompt', sub, 'counted', promptOf(200, `save ${save}`));
      }
      expect(await versionsOf(sub, 'counted')).toEqual([6, 5, 4]);
      expect(
        (await store.listEntryVersions('prompt', sub, 'counted')).map((v) => v.version),
      ).toEqual([6, 5, 4]);
      const rows = await target.raw(
        `SELECT v.version FROM server_entry_versions v JOIN server_entries e ON e.id = v.entry_id
           JOIN servers s ON s.id = e.server_id WHERE s.subdomain = ? AND e.kind = 'tool'`,
        [sub],
      );
      expect(rows).toHaveLength(3);
      expect(store.versionRetention).toEqual({
        versionsKept: 3,
        maxBytes: 10_000,
        serverMaxBytes: 40_000,
      });
    });

    it('keeps versions within versionsMaxBytes, and the current one even when it alone is larger', async () => {
      const sub = await fresh();
      for (let save = 1; save <= 3; save++) {
        await store.saveTool(sub, 'sized', toolOf(4000, `save ${save}`));
      }
      expect(await versionsOf(sub, 'sized')).toEqual([3, 2]);
      for (let save = 1; save <= 2; save++) {
        await store.saveTool(sub, 'huge', toolOf(12_000, `save ${save}`));
      }
      expect(await versionsOf(sub, 'huge')).toEqual([2]);
      expect((await store.getTool(sub, 'huge'))?.description).toBe('save 2');
    });

    it("bounds a server's whole history: the oldest go first, never a current one, never another server's", async () => {
      const subs = [await fresh(), await fresh()];
      for (const sub of subs) {
        for (const name of ['a', 'b', 'c', 'd']) {
          for (let save = 1; save <= 2; save++) {
            await store.saveTool(sub, name, toolOf(4500, `${name} ${save}`));
          }
        }
      }
      // 8 versions of 4.5 KB: within 40 KB. A prompt takes the server past it.
      const [victim, busy] = subs as [string, string];
      await store.saveEntry('prompt', busy, 'p', promptOf(4500));
      expect(await historyBytes(busy)).toBeLessThanOrEqual(40_000);
      expect(await versionsOf(busy, 'a')).toEqual([2]);
      for (const name of ['b', 'c', 'd']) expect(await versionsOf(busy, name)).toEqual([2, 1]);
      expect((await store.listEntryVersions('prompt', busy, 'p')).map((v) => v.version)).toEqual([
        1,
      ]);
      for (const name of ['a', 'b', 'c', 'd']) {
        expect(await versionsOf(victim, name)).toEqual([2, 1]);
      }
    });

    it('refuses a rollback to a pruned version, saying it was pruned', async () => {
      const sub = await fresh();
      for (let save = 1; save <= 5; save++) {
        await store.saveTool(sub, 'rolled', { description: `save ${save}`, code: 'return 1;' });
      }
      await expect(store.rollbackTool(sub, 'rolled', 1)).rejects.toMatchObject({
        code: 'ERR_NOT_FOUND',
        message: expect.stringContaining('pruned'),
      });
      await expect(store.rollbackTool(sub, 'rolled', 99)).rejects.toMatchObject({
        code: 'ERR_NOT_FOUND',
        message: 'version 99 of tool "rolled" does not exist',
      });
      expect((await store.rollbackTool(sub, 'rolled', 4)).version).toBe(6);
    });

    it('counts tools and prompts toward one budget; a save that does not grow the server passes', async () => {
      const sub = await fresh();
      await store.saveTool(sub, 'one', toolOf(12_000));
      await store.saveEntry('prompt', sub, 'two', promptOf(12_000));
      await expect(store.saveTool(sub, 'three', toolOf(8000))).rejects.toMatchObject({
        code: 'ERR_VALIDATION',
        message: expect.stringContaining('SERVER_ENTRIES_MAX_BYTES'),
      });
      await expect(store.saveEntry('prompt', sub, 'three', promptOf(8000))).rejects.toMatchObject({
        code: 'ERR_VALIDATION',
      });
      await store.saveTool(sub, 'one', toolOf(11_000));
      await store.saveTool(sub, 'three', toolOf(5000));
    });

    it.runIf(target.dialect === 'sqlite')(
      'holds at most MAX_ENTRIES_PER_KIND tools, however small',
      async () => {
        // A budget the thousand tools fit in: the count is what refuses the next.
        const roomy = await target.open({ serverEntriesMaxBytes: 1024 * 1024 });
        try {
          const sub = await fresh();
          for (let i = 0; i < 1000; i++) {
            await roomy.saveTool(sub, `t${i}`, { description: '', code: 'return 1;' });
          }
          await expect(
            roomy.saveTool(sub, 'one-more', { description: '', code: 'return 1;' }),
          ).rejects.toMatchObject({
            code: 'ERR_VALIDATION',
            message: 'a server holds at most 1000 tools; delete one first',
          });
          // Saving one it has is no new tool.
          await roomy.saveTool(sub, 't0', { description: 'again', code: 'return 1;' });
        } finally {
          await roomy.close();
        }
      },
      60_000,
    );

    it('lets only one of two saves at once take the last room', async () => {
      const sub = await fresh();
      await store.saveTool(sub, 'base', toolOf(14_000));
      const results = await Promise.allSettled([
        store.saveTool(sub, 'left', toolOf(10_000)),
        store.saveEntry('prompt', sub, 'right', promptOf(10_000)),
      ]);
      expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
      expect(results.find((result) => result.status === 'rejected')).toMatchObject({
        reason: { code: 'ERR_VALIDATION' },
      });
    });
  });
}
