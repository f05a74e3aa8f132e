import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildHarness } from '../../scripts/build-harness.js';
import { errorOf, HarnessClient, DEFAULT_LIMITS, valueOf } from './harness-client.js';

let harnessPath: string;

beforeAll(async () => {
  ({ harnessPath } = await buildHarness());
});

const start = (): Promise<HarnessClient> =>
  HarnessClient.start(harnessPath, ['--experimental-vm-modules']);

function invokeMessage(id: string, code: string): object {
  return {
    type: 'invoke',
    invocation: id,
    code,
    params: {},
    env: {},
    timeoutMs: 5000,
    limits: DEFAULT_LIMITS,
  };
}

describe('cancel', () => {
  it('answers ERR_CANCELLED at once, rejects pending calls, drops later output', async () => {
    const harness = await start();
    const id = randomUUID();
    harness.send(
      invokeMessage(
        id,
        'try { await sdk.http({ url: "https://slow.example" }) } catch (e) { console.log("after cancel", e.code); } setTimeout(() => console.log("timer"), 1); return "late";',
      ),
    );
    await harness.next((m) => m.type === 'call' && m.invocation === id);
    harness.send({ type: 'cancel', invocation: id });
    const result = await harness.next((m) => m.type === 'result' && m.invocation === id);
    expect(result).toEqual({
      type: 'result',
      invocation: id,
      ok: false,
      error: { code: 'ERR_CANCELLED', message: 'the invocation was cancelled' },
      heap: expect.any(Number),
    });
    // The reply crossing the cancel and a second cancel are ignored, not faults.
    harness.send({
      type: 'reply',
      invocation: id,
      call: 0,
      ok: true,
      value: { status: 200, headers: {}, body: '' },
    });
    harness.send({ type: 'cancel', invocation: id });
    expect(valueOf(await harness.invoke('return "next"'))).toBe('next');
    // Time for the cancelled tool's timer to fire if it could: what is tested is that nothing comes.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(
      harness.messages
        .filter((m) => m.type !== 'ready' && 'invocation' in m && m.invocation === id)
        .map((m) => m.type),
    ).toEqual(['call', 'result']);
    await harness.close();
    expect(harness.faults).toEqual([]);
  });
});

describe('heap figure', () => {
  it('every result carries the V8 heap in use as measured while idle, from the first result on', async () => {
    const harness = await start();
    try {
      const heaps: number[] = [];
      for (let i = 0; i < 3; i++) {
        const id = randomUUID();
        harness.send(invokeMessage(id, 'return new Array(1000).fill("x").join("")'));
        const result = (await harness.next((m) => m.type === 'result' && m.invocation === id)) as {
          heap?: number;
        };
        heaps.push(result.heap ?? 0);
      }
      // A Node process's V8 heap holds megabytes before any tool runs.
      for (const heap of heaps) expect(heap).toBeGreaterThan(1_000_000);
    } finally {
      await harness.close();
    }
  });
});

describe('protocol faults exit with 70', () => {
  it.each([
    ['a line that is not JSON', (h: HarnessClient) => h.send('not json\n')],
    [
      'a message of unknown shape',
      (h: HarnessClient) => h.send({ type: 'invoke', invocation: 'x' }),
    ],
    [
      'a reply for an unknown invocation',
      (h: HarnessClient) =>
        h.send({ type: 'reply', invocation: 'nobody', call: 0, ok: true, value: 1 }),
    ],
    [
      'a cancel for an unknown invocation',
      (h: HarnessClient) => h.send({ type: 'cancel', invocation: 'nobody' }),
    ],
    [
      'an invoke while one runs',
      (h: HarnessClient) => {
        h.send(invokeMessage('first', 'await new Promise(() => {})'));
        h.send(invokeMessage('second', 'return 1'));
      },
    ],
    [
      'a reply to a call that is not pending',
      (h: HarnessClient) => {
        h.send(invokeMessage('waiting', 'await new Promise(() => {})'));
        h.send({ type: 'reply', invocation: 'waiting', call: 5, ok: true, value: 1 });
      },
    ],
  ])('%s', async (_name, misbehave) => {
    const harness = await start();
    misbehave(harness);
    const exit = await harness.exited;
    expect(exit.code).toBe(70);
    expect(harness.stderr).toMatch(/protocol fault/);
  });

  it('a syntax error is a result, not a fault, and the harness goes on', async () => {
    const harness = await start();
    expect(errorOf(await harness.invoke('return )'))).toMatchObject({
      code: 'ERR_TOOL_SYNTAX',
      line: 1,
      column: 8,
    });
    expect(valueOf(await harness.invoke('return 1'))).toBe(1);
    await harness.close();
    expect((await harness.exited).code).toBe(0);
  });
});
