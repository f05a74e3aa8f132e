/** The batched invocation log writer, against a real SQLite store. */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { InvocationLog, type Store } from '../../control-plane/store/index.js';
import { parseInvocationRecord } from '../../control-plane/store/records.js';
import { sampleInvocation, sqliteTarget } from './store-targets.js';

describe('InvocationLog', () => {
  const target = sqliteTarget();
  let store: Store;
  beforeAll(async () => {
    store = await target.open({ invocationRetention: 50 });
  });
  afterAll(async () => {
    await store.close();
    await target.teardown();
  });

  it('queues without waiting and writes within the flush interval', async () => {
    const log = new InvocationLog(store, { flushIntervalMs: 50 });
    const server = 'timed';
    log.append(sampleInvocation(1, { server }));
    log.append(sampleInvocation(2, { server }));
    expect(log.pending).toBe(2);
    expect(await store.listInvocations({ server })).toEqual([]);
    await vi.waitFor(async () => expect(await store.listInvocations({ server })).toHaveLength(2), {
      timeout: 2000,
      interval: 20,
    });
    expect(log.pending).toBe(0);
    await log.close();
  });

  it('writes at once when a batch is full, and flush() drains the rest', async () => {
    const appended: number[] = [];
    const counting = {
      appendInvocations: async (entries: readonly unknown[]) => {
        appended.push(entries.length);
        await store.appendInvocations(entries as never);
      },
      pruneInvocations: () => store.pruneInvocations(),
      countRefusals: store.countRefusals,
    };
    const log = new InvocationLog(counting, { flushIntervalMs: 60_000, batchSize: 10 });
    const server = 'batched';
    for (let index = 0; index < 25; index++) log.append(sampleInvocation(index, { server }));
    await vi.waitFor(() =>
      expect(appended.reduce((sum, n) => sum + n, 0)).toBeGreaterThanOrEqual(20),
    );
    expect(Math.max(...appended)).toBeLessThanOrEqual(10);
    await log.flush();
    expect(log.pending).toBe(0);
    expect(await store.listInvocations({ server, limit: 100 })).toHaveLength(25);
    await log.close();
  });

  it('prunes to the retention bound on close', async () => {
    const log = new InvocationLog(store, { batchSize: 500 });
    for (let index = 0; index < 120; index++)
      log.append(sampleInvocation(index, { server: 'pruned' }));
    await log.close();
    const [row] = await target.raw('SELECT COUNT(*) AS n FROM invocations');
    expect(row?.n).toBe(50);
    const newest = await store.listInvocations({ server: 'pruned', limit: 1 });
    expect(newest[0]?.id).toBe('inv-119');
  });

  it('prunes as soon as enough rows were written, not only on its timer', async () => {
    const log = new InvocationLog(store, { batchSize: 10, pruneAfterRows: 20 });
    for (let index = 0; index < 200; index++) {
      log.append(sampleInvocation(index, { server: 'eager' }));
    }
    await log.flush();
    const total = async () =>
      Number((await target.raw('SELECT COUNT(*) AS n FROM invocations'))[0]?.n);
    // The retention is 50; at most one batch of rows less than pruneAfterRows is left over.
    await vi.waitFor(async () => expect(await total()).toBeLessThan(50 + 20));
    await log.close();
    expect(await total()).toBe(50);
  });

  it('keeps entries when the store fails, bounded by maxQueued, and retries', async () => {
    let failing = true;
    const messages: string[] = [];
    const flaky = {
      appendInvocations: async (entries: readonly unknown[]) => {
        if (failing) throw new Error('database away');
        await store.appendInvocations(entries as never);
      },
      pruneInvocations: async () => 0,
      countRefusals: async () => undefined,
    };
    const log = new InvocationLog(flaky, {
      flushIntervalMs: 10,
      maxQueued: 5,
      log: (m) => messages.push(m),
    });
    for (let index = 0; index < 8; index++)
      log.append(sampleInvocation(index, { server: 'flaky' }));
    expect(log.pending).toBe(5);
    await expect(log.flush()).rejects.toThrow('5 entries could not be written');
    expect(messages.some((message) => message.includes('database away'))).toBe(true);
    failing = false;
    await log.flush();
    expect((await store.listInvocations({ server: 'flaky' })).map((entry) => entry.id)).toEqual([
      'inv-7',
      'inv-6',
      'inv-5',
      'inv-4',
      'inv-3',
    ]);
    await log.close();
  });

  it('counts refusals instead of storing them, keeping the counts while the store fails', async () => {
    let failing = true;
    const flaky = {
      appendInvocations: (entries: readonly unknown[]) => store.appendInvocations(entries as never),
      pruneInvocations: async () => 0,
      countRefusals: async (counts: Parameters<Store['countRefusals']>[0]) => {
        if (failing) throw new Error('database away');
        await store.countRefusals(counts);
      },
    };
    const log = new InvocationLog(flaky, { flushIntervalMs: 10, refusalBucketMs: 3_600_000 });
    for (let index = 0; index < 5; index++) log.countRefusal('counted', 'ERR_INVALID_ARGUMENT');
    log.countRefusal('counted', 'ERR_UNKNOWN_TOOL');
    await expect(log.flush()).rejects.toThrow('2 refusal counts could not be written');
    log.countRefusal('counted', 'ERR_INVALID_ARGUMENT');
    failing = false;
    await log.flush();
    const totals = await store.sumRefusals({ servers: ['counted'] });
    expect(totals.map(({ code, count }) => [code, count])).toEqual([
      ['ERR_INVALID_ARGUMENT', 6],
      ['ERR_UNKNOWN_TOOL', 1],
    ]);
    expect(await store.listInvocations({ server: 'counted' })).toEqual([]);
    await log.close();
  });

  it('rejects a malformed entry and use after close with TypeError', async () => {
    const log = new InvocationLog(store);
    expect(() => log.append({ id: 'x' } as never)).toThrow(TypeError);
    await log.close();
    expect(() => log.append(sampleInvocation(1))).toThrow(TypeError);
    expect(() => new InvocationLog(store, { batchSize: 0 })).toThrow(TypeError);
  });

  it('parses an entry once on its way from the log into the store, and anything else every time', async () => {
    const parsed = parseInvocationRecord(sampleInvocation(1));
    expect(parsed.success).toBe(true);
    const record = parsed.success ? parsed.data : undefined;
    // What the parse made passes as it is; an equal object made elsewhere is parsed (a new object).
    expect(parseInvocationRecord(record!)).toEqual({ success: true, data: record });
    const copy = { ...record! };
    const again = parseInvocationRecord(copy);
    expect(again.success && again.data).not.toBe(copy);
    // The store still refuses what no parse made valid.
    await expect(
      store.appendInvocations([{ ...record!, durationMs: -1 } as never]),
    ).rejects.toMatchObject({ code: 'ERR_VALIDATION' });
    const seen: unknown[] = [];
    const log = new InvocationLog(
      {
        appendInvocations: async (entries: readonly unknown[]) => {
          seen.push(...entries);
          await store.appendInvocations(entries as never);
        },
        pruneInvocations: () => store.pruneInvocations(),
        countRefusals: store.countRefusals,
      } as never,
      { flushIntervalMs: 10 },
    );
    log.append(sampleInvocation(7, { server: 'parsed-once' }));
    await log.flush();
    expect(seen).toHaveLength(1);
    expect(parseInvocationRecord(seen[0] as never)).toMatchObject({ data: seen[0] });
    expect(await store.listInvocations({ server: 'parsed-once' })).toHaveLength(1);
    await log.close();
  });
});
