// Unit tests of the connection's protocol logic against a scripted in-memory harness.
import { describe, expect, it } from 'vitest';
import { McphostError } from '../../control-plane/errors.js';
import { DEFAULT_INVOCATION_LIMITS } from '../support/config-defaults.js';
import {
  RunnerConnection,
  type ConnectionInvokeHooks,
} from '../../control-plane/sandbox/runner-connection.js';
import { FakeInstance } from './fake-driver.js';
import { runnerConnectionOptions } from './runner-connection-options.js';

const limits = { ...DEFAULT_INVOCATION_LIMITS, timeoutMs: 200, memoryMb: 96 };
const noCalls: ConnectionInvokeHooks = { onCall: async () => ({}) };

async function connected(): Promise<{ instance: FakeInstance; connection: RunnerConnection }> {
  const instance = new FakeInstance({ labels: {}, memoryMb: 96, cpus: 1, pids: 16 }, 1);
  const connection = new RunnerConnection(
    instance,
    runnerConnectionOptions({ timeoutGraceMs: 20 }),
  );
  await connection.ready;
  return { instance, connection };
}

function run(connection: RunnerConnection, code: string, hooks: ConnectionInvokeHooks = noCalls) {
  return connection.invoke({ code, params: {}, env: {}, limits }, hooks);
}

describe('RunnerConnection', () => {
  it('runs invocations one after another on one connection', async () => {
    const { connection } = await connected();
    expect(await run(connection, 'value:{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
    expect(await run(connection, 'throw:bad input')).toEqual({
      ok: false,
      error: { code: 'ERR_TOOL_ERROR', message: 'bad input' },
    });
    expect(connection.usable).toBe(true);
  });

  it('answers a brokered call with the hook value, and maps errors to wire codes', async () => {
    const { connection } = await connected();
    const seen: unknown[] = [];
    const value = await run(connection, 'call', {
      onCall: async (operation, args, { signal }) => {
        seen.push(operation, args, signal.aborted);
        return { status: 200 };
      },
    });
    expect(seen).toEqual(['http', { url: 'http://example.test' }, false]);
    expect(value).toMatchObject({ ok: true, value: { ok: true, value: { status: 200 } } });

    const denied = await run(connection, 'call', {
      onCall: async () => {
        throw new McphostError('ERR_EGRESS_DENIED', 'egress to 169.254.169.254 is not allowed');
      },
    });
    expect(denied).toMatchObject({
      value: {
        ok: false,
        error: { code: 'ERR_EGRESS_DENIED', message: 'egress to 169.254.169.254 is not allowed' },
      },
    });
    const internal = await run(connection, 'call', {
      onCall: async () => {
        throw new Error('secret stack detail');
      },
    });
    expect(internal).toMatchObject({
      value: {
        ok: false,
        error: { code: 'ERR_INTERNAL', message: 'internal error while performing http' },
      },
    });
    const controlPlaneOnly = await run(connection, 'call', {
      onCall: async () => {
        throw new McphostError('ERR_VALIDATION', 'nope');
      },
    });
    expect(controlPlaneOnly).toMatchObject({
      value: { ok: false, error: { code: 'ERR_INTERNAL' } },
    });
  });

  it('answers a brokered call too large for the runner with ERR_REPLY_TOO_LARGE, keeping the runner', async () => {
    const { connection } = await connected();
    const huge = await run(connection, 'call', {
      onCall: async () => ({ body: 'x'.repeat(17 * 1024 * 1024) }),
    });
    expect(huge).toMatchObject({
      value: {
        ok: false,
        error: {
          code: 'ERR_REPLY_TOO_LARGE',
          message: expect.stringContaining('http answer is larger than'),
        },
      },
    });
    expect(connection.usable).toBe(true);
  });

  it('streams logs with their time since the invocation started', async () => {
    const { connection } = await connected();
    const logs: Array<[string, number]> = [];
    await run(connection, 'log:3', {
      ...noCalls,
      onLog: ({ level, at }) => logs.push([level, at]),
    });
    expect(logs).toHaveLength(3);
    expect(logs[0]?.[0]).toBe('log');
    expect(logs[0]?.[1]).toBeGreaterThanOrEqual(0);
  });

  it.each([
    ['garbage', 'ERR_PROTOCOL', /not JSON/],
    ['forge', 'ERR_PROTOCOL', /for another invocation/],
    ['crash', 'ERR_CONTAINER_CRASHED', /exited while running the tool \(exit code 1\)/],
    ['oom', 'ERR_TOOL_MEMORY', /memory limit of 96 MiB/],
    ['hang', 'ERR_TOOL_TIMEOUT', /exceeded its time limit of 200 ms/],
  ])(
    '"%s" breaks the connection with %s and kills the instance',
    async (code, errorCode, message) => {
      const { instance, connection } = await connected();
      const failure = await run(connection, code).catch((error: McphostError) => error);
      expect(failure).toBeInstanceOf(McphostError);
      expect((failure as McphostError).code).toBe(errorCode);
      expect((failure as McphostError).message).toMatch(message);
      expect(connection.usable).toBe(false);
      expect(instance.killed).toBe(true);
      await expect(run(connection, 'value:1')).rejects.toMatchObject({ code: errorCode });
    },
  );

  it('a second result is a protocol fault noticed while idle', async () => {
    const { instance, connection } = await connected();
    const broken = new Promise<McphostError>((resolve) => connection.onBroken(resolve));
    await run(connection, 'value:1');
    instance.emit({ type: 'result', invocation: 'late', ok: true, value: 2 });
    expect((await broken).code).toBe('ERR_PROTOCOL');
    expect(connection.usable).toBe(false);
  });

  it('cancellation sends cancel, fails with ERR_CANCELLED and retires the instance', async () => {
    const { instance, connection } = await connected();
    const controller = new AbortController();
    const running = run(connection, 'hang', { ...noCalls, signal: controller.signal });
    await expect.poll(() => instance.received.length).toBe(1); // the invoke is out
    controller.abort();
    await expect(running).rejects.toMatchObject({ code: 'ERR_CANCELLED' });
    expect(instance.received.map((message) => message.type)).toEqual(['invoke', 'cancel']);
    expect(instance.killed).toBe(true);
  });

  it('a harness that never says ready is unavailable after the start-up timeout', async () => {
    const instance = new FakeInstance({ labels: {}, memoryMb: 96, cpus: 1, pids: 16 }, 10_000);
    const connection = new RunnerConnection(
      instance,
      runnerConnectionOptions({ startupTimeoutMs: 30 }),
    );
    await expect(connection.ready).rejects.toMatchObject({
      code: 'ERR_SANDBOX_UNAVAILABLE',
      message: 'sandbox unavailable: the runner did not become ready within 30 ms',
    });
    expect(instance.killed).toBe(true);
  });

  it('rejects an oversized line as a protocol fault', async () => {
    const instance = new FakeInstance({ labels: {}, memoryMb: 96, cpus: 1, pids: 16 }, 1);
    const connection = new RunnerConnection(
      instance,
      runnerConnectionOptions({ maxLineBytes: 1000 }),
    );
    await connection.ready;
    const running = run(connection, 'hang');
    instance.emitRaw('x'.repeat(2000));
    await expect(running).rejects.toMatchObject({
      code: 'ERR_PROTOCOL',
      message: /longer than 1000 bytes/,
    });
  });
});
