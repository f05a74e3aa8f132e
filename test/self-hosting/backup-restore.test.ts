/**
 * Backup and restore as an operator runs them: `npm run backup` of a running
 * service on the embedded store (its master key generated), `npm run
 * restore` into a fresh PostgreSQL store of another data directory with that
 * key, and a service started there calls a tool that reads a secret. A
 * restore into a store that holds servers, without the key, or of something
 * that is no backup fails loudly (non-zero exit, a message) and writes nothing.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { onPostgresServer, postgresUrl } from '../store/store-targets.js';
import { startTestControlPlane, type TestControlPlane } from '../support/control-plane.js';

const scratch = mkdtempSync(join(tmpdir(), 'mcphost-backup-'));
const sourceDir = join(scratch, 'source');
const targetDir = join(scratch, 'target');
const backupFile = join(scratch, 'mcphost.backup.json');
const database = `mcphost_restore_${randomBytes(6).toString('hex')}`;
let source: TestControlPlane;
let target: TestControlPlane | undefined;

/** Runs an npm script's file the way `npm run` does, with only the given settings. */
function run(script: string, args: string[], env: Record<string, string>, input?: string) {
  const result = spawnSync('npx', ['tsx', `scripts/${script}.ts`, ...args], {
    env: { ...process.env, MASTER_KEY: '', DATABASE_URL: '', ADMIN_TOKEN: '', ...env },
    encoding: 'utf8',
    input,
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

beforeAll(async () => {
  await onPostgresServer(`CREATE DATABASE ${database}`);
  source = await startTestControlPlane({ DATA_DIR: sourceDir, MASTER_KEY: '' });
  expect((await source.admin('POST', '/api/servers', { subdomain: 'kept' })).status).toBe(201);
  expect(
    (
      await source.admin('PUT', '/api/servers/kept/secrets/GREETING', {
        value: 'hello from the vault',
      })
    ).status,
  ).toBe(200);
  const tool = await source.admin('PUT', '/api/servers/kept/tools/greet', {
    description: 'reads a secret',
    secrets: ['GREETING'],
    code: 'return env.GREETING;',
  });
  expect(tool.status).toBe(201);
  const prompt = await source.admin('PUT', '/api/servers/kept/prompts/hi', {
    description: 'hi',
    messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }],
  });
  expect(prompt.status).toBe(201);
}, 180_000);

afterAll(async () => {
  await Promise.all([source?.close(), target?.close()]);
  await onPostgresServer(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  rmSync(scratch, { recursive: true, force: true });
});

it('backs up a running service, restores into PostgreSQL elsewhere, and the tool reads its secret', async () => {
  const backup = run('backup', [backupFile], { DATA_DIR: sourceDir });
  expect(backup.status, backup.output).toBe(0);
  expect(backup.output).toContain('Backed up 1 server(s), 1 tool(s), 1 secret(s)');
  expect(statSync(backupFile).mode & 0o777).toBe(0o600);
  expect(existsSync(`${backupFile}.master.key`)).toBe(true);

  const pg = { DATA_DIR: targetDir, DATABASE_URL: postgresUrl(database) };
  const withoutKey = run('restore', [backupFile], pg);
  expect(withoutKey.status).not.toBe(0);
  expect(withoutKey.output).toContain('the backup holds secrets and no master key is set');
  expect(existsSync(join(targetDir, 'master.key'))).toBe(false);

  // Another deployment's key: refused before anything is written, no key installed.
  const otherKey = join(scratch, 'other.master.key');
  writeFileSync(otherKey, `${Buffer.alloc(32, 5).toString('base64')}\n`);
  const wrongKey = run('restore', [backupFile, '--master-key-file', otherKey], pg);
  expect(wrongKey.status).not.toBe(0);
  expect(wrongKey.output).toContain('do not decrypt with this master key');
  expect(existsSync(join(targetDir, 'master.key'))).toBe(false);

  const restored = run(
    'restore',
    [backupFile, '--master-key-file', `${backupFile}.master.key`],
    pg,
  );
  expect(restored.status, restored.output).toBe(0);
  expect(restored.output).toContain('Restored 1 server(s), 1 tool(s), 1 secret(s)');

  target = await startTestControlPlane({ ...pg, MASTER_KEY: '' });
  const called = await target.admin('POST', '/api/servers/kept/tools/greet/invoke', {});
  expect(called.body).toMatchObject({ ok: true, result: 'hello from the vault' });
  expect((await target.admin('GET', '/api/servers/kept/prompts/hi')).status).toBe(200);
  const versions = await target.admin('GET', '/api/servers/kept/tools/greet/versions');
  expect(versions.body.versions).toHaveLength(1);
}, 180_000);

it('refuses a store that holds servers unless told to replace it, and what is no backup', () => {
  const pg = { DATA_DIR: targetDir, DATABASE_URL: postgresUrl(database) };
  const again = run('restore', [backupFile], pg);
  expect(again.status).not.toBe(0);
  expect(again.output).toContain('already holds 1 server(s)');
  const replaced = run('restore', [backupFile, '--replace'], pg);
  expect(replaced.status, replaced.output).toBe(0);
  const garbage = join(scratch, 'garbage.json');
  writeFileSync(garbage, '{"hello": "world"}');
  const refused = run('restore', [garbage, '--replace'], pg);
  expect(refused.status).not.toBe(0);
  expect(refused.output).toContain('not an mcphost backup');
}, 120_000);

it('streams a backup to stdout and restores it from stdin (`-`), as compose exec and run do', () => {
  const streamed = spawnSync('npx', ['tsx', 'scripts/backup.ts', '-'], {
    env: { ...process.env, MASTER_KEY: '', DATABASE_URL: '', ADMIN_TOKEN: '', DATA_DIR: sourceDir },
    encoding: 'utf8',
  });
  expect(streamed.status, streamed.stderr).toBe(0);
  // stdout is the backup alone; what is said goes to stderr.
  expect(JSON.parse(streamed.stdout)).toHaveProperty('tables.servers');
  expect(streamed.stderr).toContain('to stdout');
  expect(streamed.stderr).toContain(join(sourceDir, 'master.key'));

  const key = readFileSync(join(sourceDir, 'master.key'), 'utf8').trim();
  const sqliteDir = join(scratch, 'from-stdin');
  const restored = run('restore', ['-'], { DATA_DIR: sqliteDir, MASTER_KEY: key }, streamed.stdout);
  expect(restored.status, restored.output).toBe(0);
  expect(restored.output).toContain('Restored 1 server(s), 1 tool(s), 1 secret(s) from stdin');
}, 120_000);
