/**
 * The load generator of the MCP bench, in a process of its own so that the
 * control plane does not share its event loop with the clients and the CPU
 * the clients spend is told apart from the service's.
 *
 * Run as `node --import tsx bench/load-client.ts <mcp|http> <clients> <url> [host tool]`.
 * It opens its clients (an MCP session each, or nothing for plain HTTP),
 * prints `{"ready":true}`, then for each `go <callsPerClient>` line on stdin
 * runs one round (every client makes its calls one after another) and prints
 * the round as one JSON line; it exits when stdin ends. `startLoadClient` is
 * the parent's side.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { benchAgent, RawMcpSession } from './raw-mcp-session.js';
import { percentile } from './stats.js';

/** What the client does: MCP tools/call in a session each, or POST '{}' to a plain server. */
export type LoadTarget =
  { kind: 'mcp'; url: string; host: string; tool: string } | { kind: 'http'; url: string };

/** One round, as the load generator measured it. */
export interface LoadRound {
  calls: number;
  errors: number;
  /** The first error's message, if any. */
  firstError?: string;
  p50Ms: number;
  p99Ms: number;
  /** From the first call's start to the last call's end. */
  wallMs: number;
  /**
   * The load generator's own CPU time (user + system, all its threads) over
   * the round, from process.cpuUsage: the kernel's runtime in µs, where
   * /proc/<pid>/stat gives the same figure cut to 10 ms ticks, and read at
   * the round's very edges rather than whenever the parent gets to it.
   */
  cpuMs: number;
}

/** The parent's handle on a running load generator. */
export interface LoadClient {
  readonly pid: number;
  /** Runs one round of `callsPerClient` calls per client. */
  round(callsPerClient: number): Promise<LoadRound>;
  /** Ends the process (closes its stdin) and waits for it. */
  close(): Promise<void>;
}

/** Starts a load generator with `clients` clients and resolves once they are open. */
export async function startLoadClient(target: LoadTarget, clients: number): Promise<LoadClient> {
  const args =
    target.kind === 'mcp'
      ? ['mcp', String(clients), target.url, target.host, target.tool]
      : ['http', String(clients), target.url];
  // tsx is resolved from here, so the child loads it whatever the working directory.
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    ['--import', import.meta.resolve('tsx'), fileURLToPath(import.meta.url), ...args],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const nextLine = async (): Promise<any> => {
    const next = await lines.next();
    if (next.done) throw new Error(`the load client exited: ${stderr.trim() || 'no output'}`);
    return JSON.parse(next.value);
  };
  try {
    const ready = await nextLine();
    if (ready.ready !== true) throw new Error(`the load client said ${JSON.stringify(ready)}`);
  } catch (error) {
    child.kill();
    throw error;
  }
  return {
    pid: child.pid!,
    async round(callsPerClient) {
      child.stdin.write(`go ${callsPerClient}\n`);
      return (await nextLine()) as LoadRound;
    },
    async close() {
      child.stdin.end();
      await exited;
    },
  };
}

// --- The child's side --------------------------------------------------------

async function openClients(target: LoadTarget, clients: number): Promise<(() => Promise<void>)[]> {
  if (target.kind === 'http') {
    const post = async () => {
      const response = await request(target.url, {
        method: 'POST',
        dispatcher: benchAgent,
        body: '{}',
      });
      await response.body.text();
      if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}`);
    };
    return Array.from({ length: clients }, () => post);
  }
  return Promise.all(
    Array.from({ length: clients }, async () => {
      const session = new RawMcpSession(target.url, target.host);
      await session.open();
      return () => session.call(target.tool);
    }),
  );
}

async function runRound(
  clients: readonly (() => Promise<void>)[],
  callsPerClient: number,
): Promise<LoadRound> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const cpuStart = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    clients.map(async (call) => {
      for (let i = 0; i < callsPerClient; i++) {
        const t = performance.now();
        try {
          await call();
          latencies.push(performance.now() - t);
        } catch (error) {
          errors++;
          firstError ??= error instanceof Error ? error.message : String(error);
        }
      }
    }),
  );
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuStart);
  return {
    calls: clients.length * callsPerClient,
    errors,
    ...(firstError === undefined ? {} : { firstError }),
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
  };
}

function parseTarget(argv: readonly string[]): { target: LoadTarget; clients: number } {
  const [kind, clients, url, host, tool] = argv;
  const count = Number(clients);
  if (!Number.isInteger(count) || count < 1 || !url) {
    throw new TypeError('usage: load-client.ts <mcp|http> <clients> <url> [host tool]');
  }
  if (kind === 'http') return { target: { kind, url }, clients: count };
  if (kind === 'mcp' && host && tool) return { target: { kind, url, host, tool }, clients: count };
  throw new TypeError('usage: load-client.ts <mcp|http> <clients> <url> [host tool]');
}

async function main(): Promise<void> {
  const { target, clients } = parseTarget(process.argv.slice(2));
  const calls = await openClients(target, clients);
  process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
  for await (const line of createInterface({ input: process.stdin })) {
    const match = /^go (\d+)$/.exec(line.trim());
    if (!match) throw new TypeError(`the load client takes "go <calls per client>", not "${line}"`);
    const round = await runRound(calls, Number(match[1]));
    process.stdout.write(`${JSON.stringify(round)}\n`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().then(
    // The agent's idle keep-alive sockets would hold the process for 30 s.
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
