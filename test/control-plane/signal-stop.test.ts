/**
 * Stopping the real service as supervisors do: SIGTERM delivered twice in a
 * moment (to node directly, and forwarded by a wrapper in its process group)
 * is one request — the service drains, removes its runner containers and
 * exits 0, instead of "second signal: exiting without waiting" with its
 * containers left behind.
 */
import Dockerode from 'dockerode';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  childControlPlane,
  type ChildControlPlane,
} from '../faults/support/child-control-plane.js';

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
