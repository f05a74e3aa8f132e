/**
 * One outcome shape from the runner connection to the MCP result: the
 * connection reads a verdict at its edge, the manager retires by the error
 * registry, the invoker redacts each log line once and logs infrastructure
 * failures by the registry, and the MCP result is built from the verdict alone.
 * Unit tests with a scripted in-memory harness and fake invoker ports.
 */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../control-plane/logger.js';
import {
  ToolInvoker,
  type InvocableTool,
  type InvocationLogEntry,
  type InvokerPorts,
} from '../../control-plane/invocation/tool-invoker.js';
import { toCallToolResult } from '../../control-plane/mcp/tool-result.js';
import type {
  InvocationOutcome,
  InvokeHooks,
  LogEntry,
  ToolRuntime,
} from '../../control-plane/sandbox/invocation.js';
import { RunnerConnection } from '../../control-plane/sandbox/runner-connection.js';
import { SandboxManager } from '../../control-plane/sandbox/sandbox-manager.js';
import {
  DEFAULT_CAP_EXTRAS,
  DEFAULT_INVOCATION_LIMITS,
  DEFAULT_POOL_DEFAULTS,
  DEFAULT_SCHEMA_CHECKS,
  DEFAULT_START_CONCURRENCY,
} from '../support/config-defaults.js';
import { FakeDriver, FakeInstance } from './fake-driver.js';
import { runnerConnectionOptions } from './runner-connection-options.js';

const limits = { ...DEFAULT_INVOCATION_LIMITS, timeoutMs: 300 };
const spec = { labels: {}, memoryMb: 96, cpus: 1, pids: 16 };

/** The id of the invocation an instance was sent last. */
function lastInvocation(instance: FakeInstance): string {
  return instance.received.filter((message) => message.type === 'invoke').at(-1)
    ?.invocation as string;
}

describe('RunnerConnection', () => {
  it('refuses options that are missing or out of range (no defaults of its own)', () => {
    const instance = new FakeInstance(spec, 1);
    expect(
      () => new RunnerConnection(instance, runnerConnectionOptions({ now: undefined })),
    ).toThrow(/now must be a function/);
    expect(
      () => new RunnerConnection(instance, runnerConnectionOptions({ maxConcurrentCalls: 0 })),
    ).toThrow(/maxConcurrentCalls must be an integer >= 1/);
    expect(
      () => new RunnerConnection(instance, runnerConnectionOptions({ startupTimeoutMs: 0 })),
    ).toThrow(/startupTimeoutMs must be > 0/);
  });

  it('takes a value only as the wire has it: a result without one breaks the protocol', async () => {
    const instance = new FakeInstance(spec, 1);
    const connection = new RunnerConnection(instance, runnerConnectionOptions());
    await connection.ready;
    const running = connection.invoke(
      { code: 'hang', params: {}, env: {}, limits },
      { onCall: async () => ({}) },
    );
    await expect.poll(() => instance.received.length).toBe(1);
    instance.emit({ type: 'result', invocation: lastInvocation(instance), ok: true });
    await expect(running).rejects.toMatchObject({ code: 'ERR_PROTOCOL' });
    expect(connection.usable).toBe(false);
  });

  it('hands each log line on as one entry; a throwing sink neither loses the result nor the runner', async () => {
    const instance = new FakeInstance(spec, 1);
    const connection = new RunnerConnection(instance, runnerConnectionOptions());
    await connection.ready;
    const seen: LogEntry[] = [];
    const verdict = await connection.invoke(
      { code: 'log:2', params: {}, env: {}, limits },
      {
        onCall: async () => ({}),
        onLog: (entry) => {
          seen.push(entry);
          throw new Error('the sink is broken');
        },
      },
    );
    expect(verdict).toEqual({ ok: true, value: 'logged' });
    expect(seen).toEqual([
      { level: 'log', text: 'x'.repeat(100), at: expect.any(Number) },
      { level: 'log', text: 'x'.repeat(100), at: expect.any(Number) },
    ]);
    expect(connection.usable).toBe(true);
  });
});

describe('SandboxManager retires by the error registry', () => {
  function manager(driver: FakeDriver): SandboxManager {
    return new SandboxManager({
      driver,
      defaults: { ...DEFAULT_POOL_DEFAULTS, minWarm: 0, maxSize: 1, timeoutGraceMs: 10, limits },
      generic: { size: 0 },
      startConcurrency: DEFAULT_START_CONCURRENCY,
      reapIntervalMs: 30_000,
      caps: { ...DEFAULT_CAP_EXTRAS, maxSizePerPool: 4, maxTotal: 4, serverShare: 1 },
    });
  }
  const runtime = (code: string): ToolRuntime => ({
    server: 'srv',
    tool: 'tool',
    isolation: 'tool',
    runtime: 'runc',
    code,
    env: {},
    limits,
    strict: false,
  });
  const hooks: InvokeHooks = { params: {}, onCall: async () => ({}) };

  it.each([
    ['ERR_TOOL_TIMEOUT', { timeout: 1 }],
    ['ERR_TOOL_MEMORY', { memory: 1 }],
    ['ERR_TOOL_ERROR', {}],
  ])('a harness-reported %s retires the container as %j', async (code, retired) => {
    const driver = new FakeDriver();
    const sandbox = manager(driver);
    try {
      const running = sandbox.invoke(runtime('hang'), hooks);
      await expect.poll(() => driver.instances[0]?.received.length).toBe(1);
      const instance = driver.instances[0]!;
      instance.emit({
        type: 'result',
        invocation: lastInvocation(instance),
        ok: false,
        error: { code, message: 'reported' },
      });
      const outcome = await running;
      expect(outcome).toMatchObject({ ok: false, error: { code } });
      expect(sandbox.stats()[0]?.retired).toEqual(retired);
    } finally {
      await sandbox.close();
    }
  });
});

describe('ToolInvoker and the MCP result', () => {
  const tool: InvocableTool = {
    subdomain: 'srv',
    name: 'tool',
    version: 3,
    description: '',
    code: 'unused: the sandbox is a fake',
    parameters: [],
    secrets: ['API_KEY'],
    limits: {},
    strict: false,
  };
  const SECRET = 'sk-live-123456';

  /** An invoker whose sandbox answers with `outcome` after streaming `lines`. */
  function invoker(outcome: InvocationOutcome, lines: LogEntry[] = []) {
    const appended: InvocationLogEntry[] = [];
    const serviceLog: Array<{ level: number; msg: string; outcome?: string }> = [];
    const ports: InvokerPorts = {
      sandbox: {
        async invoke(_runtime, hooks) {
          for (const line of lines) hooks.onLog?.(line);
          return outcome;
        },
      },
      broker: { handle: async () => ({}), endInvocation: async () => {} },
      secrets: () => ({ API_KEY: SECRET }),
      server: () => undefined,
      log: { append: (entry) => appended.push(entry), countRefusal: () => {} },
      metrics: { invocation: () => {}, brokerRequest: () => {}, refusal: () => {} },
      logger: createLogger('debug', {
        write: (line: string) => serviceLog.push(JSON.parse(line) as (typeof serviceLog)[number]),
      }),
    };
    return {
      invoker: new ToolInvoker(ports, DEFAULT_INVOCATION_LIMITS, DEFAULT_SCHEMA_CHECKS),
      appended,
      serviceLog,
    };
  }
  const measured = { durationMs: 5, queueMs: 1, instanceId: 'fake:1' };

  it('refuses invalid default limits at construction (the one check of the limits)', () => {
    const ports = {} as InvokerPorts;
    expect(
      () =>
        new ToolInvoker(
          ports,
          { ...DEFAULT_INVOCATION_LIMITS, timeoutMs: 0 },
          DEFAULT_SCHEMA_CHECKS,
        ),
    ).toThrow(/ToolInvoker: invalid default limits: timeoutMs/);
  });

  it('redacts each log line once, as it arrives: the live copy is the one kept and stored', async () => {
    const line: LogEntry = { level: 'log', text: `key=${SECRET}`, at: 1 };
    const { invoker: run, appended } = invoker(
      { ok: true, value: { n: 1 }, logs: [line], ...measured },
      [line],
    );
    const live: LogEntry[] = [];
    const result = await run.invoke({
      tool,
      args: {},
      caller: { kind: 'admin' },
      requestId: 'r1',
      onLog: (entry) => live.push(entry),
    });
    expect(live).toEqual([{ level: 'log', text: 'key=[REDACTED:API_KEY]', at: 1 }]);
    expect(result.logs).toEqual(live);
    expect(result.logs[0]).toBe(live[0]);
    expect(appended[0]?.logs[0]).toBe(live[0]);
    expect(result).toMatchObject({ ok: true, value: { n: 1 }, version: 3, durationMs: 5 });
    expect(toCallToolResult(result)).toEqual({
      content: [{ type: 'text', text: '{"n":1}' }],
      structuredContent: { n: 1 },
    });
  });

  it('a failure keeps its code and position, its message redacted, all the way to the MCP result', async () => {
    const error = {
      code: 'ERR_TOOL_ERROR' as const,
      message: `bad ${SECRET}`,
      line: 2,
      column: 7,
    };
    const {
      invoker: run,
      appended,
      serviceLog,
    } = invoker({
      ok: false,
      error,
      logs: [],
      ...measured,
    });
    const result = await run.invoke({ tool, args: {}, caller: { kind: 'admin' }, requestId: 'r2' });
    expect(result).toMatchObject({
      ok: false,
      error: { code: 'ERR_TOOL_ERROR', message: 'bad [REDACTED:API_KEY]', line: 2, column: 7 },
    });
    expect(appended[0]).toMatchObject({
      ok: false,
      errorCode: 'ERR_TOOL_ERROR',
      errorMessage: 'bad [REDACTED:API_KEY]',
    });
    expect(toCallToolResult(result)).toEqual({
      isError: true,
      content: [{ type: 'text', text: 'bad [REDACTED:API_KEY]' }],
      _meta: { 'mcphost/errorCode': 'ERR_TOOL_ERROR', 'mcphost/line': 2, 'mcphost/column': 7 },
    });
    // A tool's own failure is not the service's: no warning for operators.
    expect(serviceLog.map((entry) => entry.msg)).toEqual(['invocation finished']);
  });

  // pino's numeric levels.
  const WARN = 40;
  const DEBUG = 20;
  it.each([
    ['ERR_SANDBOX_UNAVAILABLE', WARN, 'invocation failed in the sandbox'],
    ['ERR_SHUTTING_DOWN', WARN, 'invocation failed in the sandbox'],
    ['ERR_CANCELLED', DEBUG, 'invocation finished'],
  ] as const)('%s is logged at level %d, as the registry says', async (code, level, msg) => {
    const { invoker: run, serviceLog } = invoker({
      ok: false,
      error: { code, message: 'why' },
      logs: [],
      ...measured,
    });
    await run.invoke({ tool, args: {}, caller: { kind: 'admin' }, requestId: 'r3' });
    expect(serviceLog).toEqual([expect.objectContaining({ level, msg, outcome: code })]);
  });
});
