/**
 * The first round of a modern call (input-rounds.ts `FirstRound`) as the
 * code's io: its members work when handed on as plain values, each request's
 * log lines and progress go to that request alone, the abort listener goes
 * away on every path, and a response closed before the call began cancels
 * it. Found by a hostile review of the class that replaced per-call closures.
 */
import { describe, expect, it } from 'vitest';
import type { CallIo } from '../../../control-plane/mcp/call-runner.js';
import { ModernCallRunner } from '../../../control-plane/mcp/input-rounds.js';
import { ParkedCalls } from '../../../control-plane/mcp/parked-calls.js';
import { authInfoOf } from '../../../control-plane/mcp/request-scope.js';
import { RequestStateSealer } from '../../../control-plane/mcp/request-state.js';
import type { CodeCall } from '../../../control-plane/mcp/call-runner.js';

/** An abort signal that counts the listeners it holds. */
class CountingSignal extends EventTarget {
  aborted = false;
  listeners = 0;
  override addEventListener(...args: Parameters<EventTarget['addEventListener']>): void {
    this.listeners += 1;
    super.addEventListener(...args);
  }
  override removeEventListener(...args: Parameters<EventTarget['removeEventListener']>): void {
    this.listeners -= 1;
    super.removeEventListener(...args);
  }
  fire(): void {
    this.aborted = true;
    this.dispatchEvent(new Event('abort'));
  }
}

/** The parts of a request's context the first round reads. */
function callOf(name: string, sent: unknown[], signal: EventTarget): CodeCall {
  const ctx = {
    http: {
      authInfo: authInfoOf({ caller: { kind: 'anonymous' }, quotaKey: 'q', requestId: name }),
    },
    mcpReq: {
      id: name,
      signal,
      _meta: { progressToken: `token-${name}` },
      envelope: { 'io.modelcontextprotocol/logLevel': 'debug' },
      notify: async (notification: unknown) => void sent.push(notification),
      requestState: () => undefined,
      inputResponses: undefined,
    },
  };
  return {
    ctx: ctx as unknown as CodeCall['ctx'],
    target: { kind: 'tool', name: 't' } as CodeCall['target'],
    args: {},
    logger: 't',
  };
}

function runner(): ModernCallRunner {
  return new ModernCallRunner({
    subdomain: 's',
    replica: 'r1',
    parked: new ParkedCalls({ maxPerCaller: 4, maxPerServer: 4 }),
    sealer: new RequestStateSealer(new Uint8Array(32)),
    stateTtlMs: 60_000,
  });
}

describe('the first round of a modern call', () => {
  it('works through members handed on as plain values, each request to its own response', async () => {
    const sentA: unknown[] = [];
    const sentB: unknown[] = [];
    const signals = [new CountingSignal(), new CountingSignal()];
    const calls = runner();
    const run = (call: CodeCall, tag: string) =>
      calls.run(call, async (io: CallIo) => {
        const { onLog } = io;
        const { progress, waiting, rounds } = io.client;
        onLog({ level: 'log', text: tag, at: 0 });
        progress!({ progress: 1 });
        waiting!();
        expect(rounds!()).toBe(0);
        return tag;
      });
    const answers = await Promise.all([
      run(callOf('A', sentA, signals[0]!), 'A'),
      run(callOf('B', sentB, signals[1]!), 'B'),
    ]);
    expect(answers).toEqual(['A', 'B']);
    expect(JSON.stringify(sentA)).toContain('"data":"A"');
    expect(JSON.stringify(sentA)).toContain('token-A');
    expect(JSON.stringify(sentA)).not.toMatch(/"B"|token-B/);
    expect(JSON.stringify(sentB)).not.toMatch(/"data":"A"|token-A/);
    expect(signals.map((signal) => signal.listeners)).toEqual([0, 0]);
  });

  it('removes its abort listener when the code throws at once or rejects', async () => {
    const signal = new CountingSignal();
    const calls = runner();
    await expect(
      calls.run(callOf('A', [], signal), () => {
        throw new Error('at once');
      }),
    ).rejects.toThrow('at once');
    expect(signal.listeners).toBe(0);
    await expect(
      calls.run(callOf('A', [], signal), async () => {
        throw new Error('later');
      }),
    ).rejects.toThrow('later');
    expect(signal.listeners).toBe(0);
  });

  it('is cancelled when its response closes, and by a response closed before it began', async () => {
    const signal = new CountingSignal();
    const calls = runner();
    let seen!: AbortSignal;
    let finish!: () => void;
    const done = calls.run(callOf('A', [], signal), (io: CallIo) => {
      seen = io.signal;
      return new Promise<number>((resolve) => (finish = () => resolve(1)));
    });
    expect(seen.aborted).toBe(false);
    signal.fire();
    expect(seen.aborted).toBe(true);
    finish();
    await done;
    expect(signal.listeners).toBe(0);

    const closed = new AbortController();
    closed.abort();
    let abortedAtStart: boolean | undefined;
    await calls.run(callOf('B', [], closed.signal), async (io: CallIo) => {
      abortedAtStart = io.signal.aborted;
      return 1;
    });
    expect(abortedAtStart).toBe(true);
  });
});
