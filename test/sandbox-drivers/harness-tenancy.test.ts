/**
 * The real harness in real containers, driven through RunnerConnection as the
 * pool drives it: a console flood stays within the log budget on both sides
 * (and within the invocation-log row and page bounds), what a finished tool
 * leaves running never delays the next call on the same container, and an sdk
 * call too large for one protocol line fails inside the tool, container kept.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerSandbox } from '../../control-plane/sandbox/docker/docker-sandbox.js';
import { ensureRunnerImage } from '../../control-plane/image-build/ensure-runner-image.js';
import type { InvocationVerdict, LogEntry } from '../../control-plane/sandbox/invocation.js';
import type { InvocationLimits } from '../../control-plane/sandbox/limits.js';
import { LogCollector } from '../../control-plane/sandbox/log-collector.js';
import { RunnerConnection } from '../../control-plane/sandbox/runner-connection.js';
import type { Store } from '../../control-plane/store/index.js';
import { buildHarness } from '../../scripts/build-harness.js';
import { runnerConnectionOptions } from '../sandbox/runner-connection-options.js';
import { sqliteTarget } from '../store/store-targets.js';
import { DEFAULT_INVOCATION_LIMITS } from '../support/config-defaults.js';
import { smallSpec, uniquePlaneName } from './helpers.js';

const HOSTILE = join(import.meta.dirname, '..', 'fixtures', 'hostile');
const fixture = (name: string): string => readFileSync(join(HOSTILE, name), 'utf8');

const LIMITS: InvocationLimits = { ...DEFAULT_INVOCATION_LIMITS, timeoutMs: 1_500, memoryMb: 128 };

let driver: DockerSandbox;

beforeAll(async () => {
  const harnessDir = dirname((await buildHarness()).harnessPath);
  const image =
    process.env.MCPHOST_TEST_RUNNER_IMAGE ??
    (await ensureRunnerImage({ base: 'local', harnessDir }));
  driver = new DockerSandbox({ image, planeName: uniquePlaneName('tenancy') });
}, 300_000);

afterAll(async () => {
  await driver?.close();
});

async function connect(memoryMb = LIMITS.memoryMb): Promise<RunnerConnection> {
  const connection = new RunnerConnection(
    await driver.start(smallSpec({ memoryMb })),
    runnerConnectionOptions(),
  );
  await connection.ready;
  return connection;
}

interface Run {
  result: InvocationVerdict;
  /** Every log line the harness sent, before the control plane's own bound. */
  sent: number;
  logs: LogEntry[];
}

async function run(
  connection: RunnerConnection,
  code: string,
  limits: Partial<InvocationLimits> = {},
): Promise<Run> {
  const all = { ...LIMITS, ...limits };
  const logs = new LogCollector(all);
  let sent = 0;
  const result = await connection.invoke(
    { code, params: { n: 41 }, env: {}, limits: all },
    {
      onLog: (entry) => {
        sent++;
        logs.add(entry);
      },
      onCall: () => Promise.reject(new Error('no brokered call is expected')),
    },
  );
  return { result, sent, logs: logs.entries };
}

describe('a console.log("") flood through a real container', () => {
  const target = sqliteTarget();
  let store: Store;
  beforeAll(async () => {
    store = await target.open({
      invocationRowMaxBytes: 32 * 1024,
      invocationPageMaxBytes: 96 * 1024,
    });
  });
  afterAll(async () => {
    await store?.close();
    await target.teardown();
  });

  it('keeps at most the line cap, says so, and stores bounded rows and pages', async () => {
    const connection = await connect();
    try {
      const flood = await run(connection, fixture('log-flood-empty-lines.js'), {
        timeoutMs: 5_000,
        maxLogEntries: 500,
      });
      expect(flood.result).toEqual({ ok: true, value: null });
      // The harness stops at the cap (plus its notice); the control plane keeps no more.
      expect(flood.sent).toBeLessThanOrEqual(501);
      expect(flood.logs.length).toBeLessThanOrEqual(502);
      expect(flood.logs.at(-1)).toMatchObject({
        level: 'warn',
        text: expect.stringMatching(/^\[mcphost\] log output passed the limit of 500 lines/),
      });
      const entries = Array.from({ length: 10 }, (_, index) => ({
        id: `flood-${index}`,
        at: new Date().toISOString(),
        server: 'flood',
        tool: 'empty-lines',
        version: 1,
        durationMs: 1000,
        ok: true,
        logs: flood.logs.map(({ level, text }) => ({ level, text: text + 'x'.repeat(100) })),
      }));
      await store.appendInvocations(entries);
      const rows = await target.raw(
        "SELECT length(logs) AS n FROM invocations WHERE server = 'flood'",
      );
      for (const row of rows) expect(Number(row.n)).toBeLessThanOrEqual(32 * 1024);
      const page = await store.listInvocations({ server: 'flood', limit: 100 });
      expect(page).toHaveLength(10);
      expect(JSON.stringify(page).length).toBeLessThan(96 * 1024 + 10 * 1024);
      expect(page[0]?.logs.at(-1)?.text).toMatch(/log lines not stored/);
      expect(page.at(-1)?.logs[0]?.text).toMatch(/left out: this page reached its limit/);
    } finally {
      await connection.close();
    }
  });

  it('the control plane holds its bound when a harness sends more than it should', () => {
    const logs = new LogCollector({ maxLogBytes: 256 * 1024, maxLogEntries: 1000 });
    for (let index = 0; index < 1_000_000; index++) logs.add({ level: 'log', text: '', at: 0 });
    expect(logs.entries).toHaveLength(1002);
    expect(logs.truncated).toBe(true);
    expect(logs.entries.at(-1)?.text).toMatch(/^\[mcphost\] log limit reached/);
  });
});

describe('what a finished invocation leaves running', () => {
  it('leftover-wait-async.js: the next call on the same container answers at once', async () => {
    const connection = await connect();
    try {
      const first = await run(connection, fixture('leftover-wait-async.js'));
      expect(first.result).toEqual({ ok: true, value: ['undefined', 'undefined'] });
      expect(connection.usable).toBe(true);
      // Left running, the leftover would hang this call past its 3 s limit.
      const next = await run(connection, 'return params.n + 1', { timeoutMs: 3_000 });
      expect(next.result).toEqual({ ok: true, value: 42 });
      expect(next.logs).toEqual([]);
    } finally {
      await connection.close();
    }
  });

  it.each(['leftover-microtask-loop.js', 'leftover-cpu-burn.js'])(
    '%s: runs on its own call, which times out; the container is not served again',
    async (name) => {
      const connection = await connect();
      try {
        await expect(run(connection, fixture(name), { timeoutMs: 1_500 })).rejects.toMatchObject({
          code: 'ERR_TOOL_TIMEOUT',
        });
        // The deadline killed the container: a pool retires it instead of serving the next caller.
        expect(connection.usable).toBe(false);
      } finally {
        await connection.close();
      }
    },
  );
});

describe('an sdk call over the 16 MiB line limit', () => {
  it('fails inside the tool with ERR_INVALID_ARGUMENT and keeps the container', async () => {
    const connection = await connect(256);
    try {
      const big = await run(connection, fixture('sdk-call-over-line-limit.js'), {
        memoryMb: 256,
        timeoutMs: 10_000,
      });
      expect(big.result).toMatchObject({
        ok: false,
        error: {
          code: 'ERR_TOOL_ERROR',
          message: expect.stringMatching(
            /^ERR_INVALID_ARGUMENT: arguments of http are too large: more than 16777216 bytes/,
          ),
        },
      });
      expect(connection.usable).toBe(true);
      const next = await run(connection, 'return params.n + 1', { memoryMb: 256 });
      expect(next.result).toEqual({ ok: true, value: 42 });
    } finally {
      await connection.close();
    }
  });
});
