/**
 * What a finished invocation leaves behind must not reach the next one, and an
 * sdk call too large for one protocol line fails inside the tool instead of
 * faulting the harness. The real harness bundle as a child process; the same
 * fixtures run in real containers in test/sandbox-drivers/leftovers.test.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildHarness } from '../../scripts/build-harness.js';
import { errorOf, HarnessClient, valueOf } from './harness-client.js';

const HOSTILE = join(import.meta.dirname, '..', 'fixtures', 'hostile');
const fixture = (name: string): string => readFileSync(join(HOSTILE, name), 'utf8');

let harnessPath: string;
let harness: HarnessClient | undefined;

beforeAll(async () => {
  ({ harnessPath } = await buildHarness());
});

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function start(): Promise<HarnessClient> {
  harness = await HarnessClient.start(harnessPath, ['--experimental-vm-modules']);
  return harness;
}

describe('leftovers of an ended invocation', () => {
  it.each([
    ['leftover-microtask-loop.js', 'x'],
    ['leftover-cpu-burn.js', 'x'],
    ['leftover-wait-async.js', ['undefined', 'undefined']],
  ])('%s: the tool gets its value and the next call answers at once', async (name, value) => {
    const client = await start();
    // The leftover runs on the tool's own time (here 1.5 s) and no longer.
    const first = await client.invoke(fixture(name), { timeoutMs: 1_500, waitMs: 4_000 });
    expect(valueOf(first)).toEqual(value);
    const next = await client.invoke('return params.n + 1', {
      params: { n: 41 },
      timeoutMs: 3_000,
      waitMs: 3_000,
    });
    expect(valueOf(next)).toBe(42);
    expect(next.logs).toEqual([]);
  });

  it('an endless microtask chain before any result ends at the time limit, harness alive', async () => {
    const client = await start();
    const outcome = await client.invoke('for (;;) await null;', { timeoutMs: 500, waitMs: 3_000 });
    expect(errorOf(outcome).code).toBe('ERR_TOOL_TIMEOUT');
    expect(valueOf(await client.invoke('return 1', { waitMs: 3_000 }))).toBe(1);
  });

  it('awaited replies, timers, a refused import() and lodash after an await still work', async () => {
    const client = await start();
    const outcome = await client.invoke(
      `const r = await sdk.http({ url: 'https://example.com' });
       await new Promise((resolve) => setTimeout(resolve, 5));
       let refused = false;
       try { await import('fs') } catch { refused = true }
       return [r.status(), refused, sdk.lodash.sum([1, 2])];`,
      { onCall: () => ({ ok: true, value: { status: 204, headers: {}, body: '' } }) },
    );
    expect(valueOf(outcome)).toEqual([204, true, 3]);
  });
});

describe('an sdk call larger than one protocol line', () => {
  const big = `'x'.repeat(17 * 1024 * 1024)`;

  it.each([
    [
      'sdk.http body',
      `await sdk.http({ url: 'https://example.com/', method: 'POST', body: ${big} })`,
    ],
    [
      'SQL text',
      `await sdk.db({ type: 'pg', connection: { host: 'db', database: 'd', user: 'u' } }).query('select 1 -- ' + ${big})`,
    ],
    [
      'SQL values',
      `await sdk.db({ type: 'pg', connection: { host: 'db', database: 'd', user: 'u' } }).query('select $1', [${big}])`,
    ],
  ])('%s: ERR_INVALID_ARGUMENT in the tool, the harness stays', async (_what, call) => {
    const client = await start();
    const outcome = await client.invoke(
      `try { ${call}; return 'sent' } catch (e) { return [e.code, e.message] }`,
      {
        onCall: () => ({ ok: false, error: { code: 'ERR_INTERNAL', message: 'must not be sent' } }),
      },
    );
    const [code, message] = valueOf(outcome) as [string, string];
    expect(code).toBe('ERR_INVALID_ARGUMENT');
    expect(message).toMatch(/are too large: more than 16777216 bytes once encoded as JSON/);
    expect(outcome.calls).toEqual([]);
    expect(client.faults).toEqual([]);
    expect(valueOf(await client.invoke('return "still here"'))).toBe('still here');
  });
});
