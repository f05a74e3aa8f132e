/**
 * Runner benchmark: what the warm pool, the harness and the protocol cost on
 * top of the bare container and its stdio attach.
 *
 * - warm: `return 1` through SandboxManager on a warm pool, against a raw echo
 *   round trip over the same Docker attach (same image, the raw-echo command);
 * - cold: the first invocation on an empty pool (create + start + ready +
 *   invoke), against raw create + start + first echo;
 * - throughput with 1, 8 and 32 concurrent callers on pools of that size;
 * - warm and cold again under gVisor (`runtime: "runsc"`), beside runc, when
 *   the engine has runsc registered (the raw baselines then run under runsc too).
 *
 * Targets: warm p50 ≤ 1.5× raw; cold ≤ 1.1× raw. Every loop is bounded.
 * Runnable alone: `npx tsx bench/runner-bench.ts` (`--small`: a quick smoke
 * with a few samples and no throughput runs).
 */
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { encodeMessage } from '../src/protocol/index.js';
import { DockerSandbox } from '../control-plane/sandbox/docker/docker-sandbox.js';
import type { SandboxSpec } from '../control-plane/sandbox/driver.js';
import { buildRawBaselineCommand } from '../control-plane/sandbox/harness-command.js';
import { ensureRunnerImage } from '../control-plane/image-build/ensure-runner-image.js';
import type { InvokeHooks, ToolRuntime } from '../control-plane/sandbox/invocation.js';
import { poolDefaultsFrom } from '../control-plane/app/component-settings.js';
import { defaultConfig, readSetting } from '../control-plane/config.js';
import { SandboxManager } from '../control-plane/sandbox/sandbox-manager.js';
import { lineEcho } from './raw-echo.js';
import { percentile } from './stats.js';
import { poolBudget } from '../control-plane/app/pool-budget.js';

/** Figures of one run, in milliseconds unless the name says otherwise. */
export interface RunnerBenchFigures {
  /** Back-to-back calls: the harness's next-context preparation lies on the path. */
  warm: WarmFigures;
  /** Calls 20 ms apart (an MCP client's pace is slower still): the next context is ready. */
  warmPaced: WarmFigures;
  cold: ColdFigures;
  throughput: Array<{ concurrency: number; invocations: number; perSecond: number; p50Ms: number }>;
  /** Warm (back-to-back) and cold under gVisor, or why they were not measured. */
  runsc: { warm: WarmFigures; cold: ColdFigures } | { skipped: string };
}

/** Cold start through the manager against raw create + start + first echo, in ms. */
export interface ColdFigures {
  samples: number;
  p50Ms: number;
  rawP50Ms: number;
  ratioP50: number;
}

/** How many samples each part takes. */
export interface RunnerBenchSizes {
  warmUp: number;
  warmSamples: number;
  coldSamples: number;
  throughputInvocations: number;
  concurrencyLevels: number[];
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
export const DEFAULT_RUNNER_BENCH_SIZES: RunnerBenchSizes = {
  warmUp: 30,
  warmSamples: 300,
  coldSamples: 8,
  throughputInvocations: 300,
  concurrencyLevels: [1, 8, 32],
};
/** A smoke run: a few samples of each latency, no throughput. */
const SMALL_SIZES: RunnerBenchSizes = {
  warmUp: 5,
  warmSamples: 30,
  coldSamples: 3,
  throughputInvocations: 0,
  concurrencyLevels: [],
};
const PACED_GAP_MS = 20;

const CONFIGURED = poolDefaultsFrom(defaultConfig());
const LIMITS = { ...CONFIGURED.limits, timeoutMs: 10_000 };
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
export async function runRunnerBench(
  report: (line: string) => void,
  sizes: RunnerBenchSizes = DEFAULT_RUNNER_BENCH_SIZES,
): Promise<RunnerBenchFigures> {
  const image =
    process.env.MCPHOST_BENCH_RUNNER_IMAGE ??
    process.env.MCPHOST_TEST_RUNNER_IMAGE ??
    (await ensureRunnerImage({ base: readSetting('runnerBase') }));
  const planeName = `bench-runner-${process.pid}-${Date.now().toString(36)}`;
  const driver = new DockerSandbox({ image, planeName, killTimeoutMs: 5_000 });
  const sandbox = new SandboxManager({
    driver,
    defaults: {
      ...CONFIGURED,
      minWarm: 0,
      maxSize: 1,
      maxInvocationsPerContainer: 1_000_000,
      queueTimeoutMs: 120_000,
      limits: LIMITS,
    },
    generic: { size: 0 },
    startConcurrency: poolBudget(defaultConfig()).startConcurrency,
    reapIntervalMs: 30_000,
    caps: { maxSizePerPool: 64, maxTotal: 80, serverShare: defaultConfig().poolServerShare },
  });
  await sandbox.start();
  try {
    report(`runner bench: image ${image}, docker driver`);
    const bench = { sandbox, driver, sizes, report };
    const warm = await measureWarm(bench, 0, 'runc');
    const warmPaced = await measureWarm(bench, PACED_GAP_MS, 'runc');
    const cold = await measureCold(bench, 'runc');
    const throughput = [];
    for (const concurrency of sizes.concurrencyLevels)
      throughput.push(await measureThroughput(bench, concurrency));
    const runsc = (await driver.runtimes()).includes('runsc')
      ? await measureRunsc(bench, warm, cold)
      : { skipped: 'the Docker engine has no runsc runtime registered' };
    if ('skipped' in runsc) report(`gVisor (runsc): not measured: ${runsc.skipped}`);
    return { warm, warmPaced, cold, throughput, runsc };
  } finally {
    await sandbox.close();
    await driver.close();
  }
}

/** What every measurement works with. */
interface Bench {
  sandbox: SandboxManager;
  driver: DockerSandbox;
  sizes: RunnerBenchSizes;
  report: (line: string) => void;
}

type OciRuntime = NonNullable<SandboxSpec['runtime']>;

/** Warm and cold under gVisor, each reported beside the runc figure of this run. */
async function measureRunsc(
  bench: Bench,
  runcWarm: WarmFigures,
  runcCold: ColdFigures,
): Promise<{ warm: WarmFigures; cold: ColdFigures }> {
  const warm = await measureWarm(bench, 0, 'runsc');
  const cold = await measureCold(bench, 'runsc');
  bench.report(
    `runsc beside runc: warm p50 ${ms(warm.p50Ms)} vs ${ms(runcWarm.p50Ms)} (${(warm.p50Ms / runcWarm.p50Ms).toFixed(2)}×), cold p50 ${ms(cold.p50Ms)} vs ${ms(runcCold.p50Ms)} (${(cold.p50Ms / runcCold.p50Ms).toFixed(2)}×)`,
  );
  return { warm, cold };
}

async function measureWarm(bench: Bench, gapMs: number, runtime: OciRuntime): Promise<WarmFigures> {
  const { sandbox, driver, sizes, report } = bench;
  const key = `bench/warm-${runtime}-${gapMs}`;
  const tool = benchTool(key, runtime);
  const managed = [];
  for (let index = 0; index < sizes.warmUp + sizes.warmSamples; index += 1) {
    if (gapMs > 0) await sleep(gapMs);
    const started = performance.now();
    const outcome = await sandbox.invoke(tool, HOOKS);
    const elapsed = performance.now() - started;
    if (!outcome.ok)
      throw new Error(`bench tool failed: ${outcome.error?.code} ${outcome.error?.message}`);
    if (index >= sizes.warmUp) managed.push(elapsed);
  }
  sandbox.drain(key);

  const raw = await driver.start({ ...SPEC, runtime, command: buildRawBaselineCommand() });
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
    for (let index = 0; index < sizes.warmUp + sizes.warmSamples; index += 1) {
      if (gapMs > 0) await sleep(gapMs);
      const started = performance.now();
      await echo.roundTrip(line);
      if (index >= sizes.warmUp) rawTimes.push(performance.now() - started);
    }
  } finally {
    await raw.kill();
  }
  const figures = {
    gapMs,
    samples: sizes.warmSamples,
    p50Ms: percentile(managed, 50),
    p99Ms: percentile(managed, 99),
    rawP50Ms: percentile(rawTimes, 50),
    rawP99Ms: percentile(rawTimes, 99),
    ratioP50: 0,
  };
  figures.ratioP50 = figures.p50Ms / figures.rawP50Ms;
  report(
    `${runtime} warm invoke${gapMs > 0 ? ` (calls ${gapMs} ms apart)` : ' (back-to-back)'}: p50 ${ms(figures.p50Ms)} p99 ${ms(figures.p99Ms)} | raw echo: p50 ${ms(figures.rawP50Ms)} p99 ${ms(figures.rawP99Ms)} | ratio p50 ${figures.ratioP50.toFixed(2)}× (target ≤ 1.5×)`,
  );
  return figures;
}

async function measureCold(bench: Bench, runtime: OciRuntime): Promise<ColdFigures> {
  const { sandbox, driver, sizes, report } = bench;
  const managed = [];
  const raw = [];
  for (let index = 0; index < sizes.coldSamples; index += 1) {
    // Alternate the two so engine warm-up and noise hit both alike.
    const tool = `cold-${runtime}-${index}`;
    let started = performance.now();
    const outcome = await sandbox.invoke(benchTool(`bench/${tool}`, runtime), HOOKS);
    managed.push(performance.now() - started);
    if (!outcome.ok)
      throw new Error(`bench tool failed: ${outcome.error?.code} ${outcome.error?.message}`);
    sandbox.toolChanged('bench', tool);

    started = performance.now();
    const instance = await driver.start({ ...SPEC, runtime, command: buildRawBaselineCommand() });
    await lineEcho(instance).roundTrip('{"type":"ping"}\n');
    raw.push(performance.now() - started);
    await instance.kill();
  }
  const p50Ms = percentile(managed, 50);
  const rawP50Ms = percentile(raw, 50);
  const figures = { samples: sizes.coldSamples, p50Ms, rawP50Ms, ratioP50: p50Ms / rawP50Ms };
  report(
    `${runtime} cold invoke: p50 ${ms(p50Ms)} | raw create+start+first echo: p50 ${ms(rawP50Ms)} | ratio ${figures.ratioP50.toFixed(2)}× (target ≤ 1.1×)`,
  );
  return figures;
}

async function measureThroughput(
  bench: Bench,
  concurrency: number,
): Promise<RunnerBenchFigures['throughput'][number]> {
  const { sandbox, sizes, report } = bench;
  const key = `bench/throughput-${concurrency}`;
  sandbox.configurePool(key, { minWarm: concurrency, maxSize: concurrency });
  const tool = benchTool(key, 'runc');
  await sandbox.invoke(tool, HOOKS); // creates the pool, which then warms to minWarm
  const deadline = Date.now() + 120_000;
  while (
    Date.now() < deadline &&
    (sandbox.stats().find((pool) => pool.poolKey.startsWith(`${key}@`))?.warm ?? 0) < concurrency
  ) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < sizes.throughputInvocations) {
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
    invocations: sizes.throughputInvocations,
    perSecond: sizes.throughputInvocations / seconds,
    p50Ms: percentile(latencies, 50),
  };
  report(
    `throughput at ${concurrency} concurrent: ${figures.perSecond.toFixed(0)} invocations/s, p50 ${ms(figures.p50Ms)}`,
  );
  return figures;
}

function benchTool(poolKey: string, runtime: OciRuntime): ToolRuntime {
  const [server = poolKey, tool = 'tool'] = poolKey.split('/');
  return {
    server,
    tool,
    isolation: 'tool',
    runtime,
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
  const sizes = process.argv.includes('--small') ? SMALL_SIZES : DEFAULT_RUNNER_BENCH_SIZES;
  runRunnerBench((line) => console.log(line), sizes).then(
    (figures) => console.log(JSON.stringify(figures)),
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
