/**
 * Egress through the whole control plane: tool code cannot reach the control
 * plane itself at this machine's interface address (the reproduction:
 * listening on 0.0.0.0), a malformed `egressAllow` entry is refused when saved,
 * and an OAuth Server URL at the cloud metadata address is refused before any
 * connection. The process driver stands in for Docker: the broker is the same.
 */
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';

const ownIp = Object.values(networkInterfaces())
  .flatMap((list) => list ?? [])
  .find((entry) => entry.family === 'IPv4' && !entry.internal)?.address;

let plane: TestControlPlane;

beforeAll(async () => {
  plane = await startTestControlPlane({
    SANDBOX_DRIVER: 'process',
    GENERIC_POOL_SIZE: '0',
    POOL_MIN_WARM: '0',
    LISTEN_HOST: '0.0.0.0',
  });
  expect((await plane.admin('POST', '/api/servers', { subdomain: 'eg' })).status).toBe(201);
}, 120_000);

afterAll(async () => {
  await plane?.close();
});

describe('egress through the control plane', () => {
  it('refuses tool egress to the control plane at its own interface address', async () => {
    expect(ownIp).toBeDefined();
    const tool = {
      description: 'reads the host',
      code: `return (await sdk.http({ url: 'http://${ownIp}:${plane.port}/healthz' })).body();`,
      parameters: [],
      secrets: [],
    };
    expect((await plane.admin('PUT', '/api/servers/eg/tools/probe', tool)).status).toBe(201);
    const run = await plane.admin('POST', '/api/servers/eg/tools/probe/invoke', { params: {} });
    expect(run.body).toMatchObject({
      ok: false,
      // The tool did not catch the refusal, so it fails the call with the broker's message.
      error: { message: expect.stringMatching(new RegExp(`^egress to ${ownIp} is not allowed: `)) },
    });
  }, 60_000);

  it('refuses a malformed egressAllow entry at save with 400 naming it, and saves nothing', async () => {
    const refused = await plane.admin('PATCH', '/api/servers/eg/settings', {
      egressAllow: ['10.0.0.5:5432', '10.0.0.0/33:443'],
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('ERR_VALIDATION');
    expect(JSON.stringify(refused.body.error)).toContain('10.0.0.0/33:443');
    expect((await plane.admin('GET', '/api/servers/eg')).body.egressAllow).toEqual([]);
    const saved = await plane.admin('PATCH', '/api/servers/eg/settings', {
      egressAllow: ['10.0.0.5:5432', '[fd00::1]:443', 'db.internal:5432'],
    });
    expect(saved.status).toBe(200);
  });

  it('refuses https://169.254.169.254/ as OAuth Server URL without connecting', async () => {
    // The policy's own refusal (a connection attempt would end in a timeout instead).
    const refused = await plane.admin('PATCH', '/api/servers/eg/settings', {
      securityMode: 'oauth2',
      oauthServerUrl: 'https://169.254.169.254/',
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({
      code: 'ERR_OAUTH_METADATA',
      message: expect.stringContaining('cloud metadata addresses are always refused'),
    });
    expect((await plane.admin('GET', '/api/servers/eg')).body.securityMode).toBe('none');
  });
});
