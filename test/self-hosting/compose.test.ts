/**
 * compose.yaml validated by the Debian `docker-compose` (v1) checker, the
 * command CI runs, against an example `.env` in a temporary project folder
 * holding what compose.yaml requires. Skipped, saying so, where the binary
 * is absent; .ci/run installs it.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIG_TABLE } from '../../control-plane/config.js';
import { REPO_ROOT } from './build-output.js';

const run = promisify(execFile);

const composeBinary = await run('docker-compose', ['version', '--short']).then(
  () => true,
  () => false,
);

/** The variables compose.yaml itself needs; the rest of .env is the control plane's. */
const EXAMPLE_ADMIN_TOKEN = '0123456789abcdef0123456789abcdef';
const EXAMPLE_ENV = `POSTGRES_PASSWORD=example-password\nDOCKER_GID=999\nADMIN_TOKEN=${EXAMPLE_ADMIN_TOKEN}\n`;

const packageVersion = (
  JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }
).version;

let projectDir = '';

/** `docker-compose config` on the repository's compose.yaml in the temp project; stdout, or the failure's stderr. */
async function composeConfig(
  extraEnv: Record<string, string> = {},
): Promise<{ ok: boolean; text: string }> {
  try {
    const { stdout } = await run(
      'docker-compose',
      ['-f', join(REPO_ROOT, 'compose.yaml'), '--project-directory', projectDir, 'config'],
      { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...extraEnv } },
    );
    return { ok: true, text: stdout };
  } catch (error) {
    return { ok: false, text: String((error as { stderr?: string }).stderr ?? error) };
  }
}

/** The normalised block of one service in `docker-compose config` output. */
function serviceBlock(config: string, name: string): string {
  const start = config.indexOf(`\n  ${name}:\n`);
  if (start < 0) throw new Error(`no service ${name} in:\n${config}`);
  const rest = config.slice(start + 1);
  const end = rest.slice(1).search(/\n {2}\S|\n\S/);
  return end < 0 ? rest : rest.slice(0, end + 1);
}

beforeAll(async () => {
  projectDir = await mkdtemp(join(tmpdir(), 'mcphost-compose-'));
  await writeFile(join(projectDir, '.env'), EXAMPLE_ENV);
});

afterAll(async () => {
  if (projectDir !== '') await rm(projectDir, { recursive: true, force: true });
});

const composeSuite = composeBinary ? describe : describe.skip;
const suiteName = composeBinary
  ? 'compose.yaml'
  : 'compose.yaml — SKIPPED: the docker-compose binary is not installed (apt-get install docker-compose)';

composeSuite(suiteName, () => {
  it('validates with docker-compose config -q', async () => {
    await expect(
      run('docker-compose', [
        '-f',
        join(REPO_ROOT, 'compose.yaml'),
        '--project-directory',
        projectDir,
        'config',
        '-q',
      ]),
    ).resolves.toBeDefined();
  });

  it('mounts the Docker socket into the control plane only, as a non-root group member', async () => {
    const { ok, text } = await composeConfig();
    expect(ok, text).toBe(true);
    const controlPlane = serviceBlock(text, 'control-plane');
    const postgres = serviceBlock(text, 'postgres');
    expect(controlPlane).toContain('/var/run/docker.sock:/var/run/docker.sock');
    expect(postgres).not.toContain('docker.sock');
    expect(controlPlane).toMatch(/group_add:\n\s+- '999'/);
    expect(controlPlane).toContain('read_only: true');
    expect(controlPlane).toContain('no-new-privileges:true');
    expect(controlPlane).toContain('condition: service_healthy');
    expect(controlPlane).toContain(
      'DATABASE_URL: postgres://mcphost:example-password@postgres:5432/mcphost',
    );
    expect(controlPlane).toContain('mcphost-data:/data');
    expect(postgres).toContain('image: postgres:16-alpine');
    expect(postgres).not.toContain('ports:');
    expect(postgres).toContain('healthcheck:');
  });

  it('is ready for operators: limits, rotating logs, readiness, a long enough stop, the admin side apart', async () => {
    const { ok, text } = await composeConfig();
    expect(ok, text).toBe(true);
    const controlPlane = serviceBlock(text, 'control-plane');
    const postgres = serviceBlock(text, 'postgres');
    for (const service of [controlPlane, postgres]) {
      expect(service).toMatch(/mem_limit: 1g/);
      expect(service).toMatch(/cpus: 1\.0/);
      expect(service).toMatch(/pids_limit: \d+/);
      expect(service).toMatch(/driver: json-file\n\s+options:\n\s+max-file: '5'\n\s+max-size: 10m/);
    }
    expect(controlPlane).toContain("fetch('http://127.0.0.1:8081/readyz')");
    expect(controlPlane).toContain("ADMIN_PORT: '8081'");
    expect(controlPlane).toContain('127.0.0.1:8081:8081/tcp');
    expect(controlPlane).toContain('127.0.0.1:8080:8080/tcp');
    // Above SHUTDOWN_GRACE_MS (the table's default), with room to remove runners.
    const grace = Number(/stop_grace_period: (\d+)s/.exec(controlPlane)?.[1]);
    expect(grace * 1000).toBeGreaterThan(Number(CONFIG_TABLE.shutdownGraceMs.default) + 10_000);
    // Named variables only: nothing else of .env reaches the container.
    expect(controlPlane).not.toContain('env_file');
    expect(controlPlane).toContain(`ADMIN_TOKEN: ${EXAMPLE_ADMIN_TOKEN}`);
    // The image is package.json's version, so an upgrade keeps the old one for a rollback.
    expect(controlPlane).toContain(`image: mcphost:${packageVersion}`);
  });

  it('takes the socket path, plane name, secrets files and publish addresses from .env', async () => {
    const { ok, text } = await composeConfig({
      DOCKER_SOCKET: '/run/user/1000/docker.sock',
      PLANE_NAME: 'blue',
      MASTER_KEY_FILE: '/run/secrets/master_key',
      MCPHOST_ADMIN_PUBLISH: '10.0.0.5:9000',
    });
    expect(ok, text).toBe(true);
    const controlPlane = serviceBlock(text, 'control-plane');
    expect(controlPlane).toContain('/run/user/1000/docker.sock:/var/run/docker.sock');
    expect(controlPlane).toContain('PLANE_NAME: blue');
    expect(controlPlane).toContain('MASTER_KEY_FILE: /run/secrets/master_key');
    expect(controlPlane).toContain('10.0.0.5:9000:8081/tcp');
  });

  it('stops with a clear message when .env lacks POSTGRES_PASSWORD', async () => {
    await writeFile(join(projectDir, '.env'), 'DOCKER_GID=999\n');
    try {
      const { ok, text } = await composeConfig();
      expect(ok).toBe(false);
      expect(text).toContain('set POSTGRES_PASSWORD in .env');
    } finally {
      await writeFile(join(projectDir, '.env'), EXAMPLE_ENV);
    }
  });
});
