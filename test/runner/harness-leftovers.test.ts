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
import { HarnessClient, valueOf } from './harness-client.js';

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
  it('work queued behind return runs before the result, never after it', async () => {
    const client = await start();
    const burn = `Promise.resolve().then(() => null).then(() => {
      const end = Date.now() + 300; while (Date.now() < end);
    });
    return 'x';`;
    const started = Date.now();
    const first = await client.invoke(burn, { timeoutMs: 5_000, waitMs: 4_000 });
    expect(valueOf(first)).toBe('x');
    // The result waited for the burn: it ran on this call's time, not after the result.
    // A lower bound (the burn's own 300 ms), so a slow machine cannot fail it; the value
    // is taken at return and output after it is dropped, so time is the only witness.
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    const next = await client.invoke('return params.n + 1', { params: { n: 41 }, waitMs: 3_000 });
    expect(valueOf(next)).toBe(42);
    expect(next.logs).toEqual([]);
  });

  it('a leftover Atomics.waitAsync finds nothing to wait with', async () => {
    const client = await start();
    const first = await client.invoke(fixture('leftover-wait-async.js'), { waitMs: 4_000 });
    expect(valueOf(first)).toEqual(['undefined', 'undefined']);
    expect(valueOf(await client.invoke('return 1', { waitMs: 3_000 }))).toBe(1);
  });

  it('an endless microtask chain never sends a result: the control plane ends it at its deadline', async () => {
    const client = await start();
    // The harness is busy for good (like a synchronous endless loop); through the
    // control plane the container is killed at the deadline (harness-tenancy.test.ts).
    await expect(
      client.invoke(fixture('leftover-microtask-loop.js'), { timeoutMs: 500, waitMs: 1_500 }),
    ).rejects.toThrow();
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
