/**
 * Both drivers with the real harness bundle (scripts/build-harness.ts): the
 * container or child says `ready` and answers an invocation over the stdio
 * protocol, started with the flags the drivers add.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxDriver, SandboxInstance } from '../../control-plane/sandbox/driver.js';
import { DockerSandbox } from '../../control-plane/sandbox/docker/docker-sandbox.js';
import { ensureRunnerImage } from '../../control-plane/image-build/ensure-runner-image.js';
import { ProcessSandbox } from '../../control-plane/sandbox/process/process-sandbox.js';
import { buildHarness } from '../../scripts/build-harness.js';
import {
  encodeMessage,
  HarnessMessage,
  LineReader,
  type InvokeMessage,
} from '../../src/protocol/index.js';
import { smallSpec, uniquePlaneName } from './helpers.js';

const drivers: SandboxDriver[] = [];
let harnessDir: string;
let image: string;

beforeAll(async () => {
  harnessDir = dirname((await buildHarness()).harnessPath);
  image =
    process.env.MCPHOST_TEST_RUNNER_IMAGE ??
    (await ensureRunnerImage({ base: 'local', harnessDir }));
});

afterAll(async () => {
  await Promise.all(drivers.map((driver) => driver.close()));
});

/** Messages from the harness, in order. */
function readMessages(instance: SandboxInstance): () => Promise<HarnessMessage> {
  const queue: HarnessMessage[] = [];
  const waiters: ((message: HarnessMessage) => void)[] = [];
  const reader = new LineReader({
    schema: HarnessMessage,
    onMessage: (message) => {
      const waiter = waiters.shift();
      if (waiter) waiter(message);
      else queue.push(message);
    },
    onFault: (fault) => {
      throw fault;
    },
  });
  instance.onStdout((chunk) => reader.push(chunk));
  return () => {
    const message = queue.shift();
    return message ? Promise.resolve(message) : new Promise((resolve) => waiters.push(resolve));
  };
}

const invoke: InvokeMessage = {
  type: 'invoke',
  invocation: 'drivers-1',
  code: 'console.log("adding"); return sdk.lodash.sum([params.a, 1]);',
  params: { a: 41 },
  env: {},
  timeoutMs: 5_000,
  limits: { maxResultBytes: 1_000_000, maxLogBytes: 100_000, maxLogEntries: 1000 },
};

describe.each([
  ['docker', () => new DockerSandbox({ image, planeName: uniquePlaneName('real') })],
  [
    'docker over a Unix socket (RUNNER_SOCKET_DIR)',
    () =>
      new DockerSandbox({
        image,
        planeName: uniquePlaneName('real-socket'),
        socketDir: mkdtempSync(join(tmpdir(), 'mcphost-rs-')),
      }),
  ],
  ['process', () => new ProcessSandbox({ harnessDir, warn: () => {} })],
])('the real harness under the %s driver', (_kind, makeDriver) => {
  it('says ready and answers an invocation', async () => {
    const driver = makeDriver();
    drivers.push(driver);
    const instance = await driver.start(smallSpec());
    const next = readMessages(instance);
    expect(await next()).toMatchObject({ type: 'ready', protocol: 1 });
    instance.write(encodeMessage(invoke));
    const messages: HarnessMessage[] = [];
    for (let message = await next(); ; message = await next()) {
      messages.push(message);
      if (message.type === 'result') break;
    }
    expect(messages).toContainEqual(expect.objectContaining({ type: 'log', text: 'adding' }));
    expect(messages.at(-1)).toEqual({
      type: 'result',
      invocation: 'drivers-1',
      ok: true,
      value: 42,
      heap: expect.any(Number),
    });
    await instance.kill();
    // No relaunch: the drivers pass --experimental-vm-modules themselves.
    expect((await instance.exited).stderrTail).not.toMatch(/still missing after a relaunch/);
  });
});
