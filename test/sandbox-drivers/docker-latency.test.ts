/**
 * The attach stream carries lines intact and in order, one at a time (a lost,
 * batched or reordered line fails), and the figures it takes are printed for
 * the record. Speed is not asserted here: `npm run bench` measures it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerSandbox } from '../../control-plane/sandbox/docker/docker-sandbox.js';
import { buildRawBaselineCommand } from '../../control-plane/sandbox/image/harness-command.js';
import { ensureEchoRunnerImage, smallSpec, uniquePlaneName } from './helpers.js';

const ROUND_TRIPS = 2_000;
let driver: DockerSandbox;

beforeAll(async () => {
  driver = new DockerSandbox({
    image: await ensureEchoRunnerImage(),
    planeName: uniquePlaneName('latency'),
  });
});

afterAll(() => driver.close());

function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

describe('DockerSandbox figures', () => {
  it('creates, attaches and starts a container', async () => {
    const timings: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      const instance = await driver.start(smallSpec());
      timings.push(performance.now() - started);
      await instance.kill();
    }
    timings.sort((a, b) => a - b);
    console.log(
      `[figures] create+attach+start: median ${percentile(timings, 0.5).toFixed(0)} ms, max ${timings.at(-1)?.toFixed(0)} ms`,
    );
    expect(timings).toHaveLength(5);
  });

  it(`echoes ${ROUND_TRIPS} lines one at a time over the attach stream`, async () => {
    const instance = await driver.start(smallSpec({ command: buildRawBaselineCommand() }));
    let pending: ((line: string) => void) | undefined;
    let buffered = '';
    instance.onStdout((chunk) => {
      buffered += chunk.toString('utf8');
      const newline = buffered.indexOf('\n');
      if (newline === -1) return;
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      pending?.(line);
    });
    const roundTrip = (line: string): Promise<string> =>
      new Promise((resolve) => {
        pending = resolve;
        instance.write(`${line}\n`);
      });
    // Warm up: the first lines pay for JIT and the container's first writes.
    for (let i = 0; i < 100; i++) await roundTrip(`warm-${i}`);
    const timings: number[] = [];
    for (let i = 0; i < ROUND_TRIPS; i++) {
      const line = `{"type":"reply","invocation":"bench","call":${i},"ok":true,"value":${i}}`;
      const started = performance.now();
      const echoed = await roundTrip(line);
      timings.push(performance.now() - started);
      expect(echoed).toBe(line);
    }
    await instance.kill();
    timings.sort((a, b) => a - b);
    const p50 = percentile(timings, 0.5);
    const p99 = percentile(timings, 0.99);
    console.log(
      `[figures] raw echo round trip over attach: p50 ${p50.toFixed(3)} ms, p99 ${p99.toFixed(3)} ms (n=${ROUND_TRIPS})`,
    );
  });
});
