/**
 * The audit log through a real control plane: a test run refused with an
 * error keeps that error's code readable in its entry, while the tool's own
 * code (program text) is still kept as its length and SHA-256 only.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';

const CODE = 'return params.n * 2;';
let plane: TestControlPlane;

beforeAll(async () => {
  plane = await startTestControlPlane({ GENERIC_POOL_SIZE: '0', POOL_MIN_WARM: '0' });
  expect((await plane.admin('POST', '/api/servers', { subdomain: 'codes' })).status).toBe(201);
}, 180_000);

afterAll(async () => {
  await plane?.close();
});

it('keeps a test run’s error code as it is, and digests the tool’s code', async () => {
  const saved = await plane.admin('PUT', '/api/servers/codes/tools/double', {
    description: 'Doubles n.',
    parameters: [{ name: 'n', type: 'number', required: true }],
    code: CODE,
  });
  expect(saved.status, JSON.stringify(saved.body)).toBe(201);
  // A missing argument is refused before any container is involved.
  const run = await plane.admin('POST', '/api/servers/codes/tools/double/invoke', { params: {} });
  expect(run.status, JSON.stringify(run.body)).toBe(200);
  expect(run.body.ok).toBe(false);
  const errorCode: string = run.body.error.code;
  expect(errorCode).toMatch(/^ERR_[A-Z_]+$/);

  const invoked = await plane.admin('GET', '/api/audit?action=tool.invoke&server=codes');
  expect(invoked.body.entries[0].summary.after.error.code).toBe(errorCode);
  const save = await plane.admin('GET', '/api/audit?action=tool.save&server=codes');
  expect(save.body.entries[0].summary.after.code).toEqual({
    bytes: Buffer.byteLength(CODE),
    sha256: createHash('sha256').update(CODE).digest('hex'),
  });
});
