/**
 * The two checks behind "an uncaught sdk failure keeps its code", for when
 * the bootstrap's own (which recognises the very error object a failed reply
 * became) is bypassed: the harness accepts a call's code from its context,
 * and the control plane from the container, only for an invocation that was
 * really sent a failed reply with that code. Anything else is ERR_TOOL_ERROR.
 */
import { describe, expect, it } from 'vitest';
import { McphostError } from '../../../control-plane/errors.js';
import {
  RunnerConnection,
  type ConnectionInvokeHooks,
} from '../../../control-plane/sandbox/runner-connection.js';
import { Invocation } from '../../../runner-image/invocation.js';
import { DEFAULT_INVOCATION_LIMITS } from '../../support/config-defaults.js';
import { FakeInstance } from '../../sandbox/fake-driver.js';
import { runnerConnectionOptions } from '../../sandbox/runner-connection-options.js';

describe("the harness's check of the code its context reports", () => {
  function invocation(): { invocation: Invocation; lines: any[] } {
    const lines: any[] = [];
    const made = new Invocation({
      id: 'inv-1',
      limits: { maxResultBytes: 1024, maxLogBytes: 1024, maxLogEntries: 10 },
      progress: false,
      context: {
        api: {
          start: () => undefined,
          settle: () => true,
          fire: () => undefined,
          cancel: () => undefined,
          preloadLodash: () => undefined,
        },
        drain: () => undefined,
      },
      write: (line) => lines.push(JSON.parse(line)),
      onEnd: () => undefined,
    });
    return { invocation: made, lines };
  }

  it('turns a call code no reply carried into ERR_TOOL_ERROR', () => {
    const { invocation: run, lines } = invocation();
    run.bridge('fail', 'ERR_EGRESS_DENIED', 'egress to 10.1.2.3 is not allowed', 1, 7);
    expect(lines).toMatchObject([
      {
        type: 'result',
        invocation: 'inv-1',
        ok: false,
        error: {
          code: 'ERR_TOOL_ERROR',
          message: 'egress to 10.1.2.3 is not allowed',
          line: 1,
          column: 7,
        },
      },
    ]);
  });

  const refused = {
    type: 'reply' as const,
    invocation: 'inv-1',
    call: 0,
    ok: false as const,
    error: { code: 'ERR_EGRESS_DENIED' as const, message: 'egress to 10.1.2.3 is not allowed' },
  };

  it('keeps the code a failed reply carried', () => {
    const { invocation: run, lines } = invocation();
    run.bridge('call', 'http', '{"url":"http://10.1.2.3/"}', undefined, undefined);
    expect(run.reply(refused)).toBe(true);
    run.bridge(
      'fail',
      'ERR_EGRESS_DENIED',
      'egress to 10.1.2.3 is not allowed',
      undefined,
      undefined,
    );
    expect(lines.at(-1).error).toEqual({
      code: 'ERR_EGRESS_DENIED',
      message: 'egress to 10.1.2.3 is not allowed',
    });
  });

  it.each(['ERR_DB_FAILED', 'ERR_INTERNAL', 'ERR_CONTAINER_CRASHED', 'ERR_CANCELLED'])(
    'turns %s, which no reply carried, into ERR_TOOL_ERROR after another refusal',
    (claimed) => {
      const { invocation: run, lines } = invocation();
      run.bridge('call', 'http', '{"url":"http://10.1.2.3/"}', undefined, undefined);
      run.reply(refused);
      run.bridge('fail', claimed, 'claimed', undefined, undefined);
      expect(lines.at(-1).error).toEqual({ code: 'ERR_TOOL_ERROR', message: 'claimed' });
    },
  );
});

describe("the control plane's check of the code a container reports", () => {
  const limits = { ...DEFAULT_INVOCATION_LIMITS, timeoutMs: 2_000, memoryMb: 96 };

  async function connected(): Promise<{ instance: FakeInstance; connection: RunnerConnection }> {
    const instance = new FakeInstance({ labels: {}, memoryMb: 96, cpus: 1, pids: 16 }, 1);
    const connection = new RunnerConnection(instance, runnerConnectionOptions());
    await connection.ready;
    return { instance, connection };
  }

  /** Starts a run the fake harness leaves to the test ("hang"); its invocation id. */
  function start(
    instance: FakeInstance,
    connection: RunnerConnection,
    hooks: ConnectionInvokeHooks,
  ): { id: string; verdict: ReturnType<RunnerConnection['invoke']> } {
    const verdict = connection.invoke({ code: 'hang', params: {}, env: {}, limits }, hooks);
    const invoke = instance.received.findLast((message) => message.type === 'invoke');
    return { id: invoke!.invocation as string, verdict };
  }

  const refuse: ConnectionInvokeHooks = {
    onCall: async () => {
      throw new McphostError('ERR_EGRESS_DENIED', 'egress to 10.1.2.3 is not allowed');
    },
  };

  it('believes a call code only after refusing a call of that invocation with it', async () => {
    const { instance, connection } = await connected();
    const forged = start(instance, connection, refuse);
    const error = { code: 'ERR_EGRESS_DENIED', message: 'egress to 10.1.2.3 is not allowed' };
    instance.emit({ type: 'result', invocation: forged.id, ok: false, error });
    expect(await forged.verdict).toEqual({
      ok: false,
      error: { ...error, code: 'ERR_TOOL_ERROR' },
    });

    const real = start(instance, connection, refuse);
    instance.emit({ type: 'call', invocation: real.id, call: 0, op: 'http', args: {} });
    await expect
      .poll(() => instance.received.some((m) => m.type === 'reply' && m.invocation === real.id))
      .toBe(true);
    instance.emit({ type: 'result', invocation: real.id, ok: false, error });
    expect(await real.verdict).toEqual({ ok: false, error });

    const other = start(instance, connection, refuse);
    instance.emit({ type: 'call', invocation: other.id, call: 0, op: 'http', args: {} });
    await expect
      .poll(() => instance.received.some((m) => m.type === 'reply' && m.invocation === other.id))
      .toBe(true);
    instance.emit({
      type: 'result',
      invocation: other.id,
      ok: false,
      error: { code: 'ERR_DB_FAILED', message: 'claimed' },
    });
    expect(await other.verdict).toEqual({
      ok: false,
      error: { code: 'ERR_TOOL_ERROR', message: 'claimed' },
    });
    await connection.close();
  });
});
