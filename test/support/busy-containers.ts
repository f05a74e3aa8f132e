/**
 * What a server's pools are doing right now, as the admin API reports it:
 * what a test waits for (`expect.poll`) before it acts on a call that must be
 * in flight, instead of sleeping a guess.
 */
import type { TestControlPlane } from './control-plane.js';

interface PoolActivity {
  server?: string;
  busy: number;
  queued: number;
}

async function poolsOf(plane: TestControlPlane, server: string): Promise<PoolActivity[]> {
  const { status, body } = await plane.admin('GET', '/api/pools');
  if (status !== 200) throw new Error(`GET /api/pools answered ${status}`);
  return (body.pools as PoolActivity[]).filter((pool) => pool.server === server);
}

/** Containers of `server` running an invocation now (every pool of the server). */
export async function busyContainers(plane: TestControlPlane, server: string): Promise<number> {
  return (await poolsOf(plane, server)).reduce((sum, pool) => sum + pool.busy, 0);
}

/** Invocations of `server` in the pools now: running, or waiting for a container. */
export async function callsInFlight(plane: TestControlPlane, server: string): Promise<number> {
  return (await poolsOf(plane, server)).reduce((sum, pool) => sum + pool.busy + pool.queued, 0);
}
