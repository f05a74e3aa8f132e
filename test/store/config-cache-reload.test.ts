/**
 * A change reloads only what it changed (issue 28, finding 2): the cache of
 * a replica that did not make the change (a second Store on one PostgreSQL
 * database, hearing it through LISTEN/NOTIFY), and the cache of the process
 * that made it (SQLite), read the one tool, prompt, secret list or server
 * record a write touched — never the server's whole catalogue — and every
 * record the write did not touch stays the object it was.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigCache, type Store } from '../../control-plane/store/index.js';
import { postgresTarget, sampleTool, sqliteTarget, type StoreTarget } from './store-targets.js';

/** The reads a cache makes of its store, by method name. */
type ReadCounts = Record<string, number>;

/** The store with its reads counted (every other member passes through). */
function counted(store: Store, counts: ReadCounts): Store {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      if (!/^(list|get|read)/.test(property)) return value.bind(target);
      return (...args: unknown[]) => {
        counts[property] = (counts[property] ?? 0) + 1;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

const TOOLS = 40;

function forget(counts: ReadCounts): void {
  for (const key of Object.keys(counts)) delete counts[key];
}

for (const makeTarget of [sqliteTarget, postgresTarget]) {
  const target: StoreTarget = makeTarget();
  const replicated = target.dialect === 'postgres';

  describe(`ConfigCache reloads on ${target.dialect}${replicated ? ' (writes by another replica)' : ''}`, () => {
    let writer: Store;
    let reader: Store;
    let cache: ConfigCache;
    const readCounts: ReadCounts = {};
    const names = Array.from({ length: TOOLS }, (_, i) => `tool-${String(i).padStart(2, '0')}`);

    beforeAll(async () => {
      await target.setup();
      writer = await target.open();
      reader = replicated ? await target.open() : writer;
      await writer.createServer({ subdomain: 'big' });
      await writer.createServer({ subdomain: 'other' });
      for (const name of names) await writer.saveTool('big', name, sampleTool());
      await writer.saveTool('other', 'solo', sampleTool());
      await writer.saveEntry('prompt', 'big', 'hello', { description: 'hi', code: 'return 1;' });
      await writer.putSecret('big', 'API_KEY', 'one');
      cache = new ConfigCache(counted(reader, readCounts));
      await cache.start();
    });
    afterAll(async () => {
      cache.stop();
      await writer.close();
      if (reader !== writer) await reader.close();
      await target.teardown();
    });

    it('reads the one tool a save changed, and keeps every other record as it was', async () => {
      const before = cache.tools('big');
      const otherServer = cache.tool('other', 'solo');
      forget(readCounts);
      await writer.saveTool('big', 'tool-07', sampleTool({ code: 'return 7;' }));
      await vi.waitFor(() => expect(cache.tool('big', 'tool-07')?.version).toBe(2), {
        timeout: 5000,
      });
      await cache.settled();
      expect(readCounts).toEqual({ getTool: 1 });
      const after = cache.tools('big');
      expect(after.map((tool) => tool.name)).toEqual(names);
      after.forEach((tool, index) => {
        if (tool.name !== 'tool-07') expect(tool).toBe(before[index]);
      });
      expect(cache.tool('other', 'solo')).toBe(otherServer);
    });

    it('puts a new tool in its place in name order, and takes a deleted one out', async () => {
      forget(readCounts);
      await writer.saveTool('big', 'tool-10a', sampleTool());
      await vi.waitFor(() => expect(cache.tool('big', 'tool-10a')).toBeDefined(), {
        timeout: 5000,
      });
      await writer.deleteTool('big', 'tool-03');
      await vi.waitFor(() => expect(cache.tool('big', 'tool-03')).toBeUndefined(), {
        timeout: 5000,
      });
      await cache.settled();
      expect(readCounts).toEqual({ getTool: 2 });
      const expected = [...names.filter((name) => name !== 'tool-03'), 'tool-10a'].sort();
      expect(cache.tools('big').map((tool) => tool.name)).toEqual(expected);
    });

    it('reads only the prompt, the secrets or the server record that changed', async () => {
      forget(readCounts);
      const tools = cache.tools('big');
      await writer.saveEntry('prompt', 'big', 'hello', { description: 'hello', code: 'return 2;' });
      await vi.waitFor(() => expect(cache.prompt('big', 'hello')?.version).toBe(2), {
        timeout: 5000,
      });
      await writer.putSecret('big', 'API_KEY', 'two');
      await vi.waitFor(() => expect(cache.secrets('big').API_KEY).toBe('two'), { timeout: 5000 });
      await writer.updateServerSettings('big', { name: 'Big one' });
      await vi.waitFor(() => expect(cache.server('big')?.name).toBe('Big one'), {
        timeout: 5000,
      });
      await cache.settled();
      expect(readCounts).toEqual({ getEntry: 1, readSecrets: 1, getServer: 1 });
      cache.tools('big').forEach((tool, index) => expect(tool).toBe(tools[index]));
    });
  });
}
