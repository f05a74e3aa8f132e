/**
 * What one invocation-log row and one listed page may hold, against real
 * SQLite and PostgreSQL: a flood of log lines is cut with a notice, never
 * silently, and a page of the log stays bounded however much tools logged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boundInvocationRow } from '../../control-plane/store/invocation-bounds.js';
import type { Store } from '../../control-plane/store/index.js';
import { invocationRecordSchema } from '../../control-plane/store/records.js';
import { postgresTarget, sampleInvocation, sqliteTarget } from './store-targets.js';

const ROW_MAX = 64 * 1024;
const PAGE_MAX = 256 * 1024;

/** `count` log lines of `size` characters each. */
function lines(count: number, size: number): { level: string; text: string }[] {
  return Array.from({ length: count }, (_, index) => ({
    level: 'log',
    text: String(index).padEnd(size, '.'),
  }));
}

describe.each([
  ['sqlite', sqliteTarget],
  ['postgres', postgresTarget],
])('invocation log bounds on %s', (_name, makeTarget) => {
  const target = makeTarget();
  let store: Store;
  beforeAll(async () => {
    await target.setup();
    store = await target.open({ invocationRowMaxBytes: ROW_MAX, invocationPageMaxBytes: PAGE_MAX });
  });
  afterAll(async () => {
    await store?.close();
    await target.teardown();
  });

  it('cuts a row to its bound and says how many lines were left out', async () => {
    // 1.6 million empty lines was the attack; 100 000 shows the same.
    await store.appendInvocations([
      sampleInvocation(1, {
        server: 'flood',
        logs: lines(100_000, 0),
        errorMessage: 'e'.repeat(200_000),
      }),
    ]);
    const [row] = await target.raw(
      "SELECT logs, error_message FROM invocations WHERE server = 'flood'",
    );
    const stored = String(row?.logs).length + String(row?.error_message).length;
    expect(stored).toBeLessThanOrEqual(ROW_MAX);
    const [listed] = await store.listInvocations({ server: 'flood' });
    expect(listed?.logs.length).toBeGreaterThan(100);
    expect(listed?.logs.at(-1)).toEqual({
      level: 'warn',
      text: expect.stringMatching(
        /^\[mcphost\] \d+ of 100000 log lines not stored: an invocation log row holds at most 65536 bytes$/,
      ),
    });
    expect(listed?.errorMessage).toMatch(/^e+…$/);
  });

  it('keeps a row that fits as it is', async () => {
    await store.appendInvocations([sampleInvocation(2, { server: 'small', logs: lines(3, 5) })]);
    const [listed] = await store.listInvocations({ server: 'small' });
    expect(listed?.logs).toEqual(lines(3, 5));
  });

  it('bounds a page: rows past the limit carry a notice instead of their logs', async () => {
    const entries = Array.from({ length: 20 }, (_, index) =>
      sampleInvocation(100 + index, { server: 'paged', logs: lines(1000, 50) }),
    );
    await store.appendInvocations(entries);
    const page = await store.listInvocations({ server: 'paged', limit: 100 });
    expect(page).toHaveLength(20);
    const size = page.reduce((sum, entry) => sum + JSON.stringify(entry.logs).length, 0);
    expect(size).toBeLessThanOrEqual(PAGE_MAX + 20 * 512);
    const omitted = page.filter((entry) => entry.logs.length === 1);
    expect(omitted.length).toBeGreaterThan(0);
    expect(omitted[0]?.logs[0]?.text).toMatch(
      /^\[mcphost\] \d+ bytes of log lines left out: this page reached its limit of 262144 bytes/,
    );
    // Newest first, and the newest keep their logs.
    expect(page[0]?.id).toBe('inv-119');
    expect(page[0]?.logs.length).toBeGreaterThan(1);
  });
});

describe('boundInvocationRow', () => {
  it('never splits a character when it cuts an error message', () => {
    const entry = invocationRecordSchema.parse(
      sampleInvocation(1, { errorMessage: '€'.repeat(2000), logs: [] }),
    );
    const bounded = boundInvocationRow(entry, 2048);
    expect(bounded.errorMessage).toMatch(/^€+…$/);
    expect(Buffer.byteLength(bounded.errorMessage ?? '')).toBeLessThanOrEqual(1024);
  });
});
