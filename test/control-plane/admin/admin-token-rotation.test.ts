/**
 * The admin token's life: ADMIN_TOKEN revokes a generated token for good (no
 * revival when it is removed), and a generated token is rotated through the
 * API (or `npm run admin-token -- --rotate`), the old one refused on every
 * replica sharing PostgreSQL at once.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminToken } from '../../../control-plane/identity/index.js';
import { openStore, type Store } from '../../../control-plane/store/index.js';
import { onPostgresServer, postgresUrl } from '../../store/store-targets.js';
import { loopbackFetch } from '../../support/loopback-fetch.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';

const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
const fakeRequest = (token: string) => bearer(token) as never;

describe('AdminToken on a store', () => {
  let dataDir: string;
  let store: Store;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'mcphost-token-'));
    store = await openStore({ dataDir, masterKey: Buffer.alloc(32, 1) });
  });
  afterAll(async () => {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('revokes a generated token once ADMIN_TOKEN is set, and never revives it', async () => {
    const first = await AdminToken.resolve(undefined, store);
    expect(first.generated).toMatch(/^mcph_/);
    const again = await AdminToken.resolve(undefined, store);
    expect(again.generated).toBeUndefined();
    expect(() => again.token.check(fakeRequest(first.generated!))).not.toThrow();
    // ADMIN_TOKEN set: the generated token is gone for good, on running replicas too.
    const configured = await AdminToken.resolve('chosen-token-0123456789', store);
    await again.token.refresh(store);
    expect(() => again.token.check(fakeRequest(first.generated!))).toThrow(/not valid/);
    expect(() => configured.token.check(fakeRequest('chosen-token-0123456789'))).not.toThrow();
    // ADMIN_TOKEN removed again: a new token, not the old one.
    const later = await AdminToken.resolve(undefined, store);
    expect(later.generated).toMatch(/^mcph_/);
    expect(later.generated).not.toBe(first.generated);
    expect(() => later.token.check(fakeRequest(first.generated!))).toThrow(/not valid/);
  });

  it('refuses to rotate a token that comes from the configuration', async () => {
    const configured = await AdminToken.resolve('chosen-token-0123456789', store);
    await expect(configured.token.rotate(store)).rejects.toMatchObject({ code: 'ERR_CONFLICT' });
  });

  it('rotates from the command line, for a lost token', () => {
    const before = execFileSync('npx', ['tsx', 'scripts/admin-token.ts', '--rotate'], {
      env: { ...process.env, DATA_DIR: dataDir, ADMIN_TOKEN: '', DATABASE_URL: '' },
      encoding: 'utf8',
    });
    const token = /^\s+(mcph_\S+)$/m.exec(before)?.[1];
    expect(token).toBeDefined();
    return AdminToken.resolve(undefined, store).then(({ token: stored, generated }) => {
      expect(generated).toBeUndefined();
      expect(() => stored.check(fakeRequest(token!))).not.toThrow();
    });
  }, 60_000);
});

describe('rotation across replicas', () => {
  const database = `mcphost_token_${randomBytes(6).toString('hex')}`;
  let first: TestControlPlane;
  let second: TestControlPlane;
  let generated: string;

  beforeAll(async () => {
    await onPostgresServer(`CREATE DATABASE ${database}`);
    const env = {
      DATABASE_URL: postgresUrl(database),
      GENERIC_POOL_SIZE: '0',
      POOL_MIN_WARM: '0',
      ADMIN_TOKEN: '',
    };
    first = await startTestControlPlane(env);
    second = await startTestControlPlane(env);
    generated = first.app.generatedAdminToken!;
  }, 180_000);

  afterAll(async () => {
    await Promise.all([first?.close(), second?.close()]);
    await onPostgresServer(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  });

  const status = async (plane: TestControlPlane, token: string) =>
    (await loopbackFetch(`${plane.adminUrl}/api/servers`, bearer(token))).status;

  it('answers the new token once and refuses the old one on every replica', async () => {
    expect(generated).toMatch(/^mcph_/);
    expect(second.app.generatedAdminToken).toBeUndefined();
    expect(await status(second, generated)).toBe(200);
    const rotated = await loopbackFetch(`${first.adminUrl}/api/admin-token/rotate`, {
      method: 'POST',
      ...bearer(generated),
    });
    expect(rotated.status).toBe(200);
    const { token } = (await rotated.json()) as { token: string };
    expect(token).toMatch(/^mcph_/);
    expect(await status(first, generated)).toBe(401);
    expect(await status(first, token)).toBe(200);
    await expect.poll(() => status(second, generated), { timeout: 5000 }).toBe(401);
    expect(await status(second, token)).toBe(200);
  });
});
