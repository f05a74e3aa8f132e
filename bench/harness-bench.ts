/**
 * Harness benchmark: the warm round trip of a trivial tool through the harness
 * as a plain child process, against a raw echo child that answers each invoke
 * with a result line at once, driven by the same client, pipes and pacing.
 * No container: this isolates what the harness itself costs.
 * Runnable alone: `npx tsx bench/harness-bench.ts`.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildHarness } from '../scripts/build-harness.js';
import { HarnessClient, valueOf } from '../test/runner/harness-client.js';

const ROUNDS = 400;
const WARMUP = 100;

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

/** Alternates the two children round by round, so machine load hits both alike. */
async function interleavedRoundTrips(children: HarnessClient[]): Promise<number[][]> {
  const times: number[][] = children.map(() => []);
  for (let i = 0; i < ROUNDS + WARMUP; i++) {
    for (const [index, child] of children.entries()) {
      const started = performance.now();
      const outcome = await child.invoke('return params.n', { params: { n: i } });
      const elapsed = performance.now() - started;
      if (valueOf(outcome) !== i)
        throw new Error(`round ${i}: unexpected answer ${JSON.stringify(outcome)}`);
      if (i >= WARMUP) times[index]?.push(elapsed);
      // Idle between invocations, as in real traffic: the harness prepares its next context here.
      await new Promise((resolve) => setTimeout(resolve, 8));
    }
  }
  return times;
}

/** Runs the harness benchmark, reporting one line. */
export async function runHarnessBench(
  report: (line: string) => void,
): Promise<{ echoMs: number; harnessMs: number }> {
  const { harnessPath } = await buildHarness();
  const dir = await mkdtemp(path.join(tmpdir(), 'mcphost-echo-'));
  const echoPath = path.join(dir, 'echo.mjs');
  await writeFile(echoPath, ECHO_SOURCE);
  const echoChild = await HarnessClient.start(echoPath);
  const harness = await HarnessClient.start(harnessPath, ['--experimental-vm-modules']);
  try {
    const [echoTimes = [], harnessTimes = []] = await interleavedRoundTrips([echoChild, harness]);
    const echo = median(echoTimes);
    const warm = median(harnessTimes);
    const overhead = warm - echo;
    report(
      `harness alone (child process, 8 ms apart): median echo ${echo.toFixed(3)} ms, harness ${warm.toFixed(3)} ms, overhead ${overhead.toFixed(3)} ms (${ROUNDS} rounds)`,
    );
    return { echoMs: echo, harnessMs: warm };
  } finally {
    await harness.close();
    await echoChild.close();
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  runHarnessBench((line) => console.log(line)).then(() => process.exit(0));
}
