/**
 * Runner benchmark: what the warm pool, the harness and the protocol cost on
 * top of the bare container and its stdio attach.
 *
 * - warm: `return 1` through SandboxManager on a warm pool, against a raw echo
 *   round trip over the same Docker attach (same image, the raw-echo command);
 * - cold: the first invocation on an empty pool (create + start + ready +
 *   invoke), against raw create + start + first echo;
 * - throughput with 1, 8 and 32 concurrent callers on pools of that size;
 * - warm memory: the cgroup memory of a warm runner that has run a tool using
 *   `sdk.lodash` and prepared its next context, as `docker stats` shows it;
 * - warm and cold again under gVisor (`runtime: "runsc"`), beside runc, when
 *   the engine has runsc registered (the raw baselines then run under runsc too).
 *
 * Targets: warm p50 ≤ 1.5× raw; cold ≤ 1.1× raw; warm memory ≤ 16 MiB. Every
 * loop is bounded.
 * Runnable alone: `npx tsx bench/runner-bench.ts` (`--small`: a quick smoke
 * with a few samples and no throughput runs).
 */
import { performance } from 'node:perf_hooks';
import Dockerode from 'dockerode';
import { fileURLToPath } from 'node:url';
import { encodeMessage } from '../src/protocol/index.js';
import { DockerSandbox } from '../control-plane/sandbox/docker/docker-sandbox.js';
import { PLANE_INSTANCE_LABEL } from '../control-plane/sandbox/docker/hardened-container-config.js';
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
  memory: MemoryFigures;
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
  /** Runners whose memory is read (each after MEMORY_CALLS calls). */
  memorySamples: number;
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

/**
 * Cgroup memory of a warm runner with lodash loaded, in MiB, as `docker stats`
 * shows it: usage less the inactive page cache.
 */
export interface MemoryFigures {
  samples: number;
  /** Median of the runners right after their calls, their next context prepared. */
  warmMiB: number;
  /** Median of the same runners once V8's idle collection ran (after IDLE_SETTLE_MS without calls). */
  idleMiB: number;
}

/** Bench sizes; small enough to finish in about a minute on two cores. */
export const DEFAULT_RUNNER_BENCH_SIZES: RunnerBenchSizes = {
  warmUp: 30,
  warmSamples: 300,
  coldSamples: 8,
  memorySamples: 3,
  throughputInvocations: 300,
  concurrencyLevels: [1, 8, 32],
};
/** A smoke run: a few samples of each latency, no throughput. */
const SMALL_SIZES: RunnerBenchSizes = {
  warmUp: 5,
  warmSamples: 30,
  coldSamples: 3,
  memorySamples: 1,
  throughputInvocations: 0,
  concurrencyLevels: [],
};
const PACED_GAP_MS = 20;
/** Calls a runner serves before its memory is read. */
const MEMORY_CALLS = 5;
/** A tool that loads lodash, so its runner's next context has it evaluated ahead. */
const LODASH_CODE = 'return sdk.lodash.chunk([1, 2, 3, 4], 2).length;';
/** Time for the harness to prepare its next context (lodash included) after a result, in ms. */
const PREPARE_MS = 300;
/** Idle time after which V8's memory reducer has usually collected (it waits ≥ 8 s of low activity), in ms. */
const IDLE_SETTLE_MS = 15_000;

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
  const BUDGET = poolBudget(defaultConfig());
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
    startConcurrency: BUDGET.startConcurrency,
    reapIntervalMs: 30_000,
    caps: {
      maxSizePerPool: 64,
      maxTotal: 80,
      maxMemoryMb: BUDGET.maxMemoryMb,
      serverShare: defaultConfig().poolServerShare,
      limitCeilings: BUDGET.limitCeilings,
    },
  });
  await sandbox.start();
  try {
    report(`runner bench: image ${image}, docker driver`);
    const bench = { sandbox, driver, sizes, report };
    const warm = await measureWarm(bench, 0, 'runc');
    const warmPaced = await measureWarm(bench, PACED_GAP_MS, 'runc');
    const cold = await measureCold(bench, 'runc');
    const memory = await measureMemory(bench);
    const throughput = [];
    for (const concurrency of sizes.concurrencyLevels)
      throughput.push(await measureThroughput(bench, concurrency));
    const runsc = (await driver.runtimes()).includes('runsc')
      ? await measureRunsc(bench, warm, cold)
      : { skipped: 'the Docker engine has no runsc runtime registered' };
    if ('skipped' in runsc) report(`gVisor (runsc): not measured: ${runsc.skipped}`);
    return { warm, warmPaced, cold, memory, throughput, runsc };
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

/**
 * Warm memory: runners each serve MEMORY_CALLS calls of a lodash tool and
 * prepare their next context; then their cgroup memory is read, and read again
 * once they sat idle long enough for V8 to collect (all runners wait together).
 */
async function measureMemory(bench: Bench): Promise<MemoryFigures> {
  const { sandbox, driver, sizes, report } = bench;
  const docker = new Dockerode();
  const keys: string[] = [];
  const runners: Dockerode.Container[] = [];
  const warm: number[] = [];
  try {
    for (let index = 0; index < sizes.memorySamples; index += 1) {
      const key = `bench/memory-${index}`;
      keys.push(key);
      const tool = { ...benchTool(key, 'runc'), code: LODASH_CODE };
      for (let call = 0; call < MEMORY_CALLS; call += 1) {
        const outcome = await sandbox.invoke(tool, HOOKS);
        if (!outcome.ok)
          throw new Error(`bench tool failed: ${outcome.error?.code} ${outcome.error?.message}`);
      }
      await sleep(PREPARE_MS);
      const ids = await runnerIdsOf(driver, key);
      if (ids.length !== 1) throw new Error(`expected one runner in ${key}, found ${ids.length}`);
      const runner = docker.getContainer(ids[0]!);
      runners.push(runner);
      warm.push(await dockerStatsMemoryMiB(runner));
    }
    await sleep(IDLE_SETTLE_MS);
    const idle = await Promise.all(runners.map((runner) => dockerStatsMemoryMiB(runner)));
    const figures = {
      samples: sizes.memorySamples,
      warmMiB: percentile(warm, 50),
      idleMiB: percentile(idle, 50),
    };
    report(
      `runc warm memory (lodash loaded, next context prepared; usage less inactive page cache, as docker stats shows it): ${figures.warmMiB.toFixed(1)} MiB (target ≤ 16 MiB); after ${IDLE_SETTLE_MS / 1000} s idle: ${figures.idleMiB.toFixed(1)} MiB`,
    );
    return figures;
  } finally {
    for (const key of keys) sandbox.drain(key);
  }
}

/** Ids of this driver's containers that serve `poolPrefix` (its pool keys carry the shape after `@`). */
async function runnerIdsOf(driver: DockerSandbox, poolPrefix: string): Promise<string[]> {
  const ours = await driver.client.listByLabels({ [PLANE_INSTANCE_LABEL]: driver.planeInstance });
  return ours
    .filter(
      (container) =>
        container.state === 'running' &&
        container.labels['mcphost.pool']?.startsWith(`${poolPrefix}@`),
    )
    .map((container) => container.id);
}

/**
 * A container's memory as `docker stats` computes it from the engine's stats
 * (the cgroup's usage less its inactive page cache: `total_inactive_file`
 * under cgroup v1, `inactive_file` under v2), in MiB.
 */
async function dockerStatsMemoryMiB(container: Dockerode.Container): Promise<number> {
  const stats = (await container.stats({ stream: false })) as {
    memory_stats: { usage?: number; stats?: Record<string, number | undefined> };
  };
  const { usage, stats: detail = {} } = stats.memory_stats;
  if (usage === undefined) throw new Error('the engine reported no memory usage for the runner');
  const inactive = detail.total_inactive_file ?? detail.inactive_file ?? 0;
  return (inactive < usage ? usage - inactive : usage) / 1048576;
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
