/**
 * A start on a port something else holds (another mcphost, most often) says
 * so in one line naming the port and the setting, exits non-zero and prints
 * no stack: against a real listener, in-process and as `control-plane/main.ts`
 * runs for an operator.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { isMcphostError } from '../../../control-plane/errors.js';
import { freePort, startTestControlPlane } from '../../support/control-plane.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const TSX_LOADER = pathToFileURL(join(REPO_ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const MAIN = join(REPO_ROOT, 'control-plane/main.ts');

/** No containers: the start fails before any would be needed. */
const NO_CONTAINERS = { SANDBOX_DRIVER: 'process', GENERIC_POOL_SIZE: '0', POOL_MIN_WARM: '0' };

let holder: Server; // the other program on the port
let busyPort: number;

beforeAll(async () => {
  holder = createServer();
  await new Promise<void>((resolveListen) => holder.listen(0, '127.0.0.1', resolveListen));
  busyPort = (holder.address() as { port: number }).port;
});

afterAll(async () => {
  await new Promise((resolveClose) => holder?.close(resolveClose));
});

/** What startTestControlPlane rejected with. */
async function startFailure(env: Record<string, string>): Promise<unknown> {
  try {
    const plane = await startTestControlPlane({ ...NO_CONTAINERS, ...env });
    await plane.close();
  } catch (error) {
    return error;
  }
  throw new Error('the control plane started on a port in use');
}

/** True when a listener can be opened on `port` now. */
async function isFree(port: number): Promise<boolean> {
  const probe = createServer();
  return new Promise((resolveProbe) => {
    probe.once('error', () => resolveProbe(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolveProbe(true)));
  });
}

it('fails the start with ERR_PORT_UNAVAILABLE naming the port and PORT', async () => {
  const error = await startFailure({ PORT: String(busyPort) });
  expect(isMcphostError(error, 'ERR_PORT_UNAVAILABLE')).toBe(true);
  expect((error as Error).message).toBe(
    `port ${busyPort} is in use (another mcphost, or another program?): stop it or set PORT to a free port`,
  );
});

it('names ADMIN_PORT when that is the port in use, and releases PORT again', async () => {
  const port = await freePort();
  const error = await startFailure({
    PORT: String(port),
    PUBLIC_URL_TEMPLATE: `http://{subdomain}.localhost:${port}`,
    ADMIN_PORT: String(busyPort),
  });
  expect(isMcphostError(error, 'ERR_PORT_UNAVAILABLE')).toBe(true);
  expect((error as Error).message).toBe(
    `port ${busyPort} is in use (another mcphost, or another program?): stop it or set ADMIN_PORT to a free port`,
  );
  expect(await isFree(port)).toBe(true);
});

it('prints that one line, without a stack, and exits 1 when started as the service', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'mcphost-port-in-use-'));
  try {
    const child = spawn(process.execPath, ['--import', TSX_LOADER, MAIN], {
      cwd: dataDir,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: dataDir,
        PORT: String(busyPort),
        LISTEN_HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        ADMIN_TOKEN: 'port-in-use-token-0123456789abcdef',
        MASTER_KEY: Buffer.alloc(32, 5).toString('base64'),
        LOG_LEVEL: 'warn',
        ...NO_CONTAINERS,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exitCode = await new Promise<number | null>((resolveExit) =>
      child.once('exit', (code) => resolveExit(code)),
    );
    expect(exitCode, stdout + stderr).toBe(1);
    expect(stderr).toBe(
      `mcphost could not start: ERR_PORT_UNAVAILABLE: port ${busyPort} is in use (another mcphost, or another program?): stop it or set PORT to a free port\n`,
    );
    expect(stdout).not.toMatch(/^\s+at /m);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 60_000);
