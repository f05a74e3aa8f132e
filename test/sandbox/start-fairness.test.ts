/**
 * Container starts are shared fairly between servers: while one server churns
 * single-use (strict) containers with many callers, another server's cold
 * start waits for at most one start of each other server (its fair turn),
 * not for the whole line. Real Docker engine, one start at a time.
 */
import Dockerode from 'dockerode';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { SandboxDriver } from '../../control-plane/sandbox/driver.js';
import { dockerManager, hooks, runnerImage, runtime, uniquePlaneName } from './docker-helpers.js';

const docker = new Dockerode();
const planeName = uniquePlaneName('fair-starts');
let image: string;
const closers: Array<() => Promise<unknown>> = [];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  image = await runnerImage();
});

afterAll(async () => {
  for (const close of closers.splice(0)) await close();
  const deadline = Date.now() + 15_000;
  const leftovers = async () =>
    (await docker.listContainers({ all: true, filters: { label: [`mcphost.plane=${planeName}`] } }))
      .length;
  while ((await leftovers()) > 0 && Date.now() < deadline) await sleep(200);
  expect(await leftovers()).toBe(0);
});

it("a victim's cold start waits for at most one start of a server churning strict containers", async () => {
  const { sandbox, driver } = dockerManager(image, planeName, {
    defaults: { minWarm: 0, maxSize: 8, queueTimeoutMs: 60_000, limits: runtime('x', '').limits },
    caps: { maxSizePerPool: 8, maxTotal: 16, serverShare: 0.5 },
    startConcurrency: 1,
  });
  closers.push(async () => {
    await sandbox.close();
    await driver.close();
  });
  // Every start, in the order the engine was asked for it, by server.
  const started: string[] = [];
  const start = driver.start.bind(driver);
  (driver as unknown as SandboxDriver).start = (spec) => {
    started.push((spec.labels['mcphost.pool'] ?? '').split(/[@/]/)[0]!);
    return start(spec);
  };
  const churner = runtime('churner/strict', 'return 1', { strict: true });
  let stop = false;
  const loops = Array.from({ length: 8 }, async () => {
    while (!stop) await sandbox.invoke(churner, hooks());
  });
  // The churner's starts fill the line.
  await expect
    .poll(() => sandbox.budgetStats().starts.queued, { timeout: 30_000, interval: 20 })
    .toBeGreaterThanOrEqual(5);
  const mark = started.length;
  const queuedAhead = sandbox.budgetStats().starts.queued;
  const began = performance.now();
  const victim = await sandbox.invoke(runtime('victim/cold', 'return "served"'), hooks());
  const waitedMs = Math.round(performance.now() - began);
  stop = true;
  await Promise.all(loops);
  expect(victim).toMatchObject({ ok: true, value: 'served' });
  const victimAt = started.indexOf('victim', mark);
  const churnerStartsFirst = started.slice(mark, victimAt).filter((s) => s === 'churner').length;
  console.log(
    `[fair starts] victim's cold start: ${waitedMs} ms, behind ${churnerStartsFirst} of the churner's starts (${queuedAhead} were queued)`,
  );
  expect(victimAt).toBeGreaterThanOrEqual(mark);
  // Its fair turn: the one churner start that was picked when the running one ended.
  expect(churnerStartsFirst).toBeLessThanOrEqual(1);
}, 120_000);
