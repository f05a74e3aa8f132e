/**
 * Runs the real service (`control-plane/main.ts`) as its own process, the way
 * an operator does, so a test can SIGKILL it and start it again on the same
 * data directory and environment. One node process (tsx as an `--import`
 * loader, not the tsx CLI, which would fork a grandchild a SIGKILL misses).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { freePort } from '../../support/control-plane.js';
import { loopbackFetch } from '../../support/loopback-fetch.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const TSX_LOADER = pathToFileURL(join(REPO_ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const MAIN = join(REPO_ROOT, 'control-plane/main.ts');

/** The admin token every child control plane is started with. */
export const CHILD_ADMIN_TOKEN = 'faults-admin-token-0123456789abcdef';

/** A control plane running as a child process. */
export interface ChildControlPlane {
  readonly port: number;
  readonly planeName: string;
  readonly dataDir: string;
  readonly adminUrl: string;
  /** The environment it runs with (the same on every start). */
  readonly env: Readonly<Record<string, string>>;
  /** The running process, if any. */
  readonly process: ChildProcess | undefined;
  /** Output seen so far (stdout and stderr; for failure messages). */
  output(): string;
  mcpUrl(subdomain: string): URL;
  /** Admin API call with the admin token; JSON in and out. */
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** Starts the process and waits until `/healthz` answers (default wait 60 000 ms). */
  start(waitMs?: number): Promise<void>;
  /** Sends `signal` and waits for the exit. */
  kill(signal: NodeJS.Signals): Promise<void>;
  /** Stops the process (SIGTERM, then SIGKILL after 15 s) and removes the data directory. */
  close(): Promise<void>;
}

/** Creates (does not start) a child control plane; `env` overrides the defaults below. */
export async function childControlPlane(
  env: Record<string, string> = {},
): Promise<ChildControlPlane> {
  const image = process.env.MCPHOST_TEST_RUNNER_IMAGE;
  if (!image) throw new TypeError('childControlPlane: MCPHOST_TEST_RUNNER_IMAGE is not set');
  const dataDir = mkdtempSync(join(tmpdir(), 'mcphost-faults-'));
  const port = await freePort();
  const planeName = env.PLANE_NAME ?? `faults-${process.pid}-${port}`;
  const fullEnv: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? dataDir,
    PORT: String(port),
    LISTEN_HOST: '127.0.0.1',
    BASE_DOMAIN: 'localhost',
    PUBLIC_URL_TEMPLATE: `http://{subdomain}.localhost:${port}`,
    DATA_DIR: dataDir,
    ADMIN_TOKEN: CHILD_ADMIN_TOKEN,
    MASTER_KEY: Buffer.alloc(32, 9).toString('base64'),
    EGRESS_ALLOW: '127.0.0.0/8',
    PLANE_NAME: planeName,
    RUNNER_IMAGE: image,
    LOG_LEVEL: 'warn',
    ...env,
  };
  if (process.env.DOCKER_HOST) fullEnv.DOCKER_HOST = process.env.DOCKER_HOST;
  const adminUrl = `http://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let output = '';

  const plane: ChildControlPlane = {
    port,
    planeName,
    dataDir,
    adminUrl,
    env: fullEnv,
    get process() {
      return child;
    },
    output: () => output,
    mcpUrl: (subdomain) => new URL(`http://${subdomain}.localhost:${port}/mcp`),
    admin: async (method, path, body) => {
      const response = await loopbackFetch(`${adminUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${CHILD_ADMIN_TOKEN}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    },
    start: async (waitMs = 60_000) => {
      if (child) throw new TypeError('childControlPlane.start: already running');
      // cwd = the data directory: no stray .env of the repository is read.
      const started = spawn(process.execPath, ['--import', TSX_LOADER, MAIN], {
        cwd: dataDir,
        env: fullEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child = started;
      started.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      started.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      exited = new Promise((resolveExit) =>
        started.once('exit', () => {
          if (child === started) child = undefined;
          resolveExit();
        }),
      );
      const deadline = Date.now() + waitMs;
      while (Date.now() < deadline) {
        if (child !== started) throw new Error(`control plane exited at start:\n${output}`);
        const healthy = await loopbackFetch(`${adminUrl}/healthz`).then(
          (response) => response.ok,
          () => false,
        );
        if (healthy) return;
        await new Promise((r) => setTimeout(r, 200));
      }
      throw new Error(`control plane did not answer /healthz within ${waitMs} ms:\n${output}`);
    },
    kill: async (signal) => {
      if (!child) return;
      child.kill(signal);
      await exited;
    },
    close: async () => {
      if (child) {
        const running = child;
        running.kill('SIGTERM');
        const timer = setTimeout(() => running.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return plane;
}
