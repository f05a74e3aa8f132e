/**
 * Stopping the real service as supervisors do: SIGTERM delivered twice in a
 * moment (to node directly, and forwarded by a wrapper in its process group)
 * is one request — the service drains, removes its runner containers and
 * exits 0, instead of "second signal: exiting without waiting" with its
 * containers left behind. And `npm start` itself, signalled alone or with
 * its process group, stops everything it started.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Dockerode from 'dockerode';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  childControlPlane,
  type ChildControlPlane,
} from '../../faults/support/child-control-plane.js';
import { freePort, startTestControlPlane } from '../../support/control-plane.js';

let plane: ChildControlPlane;
const docker = new Dockerode();

beforeAll(async () => {
  plane = await childControlPlane({ GENERIC_POOL_SIZE: '1', POOL_MIN_WARM: '1' });
  await plane.start();
}, 180_000);

afterAll(async () => {
  await plane?.close();
});

const containersOf = async (planeName: string) =>
  docker.listContainers({
    all: true,
    filters: { label: [`mcphost.plane=${planeName}`] },
  });

it('treats a repeated SIGTERM as the same request and leaves no container', async () => {
  expect((await plane.admin('POST', '/api/servers', { subdomain: 'sig' })).status).toBe(201);
  const saved = await plane.admin('PUT', '/api/servers/sig/tools/hi', {
    description: 'hi',
    code: "return 'hi';",
  });
  expect(saved.status).toBe(201);
  expect((await plane.admin('POST', '/api/servers/sig/tools/hi/invoke', {})).body).toMatchObject({
    ok: true,
  });
  await expect.poll(async () => (await containersOf(plane.planeName)).length).toBeGreaterThan(0);
  const child = plane.process!;
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  setTimeout(() => child.kill('SIGTERM'), 50);
  expect(await exit).toBe(0);
  expect(plane.output()).not.toContain('second signal');
  expect(await containersOf(plane.planeName)).toEqual([]);
}, 120_000);

/** `npm start` as the README says to run it, in a process group of its own. */
async function npmStart(
  planeName: string,
): Promise<{ npm: ChildProcess; port: number; output: () => string }> {
  const port = await freePort();
  const npm = spawn('npm', ['start'], {
    detached: true,
    env: {
      ...process.env,
      PORT: String(port),
      DATA_DIR: mkdtempSync(join(tmpdir(), 'mcphost-npm-start-')),
      PLANE_NAME: planeName,
      MASTER_KEY: Buffer.alloc(32, 3).toString('base64'),
      ADMIN_TOKEN: 'npm-start-token-0123456789abcdef',
      GENERIC_POOL_SIZE: '1',
      POOL_MIN_WARM: '1',
      LOG_LEVEL: 'info',
      ...(process.env.MCPHOST_TEST_RUNNER_IMAGE
        ? { RUNNER_IMAGE: process.env.MCPHOST_TEST_RUNNER_IMAGE }
        : {}),
    },
  });
  let output = '';
  npm.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  npm.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await expect
    .poll(
      () =>
        fetch(`http://127.0.0.1:${port}/healthz`).then(
          (response) => response.status,
          () => 0,
        ),
      { timeout: 90_000, interval: 250 },
    )
    .toBe(200);
  await expect
    .poll(async () => (await containersOf(planeName)).length, { timeout: 30_000 })
    .toBe(1);
  return { npm, port, output: () => output };
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });

it.each([
  ['to npm alone', (npm: ChildProcess) => process.kill(npm.pid!, 'SIGTERM')],
  ['to the process group', (npm: ChildProcess) => process.kill(-npm.pid!, 'SIGTERM')],
])(
  'stops `npm start` cleanly on SIGTERM %s, leaving no process or container',
  async (_how, send) => {
    const planeName = `npm-start-${process.pid}-${randomBytes(3).toString('hex')}`;
    const { npm, output } = await npmStart(planeName);
    send(npm);
    await exited(npm);
    // Nothing of the group is left serving (tsx, node), and no runner container.
    await expect
      .poll(
        () => {
          try {
            process.kill(-npm.pid!, 0);
            return 'alive';
          } catch {
            return 'gone';
          }
        },
        { timeout: 20_000 },
      )
      .toBe('gone');
    expect(await containersOf(planeName)).toEqual([]);
    expect(output()).toContain('shutting down');
    expect(output()).not.toContain('second signal');
  },
  180_000,
);

it('leaves no runner container when a start fails after the pools began warming (port in use)', async () => {
  const busy = createServer();
  const port = await freePort();
  await new Promise<void>((resolve) => busy.listen(port, '127.0.0.1', resolve));
  const planeName = `failed-start-${process.pid}-${randomBytes(3).toString('hex')}`;
  try {
    await expect(
      startTestControlPlane({
        PORT: String(port),
        PLANE_NAME: planeName,
        GENERIC_POOL_SIZE: '2',
        POOL_MIN_WARM: '1',
      }),
    ).rejects.toMatchObject({
      code: 'ERR_PORT_UNAVAILABLE',
      cause: expect.objectContaining({ code: 'EADDRINUSE' }),
    });
    expect(await containersOf(planeName)).toEqual([]);
  } finally {
    busy.close();
  }
}, 120_000);
