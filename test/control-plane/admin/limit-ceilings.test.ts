/**
 * Limits are ceilings set from above: the host's (TOOL_MAX_MEMORY_MB,
 * TOOL_MAX_TIMEOUT_MS) ≥ a server's (an admin's) ≥ a tool's, prompt's or
 * resource's (its operator's, which may only lower). A save above a ceiling
 * is refused naming it, and nothing changes; a tool saved before its server's
 * limits were lowered runs at the new limits, and its view says so. Through
 * the real admin API, with an operator's own token, on a real Docker engine
 * (the container's HostConfig.Memory is what the kernel enforces).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Dockerode from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminRequest, passwordSignIn } from '../../support/admin-requests.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';

const MiB = 1024 * 1024;
const PASSWORD = 'correct horse battery staple 42';
const docker = new Dockerode();
let plane: TestControlPlane;
let operator: string;

/** Allocates `params.mb` MiB and keeps it reachable; answers how much it holds. */
const ALLOCATE = `
  const blocks = [];
  for (let i = 0; i < params.mb; i++) blocks.push(new Uint8Array(1024 * 1024).fill(1));
  return blocks.length;
`;

function asOperator(method: string, path: string, body?: unknown) {
  return adminRequest(plane.adminUrl, method, path, { bearer: operator, body });
}

/** Memory limits, in MiB, of the running containers of `server`'s pools. */
async function containerMemoryMb(server: string): Promise<number[]> {
  const containers = await docker.listContainers({
    filters: { label: [`mcphost.plane=${plane.config.planeName}`] },
  });
  const ours = containers.filter((c) => (c.Labels['mcphost.pool'] ?? '').startsWith(`${server}@`));
  const inspected = await Promise.all(ours.map((c) => docker.getContainer(c.Id).inspect()));
  return inspected.map((c) => c.HostConfig.Memory! / MiB);
}

beforeAll(async () => {
  plane = await startTestControlPlane({
    TOOL_MAX_MEMORY_MB: '256',
    TOOL_MAX_TIMEOUT_MS: '60000',
    GENERIC_POOL_SIZE: '0',
    POOL_MIN_WARM: '1',
    SIGN_IN_ATTEMPTS_PER_MINUTE: '1000',
  });
  for (const subdomain of ['capped', 'lowered', 'hosted']) {
    expect((await plane.admin('POST', '/api/servers', { subdomain })).status).toBe(201);
  }
  const email = 'operator@example.test';
  const created = await plane.admin('POST', '/api/accounts', {
    email,
    role: 'operator',
    password: PASSWORD,
    servers: ['capped', 'lowered', 'hosted'],
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const signIn = await passwordSignIn(plane.adminUrl, email, PASSWORD);
  expect(signIn.status).toBe(200);
  const minted = await adminRequest(plane.adminUrl, 'POST', '/api/me/tokens', {
    cookie: signIn.cookie,
    csrf: signIn.csrf,
    body: { label: 'ceilings' },
  });
  expect(minted.status).toBe(201);
  operator = minted.body.token;
}, 180_000);

afterAll(async () => {
  await plane?.close();
});

describe("a server's limits are the ceiling of its tools", () => {
  it("refuses an operator's tool above the admin's server limits, naming the ceiling, and saves nothing", async () => {
    const limited = await plane.admin('PATCH', '/api/servers/capped/settings', {
      limits: { memoryMb: 64, timeoutMs: 5000 },
    });
    expect(limited.status, JSON.stringify(limited.body)).toBe(200);

    const refused = await asOperator('PUT', '/api/servers/capped/tools/hog', {
      description: 'asks for everything',
      code: ALLOCATE,
      parameters: [{ name: 'mb', type: 'number', required: true }],
      limits: { memoryMb: 65536, timeoutMs: 3_600_000 },
    });
    expect(refused.status, JSON.stringify(refused.body)).toBe(422);
    expect(refused.body.error.code).toBe('ERR_LIMIT_ABOVE_CEILING');
    expect(refused.body.error.message).toMatch(/memoryMb 65536 is above .*64 MiB.*server "capped"/);
    expect(refused.body.error.message).toMatch(/timeoutMs 3600000 is above .*5000 ms/);
    expect(refused.body.error.details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          field: 'memoryMb',
          requested: 65536,
          ceiling: 64,
          setBy: 'server',
        }),
        expect.objectContaining({ field: 'timeoutMs', requested: 3_600_000, ceiling: 5000 }),
      ]),
    );
    expect((await asOperator('GET', '/api/servers/capped/tools/hog')).status).toBe(404);
  });

  it('runs the tool that saves within the ceiling in a container of the server limit: 1 GiB is refused', async () => {
    const saved = await asOperator('PUT', '/api/servers/capped/tools/hog', {
      description: 'allocates',
      code: ALLOCATE,
      parameters: [{ name: 'mb', type: 'number', required: true }],
      limits: { memoryMb: 48 },
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    const run = await asOperator('POST', '/api/servers/capped/tools/hog/invoke', {
      params: { mb: 1024 },
    });
    expect(run.body.ok, JSON.stringify(run.body)).toBe(false);
    expect(run.body.error.code).toBe('ERR_TOOL_MEMORY');
    const small = await asOperator('POST', '/api/servers/capped/tools/hog/invoke', {
      params: { mb: 1 },
    });
    expect(small.body).toMatchObject({ ok: true, result: 1 });
    for (const memory of await containerMemoryMb('capped')) expect(memory).toBeLessThanOrEqual(64);
  });
});

describe('an admin lowering a server below its saved tools', () => {
  it('keeps the tool as saved, shows the effective limits and runs it at the new ceiling', async () => {
    const saved = await asOperator('PUT', '/api/servers/lowered/tools/big', {
      description: 'asks for 200 MiB',
      code: ALLOCATE,
      parameters: [{ name: 'mb', type: 'number', required: true }],
      limits: { memoryMb: 200, timeoutMs: 20_000 },
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    const lowered = await plane.admin('PATCH', '/api/servers/lowered/settings', {
      limits: { memoryMb: 64, timeoutMs: 4000 },
    });
    expect(lowered.status).toBe(200);
    expect(lowered.body.warnings).toContain(
      'tool "big" ask for more than the new limits: they run at the server\'s limits until saved within them',
    );

    const view = await asOperator('GET', '/api/servers/lowered/tools/big');
    expect(view.body.limits).toEqual({ memoryMb: 200, timeoutMs: 20_000 });
    expect(view.body.effectiveLimits).toEqual({ memoryMb: 64, timeoutMs: 4000 });
    expect(view.body.limitsClamped).toEqual(['memoryMb', 'timeoutMs']);
    const list = await asOperator('GET', '/api/servers/lowered/tools');
    expect(list.body.tools[0]).toMatchObject({
      effectiveLimits: { memoryMb: 64, timeoutMs: 4000 },
    });

    const run = await asOperator('POST', '/api/servers/lowered/tools/big/invoke', {
      params: { mb: 1 },
    });
    expect(run.body).toMatchObject({ ok: true, result: 1 });
    const memory = await containerMemoryMb('lowered');
    expect(memory.length).toBeGreaterThan(0);
    for (const each of memory) expect(each).toBe(64);
    // Saving it again as it was is a save above the ceiling.
    const again = await asOperator('PUT', '/api/servers/lowered/tools/big', {
      description: 'asks for 200 MiB',
      code: ALLOCATE,
      parameters: [{ name: 'mb', type: 'number', required: true }],
      limits: { memoryMb: 200 },
    });
    expect(again.status).toBe(422);
    expect(again.body.error.code).toBe('ERR_LIMIT_ABOVE_CEILING');
    const rollback = await asOperator('POST', '/api/servers/lowered/tools/big/rollback', {
      version: 1,
    });
    expect(rollback.status).toBe(422);
    expect((await asOperator('GET', '/api/servers/lowered/tools/big')).body.version).toBe(1);
  });
});

describe("the host's ceilings (TOOL_MAX_MEMORY_MB=256, TOOL_MAX_TIMEOUT_MS=60000)", () => {
  it("refuses an admin's server limits above them, naming the setting, and changes nothing", async () => {
    const refused = await plane.admin('PATCH', '/api/servers/hosted/settings', {
      limits: { memoryMb: 512, timeoutMs: 120_000 },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('ERR_LIMIT_ABOVE_CEILING');
    expect(refused.body.error.message).toMatch(
      /memoryMb 512 is above .*256 MiB.*TOOL_MAX_MEMORY_MB/,
    );
    expect(refused.body.error.message).toMatch(/TOOL_MAX_TIMEOUT_MS/);
    expect((await plane.admin('GET', '/api/servers/hosted')).body.limits).toEqual({});
  });

  it('refuses a tool, a prompt and a resource above them when the server sets nothing', async () => {
    const code = 'return 1';
    const tool = await asOperator('PUT', '/api/servers/hosted/tools/t', {
      description: 't',
      code,
      limits: { memoryMb: 257 },
    });
    const prompt = await asOperator('PUT', '/api/servers/hosted/prompts/p', {
      description: 'p',
      code: 'return [{ role: "user", content: { type: "text", text: "hi" } }]',
      limits: { timeoutMs: 60_001 },
    });
    const resource = await asOperator('PUT', '/api/servers/hosted/resources/r', {
      uriTemplate: 'notes://{id}',
      code: 'return "x"',
      limits: { memoryMb: 1024 },
    });
    for (const answer of [tool, prompt, resource]) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(422);
      expect(answer.body.error.code).toBe('ERR_LIMIT_ABOVE_CEILING');
    }
    const within = await asOperator('PUT', '/api/servers/hosted/tools/t', {
      description: 't',
      code,
      limits: { memoryMb: 256, timeoutMs: 60_000 },
    });
    expect(within.status).toBe(201);
    expect(within.body.effectiveLimits).toEqual({ memoryMb: 256, timeoutMs: 60_000 });
  });
});

describe('the ceilings are checked at boot', () => {
  it('refuses to start with a default above its ceiling, naming both', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'mcphost-ceilings-'));
    const start = (env: Record<string, string>) =>
      startTestControlPlane({ DATA_DIR: dataDir, ...env });
    await expect(start({ TOOL_MEMORY_MB: '256', TOOL_MAX_MEMORY_MB: '128' })).rejects.toMatchObject(
      {
        code: 'ERR_CONFIG',
        message: expect.stringContaining('TOOL_MEMORY_MB=256 is above TOOL_MAX_MEMORY_MB=128'),
      },
    );
    await expect(start({ TOOL_MAX_TIMEOUT_MS: '1000' })).rejects.toMatchObject({
      code: 'ERR_CONFIG',
      message: expect.stringContaining('TOOL_TIMEOUT_MS=30000 is above TOOL_MAX_TIMEOUT_MS=1000'),
    });
    rmSync(dataDir, { recursive: true, force: true });
  });
});
