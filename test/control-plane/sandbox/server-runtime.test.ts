/**
 * A server's `runtime` is checked against the sandbox engine when it is saved:
 * a runtime the engine lacks is refused with 422 naming the engine's runtimes,
 * and nothing is saved. The process driver (no OCI runtime at all) stands for
 * an engine without gVisor; the Docker side (runsc accepted and really used)
 * is covered by brokered-tools.test.ts under both runtimes. A runtime saved
 * where the engine had it and invoked where it does not (data moved to
 * another machine) fails the call with ERR_SANDBOX_UNAVAILABLE saying so.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { ENGINE_RUNTIMES } from '../../support/oci-runtimes.js';

let plane: TestControlPlane;

beforeAll(async () => {
  plane = await startTestControlPlane({ SANDBOX_DRIVER: 'process', GENERIC_POOL_SIZE: '0' });
  expect((await plane.admin('POST', '/api/servers', { subdomain: 'gv' })).status).toBe(201);
}, 120_000);

afterAll(async () => {
  await plane?.close();
});

describe('PATCH /api/servers/{sub}/settings runtime', () => {
  it('refuses a runtime the engine lacks with 422 naming the runtimes it has, and saves nothing', async () => {
    const refused = await plane.admin('PATCH', '/api/servers/gv/settings', {
      runtime: 'runsc',
      maxContainers: 3,
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({
      code: 'ERR_RUNTIME_UNAVAILABLE',
      message: expect.stringMatching(
        /^the sandbox engine has no runtime "runsc" \(it has: runc\); install gVisor/,
      ),
      details: { runtime: 'runsc', available: ['runc'] },
    });
    const server = await plane.admin('GET', '/api/servers/gv');
    expect(server.body).toMatchObject({ runtime: 'runc' });
    expect(server.body.maxContainers).not.toBe(3);
  });

  it('accepts a runtime the engine has', async () => {
    const saved = await plane.admin('PATCH', '/api/servers/gv/settings', { runtime: 'runc' });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({ runtime: 'runc' });
  });
});

describe('a saved runtime the engine no longer has', () => {
  if (!ENGINE_RUNTIMES.includes('runsc')) {
    it.skip(`skipped: saving runsc first needs an engine that has it (it has: ${ENGINE_RUNTIMES.join(', ')})`, () => {});
    return;
  }

  it('fails the call with ERR_SANDBOX_UNAVAILABLE naming the runtimes there are', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'mcphost-runtime-moved-'));
    try {
      const before = await startTestControlPlane({ DATA_DIR: dataDir, GENERIC_POOL_SIZE: '0' });
      try {
        expect((await before.admin('POST', '/api/servers', { subdomain: 'moved' })).status).toBe(
          201,
        );
        const saved = await before.admin('PATCH', '/api/servers/moved/settings', {
          runtime: 'runsc',
        });
        expect(saved.status).toBe(200);
        const tool = { description: 'One.', code: 'return 1;' };
        expect((await before.admin('PUT', '/api/servers/moved/tools/one', tool)).status).toBe(201);
      } finally {
        await before.close();
      }
      const after = await startTestControlPlane({
        DATA_DIR: dataDir,
        SANDBOX_DRIVER: 'process',
        GENERIC_POOL_SIZE: '0',
      });
      try {
        const called = await after.admin('POST', '/api/servers/moved/tools/one/invoke', {
          params: {},
        });
        expect(called.body).toMatchObject({
          ok: false,
          error: {
            code: 'ERR_SANDBOX_UNAVAILABLE',
            message: expect.stringMatching(/cannot run runtime "runsc" \(it has: runc\)/),
          },
        });
      } finally {
        await after.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
