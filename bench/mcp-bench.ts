/**
 * MCP benchmark: `tools/call` over HTTP through a running control plane,
 * against a floor measured in the same run with the same HTTP client:
 *   floor = raw loopback HTTP round trip to a trivial server
 *         + raw Docker stdio round trip (echo over the same attach).
 * Also the first call of a tool that only the generic pool has warm, and
 * throughput with 32 concurrent MCP clients against the trivial server's
 * throughput under the same 32 concurrent loops.
 *
 * The 32 clients run in a process of their own (bench/load-client.ts), for the
 * MCP server and the trivial one alike, so the control plane shares its event
 * loop with nobody and the service's CPU per call is told apart from the
 * clients': the machine's busy time over a window of warm calls, less the
 * load generator's, split into the runner containers, the control plane,
 * dockerd, containerd, the shims and the rest (bench/cpu-accounting.ts).
 *
 * Targets: warm p50 ≤ 2× floor; throughput ≥ 0.5× trivial; p99 ≤ 50 ms; 0 errors;
 * service CPU ≤ 0.4 ms per warm call.
 * Every loop is bounded. Runnable alone: `npx tsx bench/mcp-bench.ts`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import Dockerode from 'dockerode';
import { request } from 'undici';
import { DockerSandbox } from '../control-plane/sandbox/docker/docker-sandbox.js';
import { PLANE_LABEL } from '../control-plane/sandbox/docker/hardened-container-config.js';
import { buildRawBaselineCommand } from '../control-plane/sandbox/harness-command.js';
import { readSetting } from '../control-plane/config.js';
import { ensureRunnerImage } from '../control-plane/image-build/ensure-runner-image.js';
import { startTestControlPlane, type TestControlPlane } from '../test/support/control-plane.js';
import {
  clockTicksPerSecond,
  locateCgroupCpu,
  splitWindow,
  takeCpuSnapshot,
  type AccountedContainer,
  type CpuSplit,
} from './cpu-accounting.js';
import { startLoadClient, type LoadClient, type LoadRound } from './load-client.js';
import { lineEcho } from './raw-echo.js';
import { benchAgent as agent, RawMcpSession, RawModernClient } from './raw-mcp-session.js';
import { percentile } from './stats.js';
import { waitFor } from './wait-for.js';

export interface McpBenchFigures {
  warm: {
    p50Ms: number;
    p99Ms: number;
    floorP50Ms: number;
    httpP50Ms: number;
    stdioP50Ms: number;
    ratioP50: number;
  };
  firstCall: { samples: number; p50Ms: number; ratioToWarm: number };
  /** Warm calls to a server in API-key mode against the same tool in mode "none", alternated. */
  apiKey: { p50Ms: number; noneP50Ms: number; ratio: number };
  /** Warm modern-era (2026-07-28) calls against legacy-session ones of the same tool, alternated. */
  modern: {
    p50Ms: number;
    legacyP50Ms: number;
    ratio: number;
    /** Modern against legacy, round by round. */
    paired: PairedRatio;
    /** A second legacy session against the first, round by round: the noise. */
    sameCallPaired: PairedRatio;
    floorRatio: number;
  };
  newServerCall: { samples: number; p50Ms: number };
  /** 32-client throughput by recycling setting, and the default's ratio to "off". */
  recycling: {
    defaultPerSecond: number;
    offPerSecond: number;
    oldPerSecond: number;
    ratio: number;
  };
  throughput: {
    clients: number;
    calls: number;
    errors: number;
    perSecond: number;
    trivialPerSecond: number;
    ratio: number;
    p50Ms: number;
    p99Ms: number;
  };
  /** The local data path (RUNNER_SOCKET_DIR) against the attach stream, in ms. */
  socketPath: {
    attachEchoP50Ms: number;
    socketEchoP50Ms: number;
    attachWarmP50Ms: number;
    socketWarmP50Ms: number;
  };
  /** cpuPerCall with runners on the socket data path. */
  cpuPerCallSocket: McpBenchFigures['cpuPerCall'];
  /** Service CPU per warm call over a window of 32 clients, recycling off; every figure in ms per call. */
  cpuPerCall: Omit<CpuSplit, 'containersMs' | 'containersChanged'> & {
    calls: number;
    errors: number;
    perSecond: number;
    /** The plane's containers, listed at the window's start. */
    containers: number;
    /** Containers that started or stopped in the window (none expected). */
    containersChanged: number;
    /** The runner containers' cgroups: the harness and its init, exited processes included. */
    harnessMs: number;
  };
}

/** Alternating rounds of the attach/socket comparison, and calls per round. */
const SOCKET_ROUNDS = 6;
const SOCKET_ROUND_CALLS = 200;
const WARM_SAMPLES = 1000;
const WARM_UP = 100;
const FIRST_CALL_SAMPLES = 5;
/** Rounds and calls per round of the A/B comparisons (API key vs none, modern vs legacy). */
const AB_ROUNDS = 12;
const AB_ROUND_CALLS = 200;
const CLIENTS = 32;
const CALLS_PER_CLIENT = 60;
/** Enough calls for each of up to 8 containers to pass 1,000 invocations. */
const RECYCLING_CALLS_PER_CLIENT = 250;
/** POOL_MAX_INVOCATIONS_PER_CONTAINER that no bench run reaches: recycling off. */
const RECYCLING_OFF = '1000000000';
/** The CPU window: 4,800 calls, several seconds at the rates of a 2-core machine. */
const CPU_CALLS_PER_CLIENT = 150;
/** A round before the window, so the clients' and the plane's code paths are hot. */
const CPU_WARM_UP_CALLS_PER_CLIENT = 30;
/** The bench server's pool in the CPU window: full before it, so no container starts in it. */
const CPU_POOL_SIZE = 8;

async function timed(
  work: () => Promise<void>,
  samples: number,
  warmUp: number,
): Promise<number[]> {
  for (let i = 0; i < warmUp; i++) await work();
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const start = performance.now();
    await work();
    times.push(performance.now() - start);
  }
  return times;
}

/**
 * Kinds of call compared in alternated rounds, the order reversed every
 * round (A B, B A, … or A B C, C B A, …): a drift of the machine, or the
 * warmth one kind leaves for the next, falls on all alike. Each round starts
 * with a few unmeasured calls of its kind. The times of each kind, by round.
 */
async function alternatedRounds(
  kinds: (() => Promise<void>)[],
  rounds: number,
  callsPerRound: number,
): Promise<number[][][]> {
  const times: number[][][] = kinds.map(() => []);
  for (let round = 0; round < rounds; round++) {
    const order = kinds.map((_, index) => index);
    if (round % 2 === 1) order.reverse();
    for (const index of order) {
      times[index]!.push(await timed(kinds[index]!, callsPerRound, 20));
    }
  }
  return times;
}

/** Two kinds alternated as above; every call's time of each, the rounds pooled. */
async function alternated(
  a: () => Promise<void>,
  b: () => Promise<void>,
  rounds: number,
  callsPerRound: number,
): Promise<[number[], number[]]> {
  const [first, second] = await alternatedRounds([a, b], rounds, callsPerRound);
  return [first!.flat(), second!.flat()];
}

/**
 * The ratio of `a` to `b` in each round (p50 over p50), as the median over
 * the rounds and its range: rounds pair the two kinds on the same moment of
 * the machine, so a drift between rounds does not enter a ratio.
 */
function pairedRatio(a: number[][], b: number[][]): PairedRatio {
  const ratios = a.map((round, index) => percentile(round, 50) / percentile(b[index]!, 50));
  const sorted = [...ratios].sort((x, y) => x - y);
  return {
    median: percentile(ratios, 50),
    low: sorted[0]!,
    high: sorted[sorted.length - 1]!,
    fasterRounds: ratios.filter((ratio) => ratio < 1).length,
    rounds: ratios.length,
  };
}

/** A per-round ratio's median, range, and the rounds in which `a` was the faster. */
export interface PairedRatio {
  median: number;
  low: number;
  high: number;
  fasterRounds: number;
  rounds: number;
}

function describePaired(ratio: PairedRatio): string {
  return `median ${ratio.median.toFixed(3)}× (rounds ${ratio.low.toFixed(2)}–${ratio.high.toFixed(2)}, faster in ${ratio.fasterRounds} of ${ratio.rounds})`;
}

/** A trivial JSON server on loopback: the HTTP part of the floor. */
export async function startTrivialServer(): Promise<{ url: string; server: Server }> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { ok: true } });
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server };
}

async function rawStdioRoundTrips(
  image: string,
  samples: number,
  socketDir?: string,
): Promise<number[]> {
  const driver = new DockerSandbox({ image, planeName: `bench-floor-${process.pid}`, socketDir });
  const instance = await driver.start({
    labels: {},
    memoryMb: 128,
    cpus: 0.5,
    pids: 64,
    command: buildRawBaselineCommand(),
  });
  // Over a socket, the echo takes input once it has connected.
  await waitFor(() => {
    try {
      instance.write('');
      return Promise.resolve(true);
    } catch {
      return Promise.resolve(false);
    }
  }, 30_000);
  const echo = lineEcho(instance);
  // A tools/call-sized invoke line, so the floor carries the same bytes as the real thing.
  const line = `${JSON.stringify({ type: 'invoke', invocation: '00000000-0000-0000-0000-000000000000', code: 'return 1;', params: {}, env: {}, timeoutMs: 30000, limits: { maxResultBytes: 1048576, maxLogBytes: 262144 } })}\n`;
  try {
    return await timed(() => echo.roundTrip(line), samples, WARM_UP);
  } finally {
    await driver.close();
  }
}

/**
 * What API-key mode costs a warm call: a second server in that mode with the
 * same tool, called in rounds alternated with the mode-"none" session, so
 * both see the same machine.
 */
async function measureApiKeyMode(
  plane: TestControlPlane,
  none: RawMcpSession,
  url: string,
): Promise<McpBenchFigures['apiKey']> {
  await plane.admin('POST', '/api/servers', { subdomain: 'bench-key' });
  await saveTool(plane, 'bench-key', 'trivial');
  const created = await plane.admin('POST', '/api/servers/bench-key/api-keys', { label: 'bench' });
  await plane.admin('PATCH', '/api/servers/bench-key/settings', { securityMode: 'apikey' });
  const keyed = new RawMcpSession(url, `bench-key.localhost:${plane.port}`, {
    authorization: `Bearer ${created.body.key as string}`,
  });
  await keyed.open();
  // As many calls as the mode-"none" session had before: its container's JIT is as warm.
  await timed(() => keyed.call('trivial'), WARM_SAMPLES, WARM_UP);
  const [withKey, without] = await alternated(
    () => keyed.call('trivial'),
    () => none.call('trivial'),
    AB_ROUNDS,
    AB_ROUND_CALLS,
  );
  const p50Ms = percentile(withKey, 50);
  const noneP50Ms = percentile(without, 50);
  return { p50Ms, noneP50Ms, ratio: p50Ms / noneP50Ms };
}

/**
 * What the modern era costs a warm call against a legacy session: the same
 * tool, called in rounds alternated between a modern client (no session;
 * `_meta` and standard headers on every request), the session, and a second
 * legacy session. The second session against the first is the same call
 * against itself: how far apart two identical kinds come out on this
 * machine, the noise the modern ratio is read against.
 */
async function measureModernEra(
  legacy: RawMcpSession,
  modern: RawModernClient,
  url: string,
  host: string,
  floorP50Ms: number,
): Promise<McpBenchFigures['modern']> {
  const twin = new RawMcpSession(url, host);
  await twin.open();
  await timed(() => modern.call('trivial'), WARM_SAMPLES, WARM_UP);
  await timed(() => twin.call('trivial'), WARM_SAMPLES, WARM_UP);
  const [modernRounds, legacyRounds, twinRounds] = await alternatedRounds(
    [() => modern.call('trivial'), () => legacy.call('trivial'), () => twin.call('trivial')],
    AB_ROUNDS,
    AB_ROUND_CALLS,
  );
  const p50Ms = percentile(modernRounds!.flat(), 50);
  const legacyP50Ms = percentile(legacyRounds!.flat(), 50);
  return {
    p50Ms,
    legacyP50Ms,
    ratio: p50Ms / legacyP50Ms,
    paired: pairedRatio(modernRounds!, legacyRounds!),
    sameCallPaired: pairedRatio(twinRounds!, legacyRounds!),
    floorRatio: p50Ms / floorP50Ms,
  };
}

async function saveTool(plane: TestControlPlane, server: string, name: string): Promise<void> {
  const saved = await plane.admin('PUT', `/api/servers/${server}/tools/${name}`, {
    description: 'bench',
    code: 'return 1;',
  });
  if (saved.status >= 300) throw new Error(`saving ${name}: ${JSON.stringify(saved.body)}`);
}

/** The control plane of the MCP bench: defaults, but pools big enough for 32 clients. */
function benchPlaneEnv(image: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    RUNNER_IMAGE: image,
    GENERIC_POOL_SIZE: '2',
    POOL_MIN_WARM: '1',
    POOL_MAX_SIZE: '8',
    POOL_QUEUE_TIMEOUT_MS: '60000',
    // One caller makes every call: this measures the service, not the per-caller rate limit.
    RATE_LIMIT_PER_MINUTE: '0',
    ...extra,
  };
}

/** One round of `callsPerClient` calls from each of 32 clients in a load generator of its own. */
async function loadRound(
  target: Parameters<typeof startLoadClient>[0],
  callsPerClient: number,
): Promise<LoadRound> {
  const client = await startLoadClient(target, CLIENTS);
  try {
    return await client.round(callsPerClient);
  } finally {
    await client.close();
  }
}

/** 32 MCP clients, each its own session, against 32 loops on the trivial server. */
async function measureThroughput(
  url: string,
  host: string,
  trivialUrl: string,
): Promise<McpBenchFigures['throughput']> {
  const mcp = await loadRound({ kind: 'mcp', url, host, tool: 'trivial' }, CALLS_PER_CLIENT);
  const trivial = await loadRound({ kind: 'http', url: trivialUrl }, CALLS_PER_CLIENT * 4);
  if (trivial.errors > 0) throw new Error(`the trivial server failed: ${trivial.firstError}`);
  const perSecond = (mcp.calls - mcp.errors) / (mcp.wallMs / 1000);
  const trivialPerSecond = trivial.calls / (trivial.wallMs / 1000);
  return {
    clients: CLIENTS,
    calls: mcp.calls,
    errors: mcp.errors,
    perSecond,
    trivialPerSecond,
    ratio: perSecond / trivialPerSecond,
    p50Ms: mcp.p50Ms,
    p99Ms: mcp.p99Ms,
  };
}

/** A plane's bench server with a trivial tool, its pool sized, warmed by one session. */
async function prepareBenchServer(
  plane: TestControlPlane,
  pool: { minWarm: number; maxSize: number },
): Promise<{ url: string; host: string }> {
  await plane.admin('POST', '/api/servers', { subdomain: 'bench' });
  await saveTool(plane, 'bench', 'trivial');
  await plane.admin('PUT', '/api/pools/bench', pool);
  const url = `http://127.0.0.1:${plane.port}/mcp`;
  const host = `bench.localhost:${plane.port}`;
  const warmUp = new RawMcpSession(url, host);
  await warmUp.open();
  for (let i = 0; i < WARM_UP; i++) await warmUp.call('trivial');
  return { url, host };
}

/**
 * The 32-client throughput on three fresh planes, long enough (8,000 calls)
 * for containers to reach 1,000 invocations: the default recycling, recycling
 * every 1,000 invocations (the old default) and none ("off"). Count-based
 * recycling is a safety net, so the default must sit within 5% of "off".
 */
async function measureRecycling(
  image: string,
  report: (line: string) => void,
): Promise<McpBenchFigures['recycling']> {
  const perSecond: Record<string, number> = {};
  for (const [label, every] of [
    ['default', undefined],
    ['off', RECYCLING_OFF],
    ['every 1000', '1000'],
  ] as const) {
    const plane = await startTestControlPlane(
      benchPlaneEnv(image, every ? { POOL_MAX_INVOCATIONS_PER_CONTAINER: every } : {}),
    );
    try {
      const { url, host } = await prepareBenchServer(plane, { minWarm: 2, maxSize: 8 });
      const round = await loadRound(
        { kind: 'mcp', url, host, tool: 'trivial' },
        RECYCLING_CALLS_PER_CLIENT,
      );
      perSecond[label] = (round.calls - round.errors) / (round.wallMs / 1000);
    } finally {
      await plane.close();
    }
  }
  const defaultPerSecond = perSecond.default!;
  const figures = {
    defaultPerSecond,
    offPerSecond: perSecond.off!,
    oldPerSecond: perSecond['every 1000']!,
    ratio: defaultPerSecond / perSecond.off!,
  };
  report(
    `recycling: default ${figures.defaultPerSecond.toFixed(0)} calls/s, off ${figures.offPerSecond.toFixed(0)}, every 1000 invocations ${figures.oldPerSecond.toFixed(0)}  default/off ${figures.ratio.toFixed(3)} (target ≥ 0.95)`,
  );
  return figures;
}

/** The containers of a plane now, by label, with where their CPU time is read. */
async function planeContainers(planeName: string): Promise<AccountedContainer[]> {
  const docker = new Dockerode();
  const listed = await docker.listContainers({
    filters: { label: [`${PLANE_LABEL}=${planeName}`], status: ['running'] },
  });
  return Promise.all(
    listed.map(async ({ Id }) => {
      const { State } = await docker.getContainer(Id).inspect();
      return { id: Id, cgroup: locateCgroupCpu(State.Pid) };
    }),
  );
}

/** Whether every pool of the plane is done starting containers and nobody waits. */
async function poolsSettled(plane: TestControlPlane, benchSize: number): Promise<boolean> {
  const pools = (await plane.admin('GET', '/api/pools')).body.pools as {
    server?: string;
    generic: boolean;
    total: number;
    warming: number;
    queued: number;
  }[];
  const bench = pools.find((pool) => pool.server === 'bench' && !pool.generic);
  return (
    bench?.total === benchSize && pools.every((pool) => pool.warming === 0 && pool.queued === 0)
  );
}

/**
 * Service CPU per warm tools/call: 32 clients on a plane alone (recycling
 * off, the bench pool full before the window), the machine's busy time over
 * the window less the load generator's, split by process and container.
 */
export async function measureCpuPerCall(
  image: string,
  report: (line: string) => void,
  dataPath: 'attach' | 'socket' = 'attach',
): Promise<McpBenchFigures['cpuPerCall']> {
  const socketDir = dataPath === 'socket' ? await benchSocketDir() : undefined;
  const plane = await startTestControlPlane(
    benchPlaneEnv(image, {
      POOL_MAX_INVOCATIONS_PER_CONTAINER: RECYCLING_OFF,
      RUNNER_SOCKET_DIR: socketDir ?? 'off',
    }),
  );
  let client: LoadClient | undefined;
  try {
    const { url, host } = await prepareBenchServer(plane, {
      minWarm: CPU_POOL_SIZE,
      maxSize: CPU_POOL_SIZE,
    });
    await waitFor(() => poolsSettled(plane, CPU_POOL_SIZE), 60_000);
    client = await startLoadClient({ kind: 'mcp', url, host, tool: 'trivial' }, CLIENTS);
    await client.round(CPU_WARM_UP_CALLS_PER_CLIENT);
    // startTestControlPlane names every plane: the containers are found by that label.
    const planeName = plane.config.planeName;
    if (!planeName) throw new Error('the bench plane has no PLANE_NAME');
    const containers = await planeContainers(planeName);
    const ticksPerSecond = clockTicksPerSecond();

    const before = takeCpuSnapshot(containers, 'start');
    const round = await client.round(CPU_CALLS_PER_CLIENT);
    const after = takeCpuSnapshot(containers, 'end');

    const split = splitWindow(before, after, {
      selfPid: process.pid,
      loadGeneratorPid: client.pid,
      loadGeneratorMs: round.cpuMs,
      ticksPerSecond,
    });
    // The split sees the listed containers that stopped; one started in the
    // window is not listed, and its CPU lands in "other processes".
    const changed = new Set(split.containersChanged);
    for (const { id } of await planeContainers(planeName)) {
      if (!containers.some((c) => c.id === id)) changed.add(id);
    }
    const ok = round.calls - round.errors;
    if (ok === 0) throw new Error(`every call of the CPU window failed: ${round.firstError}`);
    const perCall = (ms: number) => ms / ok;
    const figures: McpBenchFigures['cpuPerCall'] = {
      calls: round.calls,
      errors: round.errors,
      perSecond: ok / (round.wallMs / 1000),
      containers: containers.length,
      containersChanged: changed.size,
      serviceMs: perCall(split.serviceMs),
      harnessMs: perCall(split.containersMs),
      controlPlaneMs: perCall(split.controlPlaneMs),
      dockerdMs: perCall(split.dockerdMs),
      containerdMs: perCall(split.containerdMs),
      shimMs: perCall(split.shimMs),
      kernelAndOtherMs: perCall(split.kernelAndOtherMs),
      kernelThreadsMs: perCall(split.kernelThreadsMs),
      otherProcessesMs: perCall(split.otherProcessesMs),
      exitedMs: perCall(split.exitedMs),
      unattributedMs: perCall(split.unattributedMs),
      loadGeneratorMs: perCall(split.loadGeneratorMs),
      stealMs: perCall(split.stealMs),
    };
    const f = (ms: number) => ms.toFixed(2);
    report(
      `service CPU per call${dataPath === 'socket' ? ' (socket data path)' : ''} ${f(figures.serviceMs)} ms (target ≤ 0.4): harness ${f(figures.harnessMs)}, control plane ${f(figures.controlPlaneMs)}, dockerd ${f(figures.dockerdMs)}, containerd-shim ${f(figures.shimMs)}, containerd ${f(figures.containerdMs)}, kernel and other ${f(figures.kernelAndOtherMs)} (kernel threads ${f(figures.kernelThreadsMs)}, other processes ${f(figures.otherProcessesMs)}, exited processes ${f(figures.exitedMs)}, unattributed ${f(figures.unattributedMs)}) | load generator ${f(figures.loadGeneratorMs)} ms/call, ${ok} calls at ${figures.perSecond.toFixed(0)} calls/s, ${figures.containers} containers` +
        (figures.stealMs >= 0.005 ? `, steal ${f(figures.stealMs)}` : '') +
        (round.errors > 0 ? `, errors ${round.errors} (${round.firstError})` : '') +
        (changed.size > 0 ? `; ${changed.size} containers started or stopped in the window` : ''),
    );
    return figures;
  } finally {
    await client?.close();
    await plane.close();
  }
}

/** A fresh directory for RUNNER_SOCKET_DIR, short enough for socket paths. */
async function benchSocketDir(): Promise<string> {
  return mkdtemp('/tmp/mcphost-bench-sock-');
}

/**
 * The local data path against the attach stream: a raw echo over each (the
 * same line), and warm `tools/call` p50 on two planes, one per data path,
 * measured in alternating rounds so both see the same machine.
 */
export async function measureSocketPath(
  image: string,
  report: (line: string) => void,
): Promise<McpBenchFigures['socketPath']> {
  const socketDir = await benchSocketDir();
  const attachEcho = percentile(await rawStdioRoundTrips(image, WARM_SAMPLES), 50);
  const socketEcho = percentile(await rawStdioRoundTrips(image, WARM_SAMPLES, socketDir), 50);
  const planes = [
    await startTestControlPlane(benchPlaneEnv(image, { RUNNER_SOCKET_DIR: 'off' })),
    await startTestControlPlane(benchPlaneEnv(image, { RUNNER_SOCKET_DIR: socketDir })),
  ];
  try {
    const sessions: RawMcpSession[] = [];
    for (const plane of planes) {
      await plane.admin('POST', '/api/servers', { subdomain: 'bench' });
      await saveTool(plane, 'bench', 'trivial');
      const session = new RawMcpSession(
        `http://127.0.0.1:${plane.port}/mcp`,
        `bench.localhost:${plane.port}`,
      );
      await session.open();
      for (let i = 0; i < WARM_UP; i++) await session.call('trivial');
      sessions.push(session);
    }
    const times = await alternated(
      () => sessions[0]!.call('trivial'),
      () => sessions[1]!.call('trivial'),
      SOCKET_ROUNDS,
      SOCKET_ROUND_CALLS,
    );
    const figures = {
      attachEchoP50Ms: attachEcho,
      socketEchoP50Ms: socketEcho,
      attachWarmP50Ms: percentile(times[0]!, 50),
      socketWarmP50Ms: percentile(times[1]!, 50),
    };
    report(
      `socket data path (RUNNER_SOCKET_DIR): raw echo p50 ${socketEcho.toFixed(3)} ms vs attach ${attachEcho.toFixed(3)} ms  | warm tools/call p50 ${figures.socketWarmP50Ms.toFixed(3)} ms vs attach ${figures.attachWarmP50Ms.toFixed(3)} ms (${SOCKET_ROUNDS} alternating rounds of ${SOCKET_ROUND_CALLS})`,
    );
    return figures;
  } finally {
    await Promise.all(planes.map((plane) => plane.close()));
    await rm(socketDir, { recursive: true, force: true });
  }
}

/** Runs the MCP benchmark, reporting one line per figure. */
export async function runMcpBench(report: (line: string) => void): Promise<McpBenchFigures> {
  const image =
    process.env.MCPHOST_BENCH_RUNNER_IMAGE ??
    process.env.MCPHOST_TEST_RUNNER_IMAGE ??
    (await ensureRunnerImage({ base: readSetting('runnerBase') }));
  const plane = await startTestControlPlane(benchPlaneEnv(image));
  const trivial = await startTrivialServer();
  let main: Omit<McpBenchFigures, 'recycling' | 'cpuPerCall' | 'cpuPerCallSocket' | 'socketPath'>;
  try {
    await plane.admin('POST', '/api/servers', { subdomain: 'bench' });
    await saveTool(plane, 'bench', 'trivial');
    const url = `http://127.0.0.1:${plane.port}/mcp`;
    const host = `bench.localhost:${plane.port}`;
    const session = new RawMcpSession(url, host);
    await session.open();

    const http = await timed(
      async () =>
        void (await (
          await request(trivial.url, { method: 'POST', dispatcher: agent, body: '{}' })
        ).body.text()),
      WARM_SAMPLES,
      WARM_UP,
    );
    const stdio = await rawStdioRoundTrips(image, WARM_SAMPLES);
    const warm = await timed(() => session.call('trivial'), WARM_SAMPLES, WARM_UP);
    const floorP50 = percentile(http, 50) + percentile(stdio, 50);
    const warmFigures = {
      p50Ms: percentile(warm, 50),
      p99Ms: percentile(warm, 99),
      floorP50Ms: floorP50,
      httpP50Ms: percentile(http, 50),
      stdioP50Ms: percentile(stdio, 50),
      ratioP50: percentile(warm, 50) / floorP50,
    };
    report(
      `warm tools/call  p50 ${warmFigures.p50Ms.toFixed(3)} ms  p99 ${warmFigures.p99Ms.toFixed(3)} ms  | floor p50 ${floorP50.toFixed(3)} ms (HTTP ${warmFigures.httpP50Ms.toFixed(3)} + stdio ${warmFigures.stdioP50Ms.toFixed(3)})  ratio ${warmFigures.ratioP50.toFixed(2)}× (target ≤ 2×)`,
    );

    const modern = await measureModernEra(
      session,
      new RawModernClient(url, host),
      url,
      host,
      floorP50,
    );
    report(
      `warm tools/call, modern era (2026-07-28)  p50 ${modern.p50Ms.toFixed(3)} ms vs legacy session ${modern.legacyP50Ms.toFixed(3)} ms = ${modern.ratio.toFixed(2)}× (alternated rounds; target ≤ 1×) | ${modern.floorRatio.toFixed(2)}× the floor`,
    );
    report(
      `  per round: modern/legacy ${describePaired(modern.paired)}; the same call against itself (a second legacy session) ${describePaired(modern.sameCallPaired)}`,
    );

    const apiKey = await measureApiKeyMode(plane, session, url);
    report(
      `warm tools/call with an API key  p50 ${apiKey.p50Ms.toFixed(3)} ms vs ${apiKey.noneP50Ms.toFixed(3)} ms without = ${apiKey.ratio.toFixed(2)}× (alternated rounds)`,
    );

    // First call of a tool nobody called yet, on a server whose container is warm.
    const firstCalls: number[] = [];
    for (let i = 0; i < FIRST_CALL_SAMPLES; i++) {
      const name = `fresh_${i}`;
      await saveTool(plane, 'bench', name);
      const start = performance.now();
      await session.call(name);
      firstCalls.push(performance.now() - start);
    }
    const firstCall = {
      samples: firstCalls.length,
      p50Ms: percentile(firstCalls, 50),
      ratioToWarm: percentile(firstCalls, 50) / warmFigures.p50Ms,
    };
    report(
      `first call of a new tool (its server's container warm)  p50 ${firstCall.p50Ms.toFixed(2)} ms over ${firstCall.samples} tools = ${firstCall.ratioToWarm.toFixed(2)}× a warm call (target ≤ 1.5×)`,
    );

    // First call on a server nobody called yet: only the generic pool is warm.
    const newServerCalls: number[] = [];
    for (let i = 0; i < FIRST_CALL_SAMPLES; i++) {
      await waitFor(async () => {
        const pools = (await plane.admin('GET', '/api/pools')).body.pools as {
          generic?: boolean;
          warm: number;
        }[];
        return (pools.find((p) => p.generic)?.warm ?? 0) >= 1;
      }, 30_000);
      const server = `fresh-${i}`;
      await plane.admin('POST', '/api/servers', { subdomain: server });
      await saveTool(plane, server, 'trivial');
      const fresh = new RawMcpSession(url, `${server}.localhost:${plane.port}`);
      await fresh.open();
      const start = performance.now();
      await fresh.call('trivial');
      newServerCalls.push(performance.now() - start);
    }
    const newServerCall = { samples: newServerCalls.length, p50Ms: percentile(newServerCalls, 50) };
    report(
      `first call on a new server (generic pool warm)  p50 ${newServerCall.p50Ms.toFixed(2)} ms over ${newServerCall.samples} servers`,
    );

    await plane.admin('PUT', '/api/pools/bench', { minWarm: 2, maxSize: 8 });
    const throughput = await measureThroughput(url, host, trivial.url);
    report(
      `throughput ${CLIENTS} clients  ${throughput.perSecond.toFixed(0)} calls/s vs trivial ${throughput.trivialPerSecond.toFixed(0)} req/s  ratio ${throughput.ratio.toFixed(2)} (target ≥ 0.5)  p50 ${throughput.p50Ms.toFixed(2)} ms  p99 ${throughput.p99Ms.toFixed(2)} ms (target ≤ 50)  errors ${throughput.errors}/${throughput.calls}`,
    );
    main = { warm: warmFigures, firstCall, apiKey, modern, newServerCall, throughput };
  } finally {
    await new Promise<void>((resolve) => trivial.server.close(() => resolve()));
    await plane.close();
  }
  // On planes of their own, this one closed: its idle containers retiring
  // would be Docker work in their windows.
  const recycling = await measureRecycling(image, report);
  const cpuPerCall = await measureCpuPerCall(image, report);
  const socketPath = await measureSocketPath(image, report);
  const cpuPerCallSocket = await measureCpuPerCall(image, report, 'socket');
  return { ...main, recycling, cpuPerCall, socketPath, cpuPerCallSocket };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  runMcpBench((line) => console.log(line)).then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
