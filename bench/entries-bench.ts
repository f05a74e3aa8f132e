/**
 * Prompts, resources and completions over HTTP through a running control
 * plane, each against a warm `tools/call` of the same server measured in the
 * same run (the same client, session and container): what a template render,
 * a static read or a ranked completion costs without a container, what code
 * costs with one, and how the answers grow with what a server holds — a list
 * page of 1,000 prompts against a list of one, and the worst `resources/read`
 * a client can ask for (a 2 KiB URI no template matches, against 100
 * templates sharing their literal head and tail) against a read of a static resource.
 * Runnable alone: `npx tsx bench/entries-bench.ts`.
 */
import { fileURLToPath } from 'node:url';
import { readSetting } from '../control-plane/config.js';
import { ensureRunnerImage } from '../control-plane/image-build/ensure-runner-image.js';
import { startTestControlPlane, type TestControlPlane } from '../test/support/control-plane.js';
import { RawMcpSession } from './raw-mcp-session.js';
import { percentile } from './stats.js';

const SAMPLES = 300;
const WARM_UP = 30;

export interface EntriesBenchFigures {
  /** p50 in ms of each request, and its ratio to the warm tools/call of the same run. */
  rows: { name: string; p50Ms: number; ratioToToolCall: number }[];
  toolCallP50Ms: number;
}

async function p50Of(work: () => Promise<unknown>, samples = SAMPLES): Promise<number> {
  for (let i = 0; i < WARM_UP; i++) await work();
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const start = performance.now();
    await work();
    times.push(performance.now() - start);
  }
  return percentile(times, 50);
}

async function put(plane: TestControlPlane, path: string, body: object): Promise<void> {
  const saved = await plane.admin('PUT', path, body);
  if (saved.status >= 300) throw new Error(`PUT ${path}: ${JSON.stringify(saved.body)}`);
}

async function fixtures(plane: TestControlPlane): Promise<void> {
  for (const subdomain of ['bench', 'many']) {
    await plane.admin('POST', '/api/servers', { subdomain });
  }
  await put(plane, '/api/servers/bench/tools/trivial', { description: 'b', code: 'return 1;' });
  await put(plane, '/api/servers/bench/prompts/template', {
    description: 'a template',
    arguments: [
      {
        name: 'city',
        required: true,
        complete: { values: Array.from({ length: 1000 }, (_, i) => `city-${i}`) },
      },
    ],
    messages: [{ role: 'user', content: { type: 'text', text: 'Tell me about {{city}}.' } }],
  });
  await put(plane, '/api/servers/bench/prompts/code', {
    description: 'from code',
    arguments: [{ name: 'city', required: true }],
    code: "return 'Tell me about ' + params.city + '.';",
  });
  await put(plane, '/api/servers/bench/resources/static', {
    uri: 'docs://static',
    mimeType: 'text/plain',
    text: 'x'.repeat(1024),
  });
  await put(plane, '/api/servers/bench/resources/template', {
    uriTemplate: 'data://{id}',
    code: "return 'data ' + params.id;",
  });
  // The worst a client can make a read cost: templates sharing their head and
  // their tail, so each is scanned before it fails.
  for (let i = 0; i < 99; i++) {
    await put(plane, `/api/servers/bench/resources/same-ends-${i}`, {
      uriTemplate: `same://{a}/n${i}/{b}.json`,
      code: 'return 1;',
    });
  }
  for (let i = 0; i < 1000; i++) {
    await put(plane, `/api/servers/many/prompts/p${String(i).padStart(4, '0')}`, {
      description: `prompt ${i}`,
      messages: [{ role: 'user', content: { type: 'text', text: `prompt ${i}` } }],
    });
  }
}

export async function runEntriesBench(
  report: (line: string) => void,
): Promise<EntriesBenchFigures> {
  const image =
    process.env.MCPHOST_BENCH_RUNNER_IMAGE ??
    process.env.MCPHOST_TEST_RUNNER_IMAGE ??
    (await ensureRunnerImage({ base: readSetting('runnerBase') }));
  const plane = await startTestControlPlane({
    RUNNER_IMAGE: image,
    GENERIC_POOL_SIZE: '1',
    POOL_MIN_WARM: '1',
    RATE_LIMIT_PER_MINUTE: '0',
  });
  try {
    await fixtures(plane);
    const url = `http://127.0.0.1:${plane.port}/mcp`;
    const bench = new RawMcpSession(url, `bench.localhost:${plane.port}`);
    const many = new RawMcpSession(url, `many.localhost:${plane.port}`);
    await bench.open();
    await many.open();
    const missUri = `same://${'a'.repeat(2030)}/b.json`;
    const toolCall = () => bench.call('trivial');
    const measured: [string, () => Promise<unknown>][] = [
      [
        'prompts/get, template',
        () => bench.request('prompts/get', { name: 'template', arguments: { city: 'Lisbon' } }),
      ],
      [
        'prompts/get, code (container)',
        () => bench.request('prompts/get', { name: 'code', arguments: { city: 'Lisbon' } }),
      ],
      [
        'resources/read, static 1 KiB',
        () => bench.request('resources/read', { uri: 'docs://static' }),
      ],
      [
        'resources/read, template code (container)',
        () => bench.request('resources/read', { uri: 'data://42' }),
      ],
      [
        'completion/complete, 1,000 values ranked',
        () =>
          bench.request('completion/complete', {
            ref: { type: 'ref/prompt', name: 'template' },
            argument: { name: 'city', value: 'city-9' },
          }),
      ],
      ['prompts/list, server of 2 prompts', () => bench.request('prompts/list', {})],
      ['prompts/list, first page of 1,000 prompts', () => many.request('prompts/list', {})],
      [
        'resources/read miss: 2 KiB URI, 100 templates with the same ends',
        () =>
          bench.request('resources/read', { uri: missUri }).then(
            () => Promise.reject(new Error('the miss matched')),
            (error: Error) =>
              // Not found is -32602 with its message (MCP 2025-11-25 on: invalid params).
              error.message.includes('Resource not found') ? undefined : Promise.reject(error),
          ),
      ],
    ];
    // Everything warm (JIT, caches, the container) before anything is measured:
    // the baseline is not to pay for warming what the rows after it reuse.
    for (const work of [toolCall, ...measured.map(([, work]) => work)]) {
      for (let i = 0; i < WARM_UP * 3; i++) await work();
    }
    const toolCallP50Ms = await p50Of(toolCall);
    const rows: EntriesBenchFigures['rows'] = [];
    report(`tools/call warm p50 ${toolCallP50Ms.toFixed(3)} ms (the baseline of this run)`);
    for (const [name, work] of measured) {
      const p50Ms = await p50Of(work);
      const ratioToToolCall = p50Ms / toolCallP50Ms;
      rows.push({ name, p50Ms, ratioToToolCall });
      report(`${name}: p50 ${p50Ms.toFixed(3)} ms = ${ratioToToolCall.toFixed(2)}× tools/call`);
    }
    return { rows, toolCallP50Ms };
  } finally {
    await plane.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await runEntriesBench((line) => console.log(`  ${line}`));
  process.exit(0);
}
