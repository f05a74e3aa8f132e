/**
 * The admin API's test run (`POST …/tools/{name}/invoke`) answers as a client's
 * call is answered — 200 with `ok: false` when the tool failed — and with the
 * registry's status when mcphost itself could not run it: here no capacity
 * (one container, no queue, the container busy) is 503 ERR_NO_CAPACITY.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';

let plane: TestControlPlane;

beforeAll(async () => {
  plane = await startTestControlPlane({
    SANDBOX_DRIVER: 'process',
    GENERIC_POOL_SIZE: '0',
    POOL_MIN_WARM: '0',
    POOL_MAX_SIZE: '1',
    POOL_MAX_QUEUE: '0',
  });
  expect((await plane.admin('POST', '/api/servers', { subdomain: 'runs' })).status).toBe(201);
  for (const [name, code] of [
    ['fails', "throw new Error('the tool says no');"],
    // Busy until told to stop by its argument's deadline (no timer needed in the sandbox).
    ['busy', 'const end = Date.now() + params.ms; while (Date.now() < end) {} return "done";'],
  ]) {
    const saved = await plane.admin('PUT', `/api/servers/runs/tools/${name}`, {
      description: name,
      code,
      parameters: name === 'busy' ? [{ name: 'ms', type: 'number', required: true }] : [],
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
  }
}, 180_000);

afterAll(async () => {
  await plane?.close();
});

it('answers 200 with ok: false when the tool itself failed', async () => {
  const run = await plane.admin('POST', '/api/servers/runs/tools/fails/invoke', {});
  expect(run.status).toBe(200);
  expect(run.body).toMatchObject({
    ok: false,
    error: { code: 'ERR_TOOL_ERROR', message: 'the tool says no' },
  });
});

it('answers 503 ERR_NO_CAPACITY when mcphost could not run the tool', async () => {
  const busy = plane.admin('POST', '/api/servers/runs/tools/busy/invoke', {
    params: { ms: 3_000 },
  });
  // The one container is leased once the pool shows it busy.
  const leased = async () => {
    const pools = (await plane.admin('GET', '/api/pools')).body.pools as { busy: number }[];
    return pools.reduce((sum, pool) => sum + pool.busy, 0);
  };
  await expect.poll(leased, { timeout: 10_000, interval: 50 }).toBe(1);
  const refused = await plane.admin('POST', '/api/servers/runs/tools/busy/invoke', {
    params: { ms: 1 },
  });
  expect(refused.status).toBe(503);
  expect(refused.body).toMatchObject({ ok: false, error: { code: 'ERR_NO_CAPACITY' } });
  expect((await busy).body).toMatchObject({ ok: true, result: 'done' });
});
