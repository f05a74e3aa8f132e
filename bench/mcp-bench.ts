/**
 * MCP benchmark: `tools/call` over HTTP through a running control plane,
 * against a floor measured in the same run with the same HTTP client:
 *   floor = raw loopback HTTP round trip to a trivial server
 *         + raw Docker stdio round trip (echo over the same attach).
 * Also the first call of a tool that only the generic pool has warm, and
 * throughput with 32 concurrent MCP clients against the trivial server's
 * throughput under the same 32 concurrent loops.
 *
 * Targets: warm p50 ≤ 2× floor; throughput ≥ 0.5× trivial; p99 ≤ 50 ms; 0 errors.
 * Every loop is bounded. Runnable alone: `npx tsx bench/mcp-bench.ts`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { DockerSandbox } from '../control-plane/sandbox/docker/docker-sandbox.js';
import { buildRawBaselineCommand } from '../control-plane/sandbox/harness-command.js';
import { readSetting } from '../control-plane/config.js';
import { ensureRunnerImage } from '../control-plane/image-build/ensure-runner-image.js';
import { startTestControlPlane, type TestControlPlane } from '../test/support/control-plane.js';
import { lineEcho } from './raw-echo.js';
import { benchAgent as agent, RawMcpSession } from './raw-mcp-session.js';
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
}

const WARM_SAMPLES = 1000;
const WARM_UP = 100;
const FIRST_CALL_SAMPLES = 5;
const CLIENTS = 32;
const CALLS_PER_CLIENT = 60;
/** Enough calls for each of up to 8 containers to pass 1,000 invocations. */
const RECYCLING_CALLS_PER_CLIENT = 250;

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

async function rawStdioRoundTrips(image: string, samples: number): Promise<number[]> {
  const driver = new DockerSandbox({ image, planeName: `bench-floor-${process.pid}` });
  const instance = await driver.start({
    labels: {},
    memoryMb: 128,
    cpus: 0.5,
    pids: 64,
    command: buildRawBaselineCommand(),
  });
  const echo = lineEcho(instance);
  // A tools/call-sized invoke line, so the floor carries the same bytes as the real thing.
  const line = `${JSON.stringify({ type: 'invoke', invocation: '00000000-0000-0000-0000-000000000000', code: 'return 1;', params: {}, env: {}, timeoutMs: 30000, limits: { maxResultBytes: 1048576, maxLogBytes: 262144 } })}\n`;
  try {
    return await timed(() => echo.roundTrip(line), samples, WARM_UP);
  } finally {
    await driver.close();
  }
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

/** 32 clients, each its own session, against 32 loops on the trivial server. */
async function measureThroughput(
  url: string,
  host: string,
  trivialUrl: string,
  callsPerClient = CALLS_PER_CLIENT,
): Promise<McpBenchFigures['throughput']> {
  const sessions = await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      const s = new RawMcpSession(url, host);
      await s.open();
      return s;
    }),
  );
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  await Promise.all(
    sessions.map(async (s) => {
      for (let i = 0; i < callsPerClient; i++) {
        const t = performance.now();
        try {
          await s.call('trivial');
          latencies.push(performance.now() - t);
        } catch {
          errors++;
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const trivialStarted = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      for (let i = 0; i < callsPerClient * 4; i++) {
        await (
          await request(trivialUrl, { method: 'POST', dispatcher: agent, body: '{}' })
        ).body.text();
      }
    }),
  );
  const trivialPerSecond =
    (CLIENTS * callsPerClient * 4) / ((performance.now() - trivialStarted) / 1000);
  const calls = CLIENTS * callsPerClient;
  return {
    clients: CLIENTS,
    calls,
    errors,
    perSecond: (calls - errors) / seconds,
    trivialPerSecond,
    ratio: (calls - errors) / seconds / trivialPerSecond,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
  };
}

/**
 * The 32-client throughput on three fresh planes, long enough (8,000 calls)
 * for containers to reach 1,000 invocations: the default recycling, recycling
 * every 1,000 invocations (the old default) and none ("off"). Count-based
 * recycling is a safety net, so the default must sit within 5% of "off".
 */
async function measureRecycling(
  image: string,
  trivialUrl: string,
  report: (line: string) => void,
): Promise<McpBenchFigures['recycling']> {
  const perSecond: Record<string, number> = {};
  for (const [label, every] of [
    ['default', undefined],
    ['off', '1000000000'],
    ['every 1000', '1000'],
  ] as const) {
    const plane = await startTestControlPlane(
      benchPlaneEnv(image, every ? { POOL_MAX_INVOCATIONS_PER_CONTAINER: every } : {}),
    );
    try {
      await plane.admin('POST', '/api/servers', { subdomain: 'bench' });
      await saveTool(plane, 'bench', 'trivial');
      await plane.admin('PUT', '/api/pools/bench', { minWarm: 2, maxSize: 8 });
      const url = `http://127.0.0.1:${plane.port}/mcp`;
      const host = `bench.localhost:${plane.port}`;
      const warmUp = new RawMcpSession(url, host);
      await warmUp.open();
      for (let i = 0; i < WARM_UP; i++) await warmUp.call('trivial');
      perSecond[label] = (
        await measureThroughput(url, host, trivialUrl, RECYCLING_CALLS_PER_CLIENT)
      ).perSecond;
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

/** Runs the MCP benchmark, reporting one line per figure. */
export async function runMcpBench(report: (line: string) => void): Promise<McpBenchFigures> {
  const image =
    process.env.MCPHOST_BENCH_RUNNER_IMAGE ??
    process.env.MCPHOST_TEST_RUNNER_IMAGE ??
    (await ensureRunnerImage({ base: readSetting('runnerBase') }));
  const plane = await startTestControlPlane(benchPlaneEnv(image));
  const trivial = await startTrivialServer();
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
    const recycling = await measureRecycling(image, trivial.url, report);
    return { warm: warmFigures, firstCall, newServerCall, throughput, recycling };
  } finally {
    await new Promise<void>((resolve) => trivial.server.close(() => resolve()));
    await plane.close();
  }
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
