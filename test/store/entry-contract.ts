/**
 * Prompts and resources in the store, written once and run against every
 * dialect (`entries-sqlite.test.ts`, `entries-postgres.test.ts`): versions and
 * rollback as for tools, what spans entries (a URI per server, the byte and
 * count bounds), cascades, change notifications, and the invocation log's
 * `kind`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store, StoreChange } from '../../control-plane/store/index.js';
import { sampleInvocation, type StoreTarget } from './store-targets.js';

const PROMPT = {
  description: 'Greets someone',
  arguments: [{ name: 'who', required: true }],
  messages: [{ role: 'user' as const, content: { type: 'text' as const, text: 'Hello {{who}}' } }],
};

export function defineEntryContract(makeTarget: () => StoreTarget): void {
  const target = makeTarget();
  let store: Store;
  let counter = 0;
  const fresh = async () => {
    const subdomain = `ent-${process.pid}-${++counter}`;
    await store.createServer({ subdomain });
    return subdomain;
  };

  beforeAll(async () => {
    await target.setup();
    store = await target.open({ serverEntriesMaxBytes: 1500, staticResourceMaxBytes: 700 });
  });
  afterAll(async () => {
    await store?.close();
    await target.teardown();
  });

  describe(`prompts and resources on ${target.dialect}`, () => {
    it('saves versions, lists, rolls back and deletes a prompt', async () => {
      const sub = await fresh();
      const first = await store.saveEntry('prompt', sub, 'greet', PROMPT);
      expect(first).toMatchObject({
        subdomain: sub,
        name: 'greet',
        version: 1,
      });
      expect(first.arguments).toEqual([{ name: 'who', required: true }]);
      const second = await store.saveEntry('prompt', sub, 'greet', {
        ...PROMPT,
        description: 'Greets warmly',
      });
      expect(second.version).toBe(2);
      expect(await store.getEntry('prompt', sub, 'greet')).toEqual(second);
      expect((await store.listEntries('prompt', sub)).map((p) => p.name)).toEqual(['greet']);
      expect((await store.listEntries('resource', sub)).length).toBe(0);
      const versions = await store.listEntryVersions('prompt', sub, 'greet');
      expect(versions.map((v) => [v.version, v.description])).toEqual([
        [2, 'Greets warmly'],
        [1, 'Greets someone'],
      ]);
      const rolledBack = await store.rollbackEntry('prompt', sub, 'greet', 1);
      expect(rolledBack).toMatchObject({ version: 3, description: 'Greets someone' });
      await expect(store.rollbackEntry('prompt', sub, 'greet', 9)).rejects.toMatchObject({
        code: 'ERR_NOT_FOUND',
      });
      await store.deleteEntry('prompt', sub, 'greet');
      expect(await store.getEntry('prompt', sub, 'greet')).toBeUndefined();
      await expect(store.deleteEntry('prompt', sub, 'greet')).rejects.toMatchObject({
        code: 'ERR_NOT_FOUND',
      });
      // The history went with it.
      expect(
        await target.raw('SELECT * FROM server_entry_versions WHERE definition LIKE ?', [
          '%Greets warmly%',
        ]),
      ).toEqual([]);
    });

    it('refuses an invalid definition and keeps what was saved', async () => {
      const sub = await fresh();
      await store.saveEntry('prompt', sub, 'greet', PROMPT);
      await expect(
        store.saveEntry('prompt', sub, 'greet', { ...PROMPT, code: 'return 1;' }),
      ).rejects.toMatchObject({ code: 'ERR_VALIDATION' });
      await expect(store.saveEntry('prompt', sub, 'bad name!', PROMPT)).rejects.toMatchObject({
        code: 'ERR_VALIDATION',
      });
      expect((await store.getEntry('prompt', sub, 'greet'))?.version).toBe(1);
    });

    it('gives a static URI and a template to one resource of a server only', async () => {
      const sub = await fresh();
      const other = await fresh();
      await store.saveEntry('resource', sub, 'a', { uri: 'docs://a', text: 'A' });
      await expect(
        store.saveEntry('resource', sub, 'b', { uri: 'docs://a', text: 'B' }),
      ).rejects.toMatchObject({ code: 'ERR_CONFLICT' });
      // Re-saving the same resource, and the same URI on another server, are fine.
      await store.saveEntry('resource', sub, 'a', { uri: 'docs://a', text: 'A2' });
      await store.saveEntry('resource', other, 'b', { uri: 'docs://a', text: 'B' });
      await store.saveEntry('resource', sub, 't', {
        uriTemplate: 'docs://{x}/t',
        code: 'return 1;',
      });
      await expect(
        store.saveEntry('resource', sub, 't2', { uriTemplate: 'docs://{x}/t', code: 'return 2;' }),
      ).rejects.toMatchObject({ code: 'ERR_CONFLICT' });
    });

    it("bounds what a server stores and one static resource's contents, rollbacks included", async () => {
      const sub = await fresh();
      await expect(
        store.saveEntry('resource', sub, 'huge', { uri: 'docs://huge', text: 'h'.repeat(701) }),
      ).rejects.toMatchObject({ code: 'ERR_VALIDATION' });
      await store.saveEntry('resource', sub, 'big', { uri: 'docs://big', text: 'x'.repeat(600) });
      await store.saveEntry('prompt', sub, 'small', { ...PROMPT, description: 'y'.repeat(300) });
      const stored = await target.raw('SELECT SUM(stored_bytes) AS total FROM server_entries');
      expect(Number(stored[0]!.total)).toBeGreaterThan(900);
      await expect(
        store.saveEntry('resource', sub, 'more', {
          uri: 'docs://more',
          blob: Buffer.alloc(400).toString('base64'),
        }),
      ).rejects.toMatchObject({ code: 'ERR_VALIDATION' });
      // Shrinking another makes room; a rollback to the large version must fit again.
      await store.saveEntry('resource', sub, 'big', { uri: 'docs://big', text: 'x'.repeat(10) });
      await store.saveEntry('resource', sub, 'more', {
        uri: 'docs://more',
        blob: Buffer.alloc(400).toString('base64'),
      });
      await expect(store.rollbackEntry('resource', sub, 'big', 1)).rejects.toMatchObject({
        code: 'ERR_VALIDATION',
      });
      expect((await store.getEntry('resource', sub, 'big'))?.text).toBe('x'.repeat(10));
      // One server's budget does not reach another server.
      const other = await fresh();
      await store.saveEntry('resource', other, 'big', { uri: 'docs://big', text: 'x'.repeat(690) });
    });

    it("takes a server's entries and their history along when it is deleted", async () => {
      const sub = await fresh();
      await store.saveEntry('prompt', sub, 'greet', PROMPT);
      await store.saveEntry('resource', sub, 'a', { uri: 'docs://gone', text: 'A' });
      await store.deleteServer(sub);
      await expect(store.listEntries('prompt', sub)).rejects.toMatchObject({
        code: 'ERR_NOT_FOUND',
      });
      expect(
        await target.raw("SELECT * FROM server_entries WHERE definition LIKE '%docs://gone%'"),
      ).toEqual([]);
      expect(
        await target.raw(
          "SELECT * FROM server_entry_versions WHERE definition LIKE '%docs://gone%'",
        ),
      ).toEqual([]);
    });

    it('announces saves and deletions by kind and name', async () => {
      const sub = await fresh();
      const changes: StoreChange[] = [];
      const unsubscribe = store.onChange((change) => changes.push(change));
      await store.saveEntry('prompt', sub, 'greet', PROMPT);
      await store.saveEntry('resource', sub, 'a', { uri: 'docs://a', text: 'A' });
      await store.rollbackEntry('prompt', sub, 'greet', 1);
      await store.deleteEntry('resource', sub, 'a');
      unsubscribe();
      expect(changes).toEqual([
        { subdomain: sub, kind: 'prompts', name: 'greet' },
        { subdomain: sub, kind: 'resources', name: 'a' },
        { subdomain: sub, kind: 'prompts', name: 'greet' },
        { subdomain: sub, kind: 'resources', name: 'a' },
      ]);
    });

    it('queues concurrent saves of one entry into distinct versions', async () => {
      const sub = await fresh();
      const saves = Array.from({ length: 8 }, (_, i) =>
        store.saveEntry('prompt', sub, 'busy', { ...PROMPT, description: `v${i}` }).then(
          (saved) => saved.version,
          (error: { code?: string }) => error.code,
        ),
      );
      const outcomes = await Promise.all(saves);
      const versions = outcomes.filter((o): o is number => typeof o === 'number');
      // Every save either got its own version or was told to retry; none overwrote another's.
      expect(new Set(versions).size).toBe(versions.length);
      expect(outcomes.filter((o) => typeof o !== 'number').every((o) => o === 'ERR_CONFLICT')).toBe(
        true,
      );
      expect((await store.listEntryVersions('prompt', sub, 'busy')).length).toBe(versions.length);
    });

    it('records and filters the kind of code an invocation ran', async () => {
      const server = `kinds-${process.pid}-${target.dialect}`;
      await store.appendInvocations([
        sampleInvocation(1, { id: `k1-${server}`, server }),
        sampleInvocation(2, { id: `k2-${server}`, server, kind: 'prompt', tool: 'greet' }),
        sampleInvocation(3, { id: `k3-${server}`, server, kind: 'completion', tool: 'greet' }),
      ]);
      const all = await store.listInvocations({ server });
      expect(all.map((i) => i.kind)).toEqual(['completion', 'prompt', 'tool']);
      const prompts = await store.listInvocations({ server, kind: 'prompt' });
      expect(prompts.map((i) => i.tool)).toEqual(['greet']);
      await expect(
        store.appendInvocations([sampleInvocation(4, { server, kind: 'widget' })]),
      ).rejects.toMatchObject({ code: 'ERR_VALIDATION' });
    });
  });
}
