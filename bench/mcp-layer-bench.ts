/**
 * The MCP layer alone: `tools/call` through the real endpoint, session
 * registry, our Streamable HTTP transport and the SDK's `Server`, with a tool
 * catalog in memory and an invoker that answers at once — no container, no
 * store, no hosted-side checks. Against a trivial HTTP server on the same
 * client in the same run, rounds interleaved so both see the same machine.
 * What the ratio shows is what the MCP protocol costs in the control plane
 * (issue 12 measured the one-path transport with it: see the README).
 * Runnable alone: `npx tsx bench/mcp-layer-bench.ts`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { EntryRunner } from '../control-plane/invocation/entry-runner.js';
import { createHostedMcpServer } from '../control-plane/mcp/hosted-mcp-server.js';
import { McpEndpoint } from '../control-plane/mcp/mcp-endpoint.js';
import { SessionRegistry } from '../control-plane/mcp/session-registry.js';
import { ResumeBudget } from '../control-plane/mcp/resume-budget.js';
import { resumeBoundsFrom } from '../control-plane/app/component-settings.js';
import { defaultConfig } from '../control-plane/config.js';
import type {
  InvocableTool,
  InvokeResult,
  ToolInvoker,
} from '../control-plane/invocation/index.js';
import { startTrivialServer } from './mcp-bench.js';
import { benchAgent, RawMcpSession } from './raw-mcp-session.js';
import { percentile } from './stats.js';

const ROUNDS = 24;
const CALLS_PER_ROUND = 250;
const WARM_UP_ROUNDS = 2;

export interface McpLayerFigures {
  layerP50Ms: number;
  layerP99Ms: number;
  httpP50Ms: number;
  ratioP50: number;
}

const tool = {
  subdomain: 'bench',
  name: 'answer',
  description: 'answers at once',
  parameters: [],
  code: 'return 1;',
  version: 1,
  secrets: [],
} as unknown as InvocableTool;

/** An invoker that answers at once, as a warm container would with no time taken. */
const invoker = {
  invoke: async (): Promise<InvokeResult> => ({
    ok: true,
    value: { answer: 1 },
    logs: [],
    durationMs: 0,
    version: 1,
  }),
} as unknown as ToolInvoker;

export async function runMcpLayerBench(report: (line: string) => void): Promise<McpLayerFigures> {
  const sessions = new SessionRegistry({
    idleMs: 600_000,
    maxSessions: 10,
    maxPerServer: 10,
    maxPerCaller: 10,
  });
  // A server of one tool, no prompts or resources.
  const catalog = {
    tools: () => [tool],
    tool: () => tool,
    prompts: () => [],
    prompt: () => undefined,
    resources: () => [],
  };
  const endpoint = new McpEndpoint({
    sessions,
    maxBodyBytes: 1024 * 1024,
    resumeBudget: new ResumeBudget({ ...resumeBoundsFrom(defaultConfig()), share: () => 1 }),
    serverFor: (subdomain) =>
      createHostedMcpServer({
        catalog,
        invoker,
        entries: new EntryRunner({ catalog, invoker, maxRenderedBytes: 1024 * 1024 }),
        version: 'bench',
        subdomain,
        onInternalError: (error) => console.error(error),
      }),
  });
  const server = createServer((req, res) => {
    req.headers['x-request-id'] = 'bench';
    void endpoint.handle(req, res, 'bench', {
      caller: { kind: 'anonymous' },
      quotaKey: 'bench',
      requestId: 'bench',
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const trivial = await startTrivialServer();
  try {
    const session = new RawMcpSession(
      `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
      'bench.localhost',
    );
    await session.open();
    const layer: number[] = [];
    const http: number[] = [];
    for (let round = 0; round < ROUNDS + WARM_UP_ROUNDS; round++) {
      const keep = round >= WARM_UP_ROUNDS;
      for (let i = 0; i < CALLS_PER_ROUND; i++) {
        const start = performance.now();
        await session.call('answer');
        if (keep) layer.push(performance.now() - start);
      }
      for (let i = 0; i < CALLS_PER_ROUND; i++) {
        const start = performance.now();
        const response = await request(trivial.url, {
          method: 'POST',
          body: '{}',
          dispatcher: benchAgent,
        });
        await response.body.text();
        if (keep) http.push(performance.now() - start);
      }
    }
    const figures = {
      layerP50Ms: percentile(layer, 50),
      layerP99Ms: percentile(layer, 99),
      httpP50Ms: percentile(http, 50),
      ratioP50: percentile(layer, 50) / percentile(http, 50),
    };
    report(
      `tools/call through the MCP layer (no container)  p50 ${figures.layerP50Ms.toFixed(3)} ms  p99 ${figures.layerP99Ms.toFixed(3)} ms  | raw HTTP p50 ${figures.httpP50Ms.toFixed(3)} ms  ratio ${figures.ratioP50.toFixed(2)}×`,
    );
    return figures;
  } finally {
    await sessions.closeAll();
    await new Promise((resolve) => server.close(resolve));
    await new Promise((resolve) => trivial.server.close(resolve));
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await runMcpLayerBench((line) => console.log(line));
  process.exit(0);
}
