/**
 * Many-tools benchmark: how cost grows with the number of hosted tools, on a
 * real control plane with real containers and default settings (except
 * POOL_IDLE_TTL_MS=10000, so the idle phase sees the TTL at work).
 *
 * - agent pattern: 1,000 tools on 100 servers (10 each); servers visited one
 *   after another, each by a fresh MCP session calling its 10 tools back to
 *   back. Targets: p50 ≤ 10 ms, p99 ≤ one cold container start measured in
 *   the same run (raw create + start + first echo), ≤ 1.1 starts per server.
 * - uniform random: 2,000 sequential calls over the 1,000 tools; p50/p90/p99,
 *   starts per call, peak containers, summed container memory (cgroup usage
 *   less page cache, as `docker stats` shows). Target: p99 ≤ 2× a cold start,
 *   no errors.
 * - idle: then 2 minutes without a call: container starts (target 0).
 *
 * Every loop is bounded. Runnable alone: `npx tsx bench/many-tools-bench.ts`
 * (MANY_TOOLS_SERVERS / MANY_TOOLS_IDLE_MS shrink it for a smoke run).
 */
import Dockerode from 'dockerode';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { DockerSandbox } from '../control-plane/sandbox/docker/docker-sandbox.js';
import { buildRawBaselineCommand } from '../control-plane/sandbox/harness-command.js';
import { ensureRunnerImage } from '../control-plane/image-build/ensure-runner-image.js';
import { invocationLimitsFrom } from '../control-plane/app/component-settings.js';
import { defaultConfig, readSetting } from '../control-plane/config.js';
import {
  startTestControlPlane,
  TEST_ADMIN_TOKEN,
  type TestControlPlane,
} from '../test/support/control-plane.js';
import { lineEcho } from './raw-echo.js';
import { RawMcpSession } from './raw-mcp-session.js';
import { percentile } from './stats.js';
import { waitFor } from './wait-for.js';

const SERVERS = Number(process.env.MANY_TOOLS_SERVERS ?? 100);
const TOOLS_PER_SERVER = 10;
const RANDOM_CALLS = Number(process.env.MANY_TOOLS_RANDOM_CALLS ?? 2000);
const IDLE_MS = Number(process.env.MANY_TOOLS_IDLE_MS ?? 120_000);
const COLD_SAMPLES = 5;

export interface ManyToolsFigures {
  tools: number;
  coldStartP50Ms: number;
  agent: PhaseFigures & { startsPerServer: number };
  random: PhaseFigures & { startsPerCall: number; memoryMiB: number };
  idle: { seconds: number; starts: number };
}

interface PhaseFigures {
  calls: number;
  errors: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  starts: number;
  peakContainers: number;
}

/** Runs the scenario, reporting one line per phase. */
export async function runManyToolsBench(report: (line: string) => void): Promise<ManyToolsFigures> {
  const image =
    process.env.MCPHOST_BENCH_RUNNER_IMAGE ??
    process.env.MCPHOST_TEST_RUNNER_IMAGE ??
    (await ensureRunnerImage({ base: readSetting('runnerBase') }));
  const coldStartP50Ms = await rawColdStart(image);
  report(
    `one cold container start (raw create + start + first echo) p50 ${coldStartP50Ms.toFixed(0)} ms`,
  );
  const plane = await startTestControlPlane({
    RUNNER_IMAGE: image,
    // The service's own defaults, not the test harness's smaller ones.
    GENERIC_POOL_SIZE: '4',
    POOL_MIN_WARM: '1',
    POOL_IDLE_TTL_MS: '10000',
    // For comparing start concurrencies; unset = the service's default.
    ...(process.env.MANY_TOOLS_START_CONCURRENCY
      ? { POOL_START_CONCURRENCY: process.env.MANY_TOOLS_START_CONCURRENCY }
      : {}),
  });
  const peak = new PeakWatcher(plane);
  try {
    const servers = Array.from({ length: SERVERS }, (_, index) => `agent-${index}`);
    const tools = Array.from({ length: TOOLS_PER_SERVER }, (_, index) => `tool_${index}`);
    for (const server of servers) await createServer(plane, server, tools);
    report(
      `${servers.length * tools.length} tools on ${servers.length} servers; budget ${(await budget(plane)).maxTotal} containers`,
    );
    // Let the generic pool fill before the first visit, as on a machine that has been up a while.
    await waitFor(async () => (await budget(plane)).starts.running === 0, 30_000);

    const url = `http://127.0.0.1:${plane.port}/mcp`;
    const sessions = new Map<string, RawMcpSession>();
    peak.start();
    const agentStarts = await containerStarts(plane);
    const agent = await timedCalls(async (record) => {
      for (const server of servers) {
        const session = new RawMcpSession(url, `${server}.localhost:${plane.port}`);
        await session.open();
        sessions.set(server, session);
        for (const tool of tools) await record(() => session.call(tool));
      }
    });
    const agentFigures = {
      ...agent,
      starts: (await containerStarts(plane)) - agentStarts,
      peakContainers: peak.takePeak(),
      startsPerServer: 0,
    };
    agentFigures.startsPerServer = agentFigures.starts / servers.length;
    report(
      `agent pattern (${servers.length} servers × ${tools.length} calls in a burst): p50 ${agent.p50Ms.toFixed(2)} ms (target ≤ 10), p90 ${agent.p90Ms.toFixed(2)}, p99 ${agent.p99Ms.toFixed(1)} ms (target ≤ ${coldStartP50Ms.toFixed(0)}, one cold start), ` +
        `${agentFigures.startsPerServer.toFixed(2)} starts per server (target ≤ 1.1), peak ${agentFigures.peakContainers} containers, errors ${agent.errors}`,
    );

    const randomStarts = await containerStarts(plane);
    let seed = 42;
    const nextRandom = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const random = await timedCalls(async (record) => {
      for (let index = 0; index < RANDOM_CALLS; index += 1) {
        const server = servers[Math.floor(nextRandom() * servers.length)]!;
        const tool = tools[Math.floor(nextRandom() * tools.length)]!;
        await record(() => sessions.get(server)!.call(tool));
      }
    });
    const randomStartsCount = (await containerStarts(plane)) - randomStarts;
    const memoryMiB = await containersMemoryMiB(plane.config.planeName!);
    const randomFigures = {
      ...random,
      starts: randomStartsCount,
      peakContainers: peak.takePeak(),
      startsPerCall: randomStartsCount / RANDOM_CALLS,
      memoryMiB,
    };
    report(
      `uniform random (${RANDOM_CALLS} calls over ${servers.length * tools.length} tools): p50 ${random.p50Ms.toFixed(2)} ms, p90 ${random.p90Ms.toFixed(2)}, p99 ${random.p99Ms.toFixed(1)} ms (target ≤ ${(2 * coldStartP50Ms).toFixed(0)}), ` +
        `${randomFigures.startsPerCall.toFixed(3)} starts per call, peak ${randomFigures.peakContainers} containers using ${memoryMiB.toFixed(0)} MiB, errors ${random.errors}`,
    );
    peak.stop();

    const idleStarts = await containerStarts(plane);
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const idle = { seconds: IDLE_MS / 1000, starts: (await containerStarts(plane)) - idleStarts };
    report(
      `idle ${idle.seconds} s (POOL_IDLE_TTL_MS=10000): ${idle.starts} container starts (target 0)`,
    );
    return {
      tools: servers.length * tools.length,
      coldStartP50Ms,
      agent: agentFigures,
      random: randomFigures,
      idle,
    };
  } finally {
    peak.stop();
    await plane.close();
  }
}

async function createServer(
  plane: TestControlPlane,
  server: string,
  tools: string[],
): Promise<void> {
  const created = await plane.admin('POST', '/api/servers', { subdomain: server });
  if (created.status !== 201)
    throw new Error(`creating ${server}: ${JSON.stringify(created.body)}`);
  for (const tool of tools) {
    const saved = await plane.admin('PUT', `/api/servers/${server}/tools/${tool}`, {
      description: `bench tool ${tool}`,
      code: `return ${JSON.stringify(tool)};`,
    });
    if (saved.status >= 300)
      throw new Error(`saving ${server}/${tool}: ${JSON.stringify(saved.body)}`);
  }
}

/** Runs `body`, which times each call through `record`; a failed call counts as an error. */
async function timedCalls(
  body: (record: (call: () => Promise<void>) => Promise<void>) => Promise<void>,
): Promise<Omit<PhaseFigures, 'starts' | 'peakContainers'>> {
  const times: number[] = [];
  let errors = 0;
  await body(async (call) => {
    const started = performance.now();
    try {
      await call();
      times.push(performance.now() - started);
    } catch {
      errors += 1;
    }
  });
  return {
    calls: times.length + errors,
    errors,
    p50Ms: percentile(times, 50),
    p90Ms: percentile(times, 90),
    p99Ms: percentile(times, 99),
  };
}

interface BudgetAnswer {
  maxTotal: number;
  used: number;
  starts: { running: number; queued: number };
}

async function budget(plane: TestControlPlane): Promise<BudgetAnswer> {
  return (await plane.admin('GET', '/api/pools')).body.budget as BudgetAnswer;
}

/** Container starts so far, from the Prometheus counter (pools may come and go; the counter stays). */
async function containerStarts(plane: TestControlPlane): Promise<number> {
  const response = await fetch(`${plane.adminUrl}/metrics`, {
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
  });
  const text = await response.text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('mcphost_container_starts_total{')) total += Number(line.split(' ').at(-1));
  }
  return total;
}

/** Polls the budget in the background and keeps the highest count of containers seen. */
class PeakWatcher {
  readonly #plane: TestControlPlane;
  #timer: NodeJS.Timeout | undefined;
  #peak = 0;

  constructor(plane: TestControlPlane) {
    this.#plane = plane;
  }

  start(): void {
    this.#timer = setInterval(() => {
      budget(this.#plane).then(
        (answer) => (this.#peak = Math.max(this.#peak, answer.used)),
        () => undefined,
      );
    }, 100);
  }

  /** The peak since the last call. */
  takePeak(): number {
    const peak = this.#peak;
    this.#peak = 0;
    return peak;
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}

/** Memory the plane's containers use now: cgroup usage less page cache, summed, in MiB. */
async function containersMemoryMiB(planeName: string): Promise<number> {
  const docker = new Dockerode();
  const listed = await docker.listContainers({
    filters: { label: [`mcphost.plane=${planeName}`] },
  });
  // One-shot stats answer at once (no second sample for CPU figures, which are not needed).
  const usages = await Promise.all(
    listed.map(async (entry) => {
      const stats = (await docker
        .getContainer(entry.Id)
        .stats({ stream: false, 'one-shot': true } as { stream: false })) as {
        memory_stats?: { usage?: number; stats?: { cache?: number; inactive_file?: number } };
      };
      const memory = stats.memory_stats;
      return (memory?.usage ?? 0) - (memory?.stats?.inactive_file ?? memory?.stats?.cache ?? 0);
    }),
  );
  return usages.reduce((sum, bytes) => sum + bytes, 0) / 1024 / 1024;
}

/** Raw create + start + first echo over the attach, the cost of one cold container. */
async function rawColdStart(image: string): Promise<number> {
  const driver = new DockerSandbox({ image, planeName: `bench-cold-${process.pid}` });
  const times: number[] = [];
  const limits = invocationLimitsFrom(defaultConfig());
  try {
    for (let index = 0; index < COLD_SAMPLES; index += 1) {
      const started = performance.now();
      const instance = await driver.start({
        labels: {},
        memoryMb: limits.memoryMb,
        cpus: limits.cpus,
        pids: limits.pids,
        command: buildRawBaselineCommand(),
      });
      await lineEcho(instance).roundTrip('{"type":"ping"}\n');
      times.push(performance.now() - started);
      await instance.kill();
    }
  } finally {
    await driver.close();
  }
  return percentile(times, 50);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  runManyToolsBench((line) => console.log(line)).then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
