/**
 * Runner benchmark: what the warm pool, the harness and the protocol cost on
 * top of the bare container and its stdio attach.
 *
 * - warm: `return 1` through SandboxManager on a warm pool, against a raw echo
 *   round trip over the same Docker attach (same image, the raw-echo command);
 * - cold: the first invocation on an empty pool (create + start + ready +
 *   invoke), against raw create + start + first echo;
 * - throughput with 1, 8 and 32 concurrent callers on pools of that size.
 *
 * Targets: warm p50 ≤ 1.5× raw; cold ≤ 1.1× raw. Every loop is bounded.
 * Runnable alone: `npx tsx bench/runner-bench.ts`.
 */
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { encodeMessage } from '../src/protocol/index.js';
import { DockerSandbox } from '../control-plane/sandbox/docker/docker-sandbox.js';
import type { SandboxSpec } from '../control-plane/sandbox/driver.js';
import { buildRawBaselineCommand } from '../control-plane/sandbox/image/harness-command.js';
import { ensureRunnerImage } from '../control-plane/sandbox/image/ensure-runner-image.js';
import type { InvokeHooks, ToolRuntime } from '../control-plane/sandbox/invocation.js';
import { DEFAULT_INVOCATION_LIMITS } from '../control-plane/sandbox/limits.js';
import { SandboxManager } from '../control-plane/sandbox/sandbox-manager.js';
import { lineEcho } from './raw-echo.js';
import { percentile } from './stats.js';

/** Figures of one run, in milliseconds unless the name says otherwise. */
export interface RunnerBenchFigures {
  /** Back-to-back calls: the harness's next-context preparation lies on the path. */
  warm: WarmFigures;
  /** Calls 20 ms apart (an MCP client's pace is slower still): the next context is ready. */
  warmPaced: WarmFigures;
  cold: { samples: number; p50Ms: number; rawP50Ms: number; ratioP50: number };
  throughput: Array<{ concurrency: number; invocations: number; perSecond: number; p50Ms: number }>;
}

/** Warm latency through the manager against the raw echo, in ms. */
export interface WarmFigures {
  gapMs: number;
  samples: number;
  p50Ms: number;
  p99Ms: number;
  rawP50Ms: number;
  rawP99Ms: number;
  ratioP50: number;
}

/** Bench sizes; small enough to finish in about a minute on two cores. */
const WARM_SAMPLES = 300;
const WARM_UP = 30;
const PACED_GAP_MS = 20;
const COLD_SAMPLES = 8;
const THROUGHPUT_INVOCATIONS = 300;
const CONCURRENCY_LEVELS = [1, 8, 32];

const LIMITS = { ...DEFAULT_INVOCATION_LIMITS, timeoutMs: 10_000 };
const SPEC: SandboxSpec = {
  labels: { 'mcphost.pool': 'bench/raw' },
  memoryMb: LIMITS.memoryMb,
  cpus: LIMITS.cpus,
  pids: LIMITS.pids,
};
const HOOKS: InvokeHooks = {
  params: {},
  onCall: async () => {
    throw new Error('the bench tool makes no calls');
  },
};

/** Runs the benchmark against the local Docker engine, reporting one line per figure. */
export async function runRunnerBench(report: (line: string) => void): Promise<RunnerBenchFigures> {
  const image =
    process.env.MCPHOST_BENCH_RUNNER_IMAGE ??
    process.env.MCPHOST_TEST_RUNNER_IMAGE ??
    (await ensureRunnerImage());
  const planeName = `bench-runner-${process.pid}-${Date.now().toString(36)}`;
  const driver = new DockerSandbox({ image, planeName, killTimeoutMs: 5_000 });
  const sandbox = new SandboxManager({
    driver,
    defaults: {
      minWarm: 0,
      maxSize: 1,
      maxInvocationsPerContainer: 1_000_000,
      queueTimeoutMs: 120_000,
      limits: LIMITS,
    },
    generic: { size: 0 },
    caps: { maxSizePerPool: 64, maxTotal: 80 },
  });
  await sandbox.start();
  try {
    report(`runner bench: image ${image}, docker driver`);
    const warm = await measureWarm(sandbox, driver, 0, report);
    const warmPaced = await measureWarm(sandbox, driver, PACED_GAP_MS, report);
    const cold = await measureCold(sandbox, driver, report);
    const throughput = [];
    for (const concurrency of CONCURRENCY_LEVELS)
      throughput.push(await measureThroughput(sandbox, concurrency, report));
    return { warm, warmPaced, cold, throughput };
  } finally {
    await sandbox.close();
    await driver.close();
  }
}

async function measureWarm(
  sandbox: SandboxManager,
  driver: DockerSandbox,
  gapMs: number,
  report: (line: string) => void,
): Promise<WarmFigures> {
  const key = `bench/warm-${gapMs}`;
  const tool = benchTool(key);
  const managed = [];
  for (let index = 0; index < WARM_UP + WARM_SAMPLES; index += 1) {
    if (gapMs > 0) await sleep(gapMs);
    const started = performance.now();
    const outcome = await sandbox.invoke(tool, HOOKS);
    const elapsed = performance.now() - started;
    if (!outcome.ok)
      throw new Error(`bench tool failed: ${outcome.error?.code} ${outcome.error?.message}`);
    if (index >= WARM_UP) managed.push(elapsed);
  }
  sandbox.drain(key);

  const raw = await driver.start({ ...SPEC, command: buildRawBaselineCommand() });
  const echo = lineEcho(raw);
  // An invoke-sized line, so both sides carry the same bytes.
  const line = encodeMessage({
    type: 'invoke',
    invocation: '00000000-0000-0000-0000-000000000000',
    code: tool.code,
    params: {},
    env: {},
    timeoutMs: LIMITS.timeoutMs,
    limits: { maxResultBytes: LIMITS.maxResultBytes, maxLogBytes: LIMITS.maxLogBytes },
  });
  const rawTimes = [];
  try {
    for (let index = 0; index < WARM_UP + WARM_SAMPLES; index += 1) {
      if (gapMs > 0) await sleep(gapMs);
      const started = performance.now();
      await echo.roundTrip(line);
      if (index >= WARM_UP) rawTimes.push(performance.now() - started);
    }
  } finally {
    await raw.kill();
  }
  const figures = {
    gapMs,
    samples: WARM_SAMPLES,
    p50Ms: percentile(managed, 50),
    p99Ms: percentile(managed, 99),
    rawP50Ms: percentile(rawTimes, 50),
    rawP99Ms: percentile(rawTimes, 99),
    ratioP50: 0,
  };
  figures.ratioP50 = figures.p50Ms / figures.rawP50Ms;
  report(
    `warm invoke${gapMs > 0 ? ` (calls ${gapMs} ms apart)` : ' (back-to-back)'}: p50 ${ms(figures.p50Ms)} p99 ${ms(figures.p99Ms)} | raw echo: p50 ${ms(figures.rawP50Ms)} p99 ${ms(figures.rawP99Ms)} | ratio p50 ${figures.ratioP50.toFixed(2)}× (target ≤ 1.5×)`,
  );
  return figures;
}

async function measureCold(
  sandbox: SandboxManager,
  driver: DockerSandbox,
  report: (line: string) => void,
): Promise<RunnerBenchFigures['cold']> {
  const managed = [];
  const raw = [];
  for (let index = 0; index < COLD_SAMPLES; index += 1) {
    // Alternate the two so engine warm-up and noise hit both alike.
    const key = `bench/cold-${index}`;
    let started = performance.now();
    const outcome = await sandbox.invoke(benchTool(key), HOOKS);
    managed.push(performance.now() - started);
    if (!outcome.ok)
      throw new Error(`bench tool failed: ${outcome.error?.code} ${outcome.error?.message}`);
    sandbox.retireTool(key);

    started = performance.now();
    const instance = await driver.start({ ...SPEC, command: buildRawBaselineCommand() });
    await lineEcho(instance).roundTrip('{"type":"ping"}\n');
    raw.push(performance.now() - started);
    await instance.kill();
  }
  const p50Ms = percentile(managed, 50);
  const rawP50Ms = percentile(raw, 50);
  const figures = { samples: COLD_SAMPLES, p50Ms, rawP50Ms, ratioP50: p50Ms / rawP50Ms };
  report(
    `cold invoke: p50 ${ms(p50Ms)} | raw create+start+first echo: p50 ${ms(rawP50Ms)} | ratio ${figures.ratioP50.toFixed(2)}× (target ≤ 1.1×)`,
  );
  return figures;
}

async function measureThroughput(
  sandbox: SandboxManager,
  concurrency: number,
  report: (line: string) => void,
): Promise<RunnerBenchFigures['throughput'][number]> {
  const key = `bench/throughput-${concurrency}`;
  sandbox.configurePool(key, { minWarm: concurrency, maxSize: concurrency });
  const tool = benchTool(key);
  await sandbox.invoke(tool, HOOKS); // creates the pool, which then warms to minWarm
  const deadline = Date.now() + 120_000;
  while (
    Date.now() < deadline &&
    (sandbox.stats().find((pool) => pool.poolKey === key)?.warm ?? 0) < concurrency
  ) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < THROUGHPUT_INVOCATIONS) {
        next += 1;
        const begun = performance.now();
        const outcome = await sandbox.invoke(tool, HOOKS);
        latencies.push(performance.now() - begun);
        if (!outcome.ok)
          throw new Error(`bench tool failed: ${outcome.error?.code} ${outcome.error?.message}`);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  sandbox.drain(key);
  const figures = {
    concurrency,
    invocations: THROUGHPUT_INVOCATIONS,
    perSecond: THROUGHPUT_INVOCATIONS / seconds,
    p50Ms: percentile(latencies, 50),
  };
  report(
    `throughput at ${concurrency} concurrent: ${figures.perSecond.toFixed(0)} invocations/s, p50 ${ms(figures.p50Ms)}`,
  );
  return figures;
}

function benchTool(poolKey: string): ToolRuntime {
  const [server = poolKey, tool = 'tool'] = poolKey.split('/');
  return {
    server,
    tool,
    isolation: 'tool',
    runtime: 'runc',
    code: 'return 1;',
    env: {},
    limits: LIMITS,
    strict: false,
  };
}

function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

function ms(value: number): string {
  return `${value.toFixed(2)} ms`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  runRunnerBench((line) => console.log(line)).then(
    (figures) => console.log(JSON.stringify(figures)),
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
