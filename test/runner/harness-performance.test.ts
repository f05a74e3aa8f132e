/**
 * Warm round trip of a trivial tool through the harness against a raw echo
 * child process that answers each invoke with a result line at once, driven by
 * the same client, pipes and pacing. Figures are printed for the report; the
 * bound is loose because other suites share the machine.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { buildHarness } from '../../scripts/build-harness.js';
import { HarnessClient, valueOf } from './harness-client.js';

const ROUNDS = 400;
const WARMUP = 100;

let harnessPath: string;

beforeAll(async () => {
  ({ harnessPath } = await buildHarness());
});

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** Answers every invoke with `params.n`, like a harness with no work to do. */
const ECHO_SOURCE = `
process.stdout.write(JSON.stringify({ type: 'ready', protocol: 1, node: process.version }) + '\\n');
let buffered = '';
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  let newline;
  while ((newline = buffered.indexOf('\\n')) !== -1) {
    const message = JSON.parse(buffered.slice(0, newline));
    buffered = buffered.slice(newline + 1);
    process.stdout.write(JSON.stringify({ type: 'result', invocation: message.invocation, ok: true, value: message.params.n }) + '\\n');
  }
});
process.stdin.on('end', () => process.exit(0));
`;

async function roundTrips(harness: HarnessClient): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < ROUNDS + WARMUP; i++) {
    const started = performance.now();
    const outcome = await harness.invoke('return params.n', { params: { n: i } });
    if (i >= WARMUP) times.push(performance.now() - started);
    expect(valueOf(outcome)).toBe(i);
    // Let the next context be prepared while "idle", as between real invocations.
    await new Promise((resolve) => setTimeout(resolve, 8));
  }
  return times;
}

it('keeps a warm invoke close to a raw echo round trip', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'mcphost-echo-'));
  const echoPath = path.join(dir, 'echo.mjs');
  await writeFile(echoPath, ECHO_SOURCE);
  const echoChild = await HarnessClient.start(echoPath);
  const harness = await HarnessClient.start(harnessPath, ['--experimental-vm-modules']);
  try {
    const echo = median(await roundTrips(echoChild));
    const warm = median(await roundTrips(harness));
    const overhead = warm - echo;
    console.log(
      `[runner perf] median round trip: echo ${echo.toFixed(3)} ms, harness ${warm.toFixed(3)} ms, overhead ${overhead.toFixed(3)} ms (${ROUNDS} rounds)`,
    );
    expect(overhead).toBeLessThan(0.75);
  } finally {
    await harness.close();
    await echoChild.close();
    await rm(dir, { recursive: true, force: true });
  }
});
