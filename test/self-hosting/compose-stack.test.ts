/**
 * The repository's compose.yaml brought up for real, the way
 * docs/self-hosting.md tells an operator to, on a second Docker engine of its
 * own (own socket, data root and bridge; the first engine, which every other
 * test uses, is never touched): the control plane image built offline, a
 * PostgreSQL image built offline from this machine's Debian binaries and
 * tagged as compose expects (a fixture, fixtures/postgres-image.ts), and the
 * `.env` an operator writes, with the engine's socket as the only override.
 *
 * Then what an operator does: wait for readiness, create a server, a secret
 * and a tool through the admin API, call the tool with the MCP SDK (a runner
 * container beside the stack answers), take the stack down and up again with
 * its data intact, back it up with the documented command, restore the
 * backup into a second stack on the same engine that takes its credentials
 * as Docker secrets (compose.secrets.yaml) and whose start leaves the first
 * stack's runners alone, and take both down.
 *
 * Skipped, saying why, where docker-compose, dockerd or root is missing;
 * .ci/run provides all three.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Dockerode from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildControlPlaneImage, CONTROL_PLANE_USER } from '../../scripts/control-plane-image.js';
import { localNodeBaseTag } from '../../control-plane/image-build/index.js';
import { connectSdkSession } from '../support/sdk-session.js';
import { freePort } from '../support/loopback-server.js';
import { buildOutputInTemp, REPO_ROOT } from './build-output.js';
import { buildPostgresFixtureImage } from './fixtures/postgres-image.js';
import { startSecondEngine, type SecondEngine } from './fixtures/second-engine.js';

const run = promisify(execFile);

const missing = await whatIsMissing();

const runId = randomBytes(3).toString('hex');
const ADMIN_TOKEN = randomBytes(24).toString('hex');
const COMPOSE_FILE = join(REPO_ROOT, 'compose.yaml');
const MASTER_KEY = randomBytes(32).toString('base64');
const SECRET = 'hello from the vault';
const CONTROL_PLANE_UID = Number(CONTROL_PLANE_USER.split(':')[0]);

/** One compose project: its folder (holding its `.env`), name and published ports. */
interface Stack {
  name: string;
  dir: string;
  /** `-f` files: compose.yaml, unless `.env` names the files in COMPOSE_FILE. */
  files: string[];
  mcpPort: number;
  adminPort: number;
}

let engine: SecondEngine | undefined;
let distDir: string | undefined;
const stacks: Stack[] = [];
let firstEngineBefore: string[] = [];

async function whatIsMissing(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'a second Docker engine needs root';
  for (const binary of ['docker-compose', 'dockerd']) {
    const found = await run('sh', ['-c', `command -v ${binary}`]).then(
      () => true,
      () => false,
    );
    if (!found) return `${binary} is not installed (.ci/run installs it)`;
  }
  return undefined;
}

/** `docker-compose -f compose.yaml -p NAME ARGS` in the stack's folder, against the second engine. */
async function compose(stack: Stack, args: string[], input?: string): Promise<string> {
  const child = execFile(
    'docker-compose',
    [
      ...stack.files.flatMap((file) => ['-f', file]),
      '--project-directory',
      stack.dir,
      '-p',
      stack.name,
      ...args,
    ],
    {
      cwd: stack.dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', DOCKER_HOST: engine!.dockerHost },
      maxBuffer: 32 * 1048576,
      timeout: 240_000,
    },
  );
  if (input !== undefined) child.stdin?.end(input);
  else child.stdin?.end();
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) {
    throw new Error(`docker-compose ${args.join(' ')} exited ${code}:\n${stderr}\n${stdout}`);
  }
  return stdout;
}

/** A project folder with the `.env` the docs tell an operator to write. */
async function newStack(
  suffix: string,
  extraEnv: Record<string, string> = {},
  overrides: string[] = [],
): Promise<Stack> {
  const stack: Stack = {
    name: `mcphost-ci-${runId}-${suffix}`,
    dir: await mkdtemp(join(tmpdir(), `mcphost-stack-${suffix}-`)),
    files: overrides.length === 0 ? [COMPOSE_FILE] : [],
    mcpPort: await freePort(),
    adminPort: await freePort(),
  };
  const env = {
    POSTGRES_PASSWORD: randomBytes(16).toString('hex'),
    DOCKER_GID: String(statSync(engine!.socketPath).gid),
    BASE_DOMAIN: 'localhost',
    PUBLIC_URL_TEMPLATE: `http://{subdomain}.localhost:${stack.mcpPort}`,
    MCPHOST_PUBLISH: `127.0.0.1:${stack.mcpPort}`,
    MCPHOST_ADMIN_PUBLISH: `127.0.0.1:${stack.adminPort}`,
    // The only override of the deployment itself: which engine's socket.
    DOCKER_SOCKET: engine!.socketPath,
    // The credentials go in .env, unless the stack takes them as Docker secrets.
    ...(overrides.length === 0
      ? { ADMIN_TOKEN, MASTER_KEY }
      : {
          // As the docs say: every later command then uses the overrides too.
          COMPOSE_FILE: [COMPOSE_FILE, ...overrides.map((file) => join(REPO_ROOT, file))].join(':'),
        }),
    ...extraEnv,
  };
  await writeFile(
    join(stack.dir, '.env'),
    Object.entries(env)
      .map(([key, value]) => `${key}=${value}\n`)
      .join(''),
    { mode: 0o600 },
  );
  stacks.push(stack);
  return stack;
}

/** Admin API call on the stack's published admin port. */
async function admin(
  stack: Stack,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const response = await fetch(`http://127.0.0.1:${stack.adminPort}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

/** Polls /readyz until 200, failing with the control plane's log when it never comes. */
async function waitUntilReady(stack: Stack, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`http://127.0.0.1:${stack.adminPort}/readyz`, {
        signal: AbortSignal.timeout(3_000),
      });
      last = `${response.status} ${await response.text()}`;
      if (response.ok) return;
    } catch (error) {
      last = String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  const logs = await compose(stack, ['logs', '--no-color', '--tail', '80']).catch(String);
  throw new Error(`${stack.name} never became ready (last: ${last}):\n${logs}`);
}

/** Calls the `greet` tool of server `kept` over MCP with the official SDK client. */
async function callGreet(stack: Stack): Promise<string> {
  const { client } = await connectSdkSession(new URL(`http://kept.localhost:${stack.mcpPort}/mcp`));
  try {
    const result = await client.callTool({ name: 'greet', arguments: {} });
    expect(result.isError ?? false).toBe(false);
    return JSON.stringify(result.content);
  } finally {
    await client.close();
  }
}

/** Runner containers (running) of a stack on the second engine: its plane name is its project. */
async function runnersOf(stack: Stack): Promise<Dockerode.ContainerInfo[]> {
  return engine!.docker.listContainers({
    filters: { label: [`mcphost.plane=${stack.name}`] },
  });
}

/** Names of everything on the first engine, to show this test left it alone. */
async function firstEngineInventory(): Promise<string[]> {
  const docker = new Dockerode();
  const [containers, networks, volumes] = await Promise.all([
    docker.listContainers({ all: true }),
    docker.listNetworks(),
    docker.listVolumes(),
  ]);
  return [
    ...containers.filter((c) => c.Labels['com.docker.compose.project']?.includes(runId)),
    ...networks.filter((n) => n.Name.includes(runId)),
    ...(volumes.Volumes ?? []).filter((v) => v.Name.includes(runId)),
  ].map((item) => JSON.stringify(item).slice(0, 120));
}

describe.skipIf(missing !== undefined)(`compose.yaml on a second Docker engine`, () => {
  beforeAll(async () => {
    firstEngineBefore = await firstEngineInventory();
    engine = await startSecondEngine();
    distDir = await buildOutputInTemp();
    const [image] = await Promise.all([
      buildControlPlaneImage({ docker: engine.docker, distDir }),
      buildPostgresFixtureImage(engine.docker),
    ]);
    expect(image).toBe('mcphost:latest');
    // As on a host the image was moved to (docker save | docker load): no local node
    // base beside it. The control plane must rebuild it, and the runner image, itself.
    await engine.docker.getImage(localNodeBaseTag(process.version)).remove();
  }, 600_000);

  afterAll(async () => {
    for (const stack of stacks) {
      if (engine !== undefined)
        await compose(stack, ['down', '-v', '--timeout', '20']).catch(() => {});
      await rm(stack.dir, { recursive: true, force: true });
    }
    await engine?.stop();
    if (distDir !== undefined) await rm(distDir, { recursive: true, force: true });
  }, 180_000);

  it('comes up ready, and a tool that reads a secret answers over MCP from a runner container', async () => {
    const stack = await newStack('a');
    await compose(stack, ['up', '-d']);
    await waitUntilReady(stack);

    expect((await admin(stack, 'POST', '/api/servers', { subdomain: 'kept' })).status).toBe(201);
    expect(
      (await admin(stack, 'PUT', '/api/servers/kept/secrets/GREETING', { value: SECRET })).status,
    ).toBe(200);
    const tool = await admin(stack, 'PUT', '/api/servers/kept/tools/greet', {
      description: 'reads a secret',
      secrets: ['GREETING'],
      code: 'return env.GREETING;',
    });
    expect(tool.status, JSON.stringify(tool.body)).toBe(201);

    expect(await callGreet(stack)).toContain(SECRET);
    // No registry and no node base on this engine: it built both from its own node.
    const log = await compose(stack, ['logs', '--no-color', 'control-plane']);
    expect(log).toMatch(/building mcphost-node-base:\S+ from \/usr\/local\/bin\/node/);
    // The runner is a sibling on the same engine, labelled with the stack's own plane name.
    expect((await runnersOf(stack)).length).toBeGreaterThan(0);
    // The MCP port serves no admin API: that is on its own port.
    const adminOnMcpPort = await fetch(`http://127.0.0.1:${stack.mcpPort}/api/servers`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(adminOnMcpPort.status).not.toBe(200);
  }, 400_000);

  it('keeps servers and secrets across down and up', async () => {
    const stack = stacks[0]!;
    await compose(stack, ['down', '--timeout', '40']);
    // A graceful stop removes its runners: nothing of the stack runs.
    expect(await runnersOf(stack)).toEqual([]);
    await compose(stack, ['up', '-d']);
    await waitUntilReady(stack);
    expect(await callGreet(stack)).toContain(SECRET);
  }, 400_000);

  it('backs up with the documented command and restores into a second stack beside it', async () => {
    const source = stacks[0]!;
    const exec = (args: string[]) => compose(source, ['exec', '-T', 'control-plane', ...args]);
    const backup = await exec(['node', 'dist/scripts/backup.js', '-']);
    expect(JSON.parse(backup)).toHaveProperty('tables.servers');

    // A fresh stack given the old key and the admin token as Docker secrets
    // (compose.secrets.yaml, files readable by the service's uid only): its
    // database first, then the restore (the control plane not started yet),
    // then the whole stack.
    const target = await newStack('b', {}, ['compose.secrets.yaml']);
    await mkdir(join(target.dir, 'secrets'), { mode: 0o700 });
    for (const [name, value] of [
      ['admin_token', ADMIN_TOKEN],
      ['master_key', MASTER_KEY],
    ] as const) {
      const file = join(target.dir, 'secrets', name);
      await writeFile(file, `${value}\n`, { mode: 0o400 });
      await chown(file, CONTROL_PLANE_UID, 0);
    }
    const runnersBefore = (await runnersOf(source)).map((container) => container.Id);
    await compose(target, ['up', '-d', 'postgres']);
    const restored = await compose(
      target,
      [
        'run',
        '--rm',
        '-T',
        '--entrypoint',
        'node',
        'control-plane',
        'dist/scripts/restore.js',
        '-',
      ],
      backup,
    );
    expect(restored).toMatch(/Restored 1 server\(s\), 1 tool\(s\), 1 secret\(s\) from stdin/);
    await compose(target, ['up', '-d']);
    await waitUntilReady(target);
    // The token and the key came from the secret files: the admin API takes
    // the token, and the restored secret decrypts.
    expect((await admin(target, 'GET', '/api/servers')).status).toBe(200);
    expect(await callGreet(target)).toContain(SECRET);

    // Two stacks on one engine, each with its own plane name: starting the
    // second reaped nothing of the first.
    const runnersAfter = (await runnersOf(source)).map((container) => container.Id);
    expect(runnersAfter).toEqual(expect.arrayContaining(runnersBefore));
    expect((await runnersOf(target)).length).toBeGreaterThan(0);
    const targetLog = await compose(target, ['logs', '--no-color', 'control-plane']);
    expect(targetLog).not.toMatch(/another control plane with PLANE_NAME/);
    expect(targetLog).toContain(`"planeName":"${target.name}"`);
  }, 400_000);

  it('goes down leaving nothing behind, and never touched the first engine', async () => {
    for (const stack of stacks) await compose(stack, ['down', '-v', '--timeout', '40']);
    const left = await engine!.docker.listContainers({ all: true });
    expect(left.map((container) => container.Names.join(','))).toEqual([]);
    expect(await firstEngineInventory()).toEqual(firstEngineBefore);
    const log = await readFile(engine!.logPath, 'utf8').catch(() => '');
    expect(log).not.toMatch(/level=fatal/);
  }, 240_000);
});

if (missing !== undefined) {
  describe('compose.yaml on a second Docker engine', () => {
    it.skip(`skipped: ${missing}`, () => {});
  });
}
