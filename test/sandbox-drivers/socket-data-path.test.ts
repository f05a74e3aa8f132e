/**
 * The local data path (RUNNER_SOCKET_DIR) with real containers: what a
 * container can do in the socket's directory (connect once, nothing else),
 * that the protocol leaves the attach stream, that the directory goes with
 * the container, that runsc containers keep the attach stream, and that a
 * control plane started with it serves MCP calls.
 */
import Dockerode from 'dockerode';
import { chmod, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerSandbox } from '../../control-plane/sandbox/docker/docker-sandbox.js';
import { probeSocketDataPath } from '../../control-plane/sandbox/docker/socket-probe.js';
import { ensureRunnerImage } from '../../control-plane/image-build/ensure-runner-image.js';
import { loadConfig } from '../../control-plane/config.js';
import { createSandboxDriver } from '../../control-plane/sandbox/create-sandbox.js';
import { chooseSocketDir } from '../../control-plane/sandbox/docker/socket-data-path.js';
import type { PlaneOwner } from '../../control-plane/sandbox/docker/plane-owner.js';
import { createLogger } from '../../control-plane/logger.js';
import { startTestControlPlane, type TestControlPlane } from '../support/control-plane.js';
import { RawMcpSession } from '../../bench/raw-mcp-session.js';
import { collectLines, smallSpec, stdoutUntilExit, uniquePlaneName } from './helpers.js';

let image: string;
let socketDir: string;
const drivers: DockerSandbox[] = [];

beforeAll(async () => {
  image = process.env.MCPHOST_TEST_RUNNER_IMAGE ?? (await ensureRunnerImage({ base: 'local' }));
  socketDir = path.join(await mkdtemp(path.join(tmpdir(), 'mcphost-dp-')), 'run');
});

afterAll(async () => {
  await Promise.all(drivers.map((driver) => driver.close()));
  await rm(path.dirname(socketDir), { recursive: true, force: true });
});

function socketDriver(): DockerSandbox {
  const driver = new DockerSandbox({
    image,
    planeName: uniquePlaneName('socket'),
    socketDir,
    killTimeoutMs: 5_000,
  });
  drivers.push(driver);
  return driver;
}

/**
 * Connects to the channel (as the harness would), then tries everything a
 * tool that reached the directory might, and reports each outcome over the
 * channel as one JSON line.
 */
const PROBING_PROGRAM = `
const fs = require('fs'), net = require('net');
const arg = process.argv.find((a) => a.startsWith('--channel='));
const channel = net.connect(arg.slice(10));
// Tool code runs only after the host has read 'ready', so after it took this connection.
channel.on('connect', () => setTimeout(attempts, 300));
function attempts() {
  const outcome = {};
  const attempt = (name, fn) => { try { fn(); outcome[name] = 'ok'; } catch (e) { outcome[name] = e.code; } };
  attempt('create', () => fs.writeFileSync('/run/mcphost/x', 'x'));
  attempt('mkdir', () => fs.mkdirSync('/run/mcphost/d'));
  attempt('symlink', () => fs.symlinkSync('/etc/passwd', '/run/mcphost/l'));
  attempt('unlink', () => fs.unlinkSync('/run/mcphost/s'));
  attempt('list', () => fs.readdirSync('/run/mcphost'));
  const second = net.connect('/run/mcphost/s');
  second.on('connect', () => { outcome.secondConnect = 'ok'; done(); });
  second.on('error', (e) => { outcome.secondConnect = e.code; done(); });
  function done() { channel.end(JSON.stringify(outcome) + '\\n'); }
}
`;

describe('the local data path', () => {
  it('lets the container connect once and do nothing else in the directory', async () => {
    const driver = socketDriver();
    const instance = await driver.start(
      smallSpec({ command: ['node', '-e', PROBING_PROGRAM, '--'] }),
    );
    const output = await stdoutUntilExit(instance);
    expect(JSON.parse(output.trim())).toEqual({
      create: 'EROFS',
      mkdir: 'EROFS',
      symlink: 'EROFS',
      unlink: 'EROFS',
      list: 'EACCES',
      secondConnect: 'ENOENT',
    });
  });

  it('carries the protocol over the socket, not the attach stream, and removes the directory at exit', async () => {
    const driver = socketDriver();
    const instance = await driver.start(smallSpec());
    const info = await driver.client.inspect(instance.id);
    const mounts = info?.Mounts ?? [];
    expect(mounts).toHaveLength(1);
    expect(mounts[0]).toMatchObject({ Destination: '/run/mcphost', RW: false });
    expect(info?.Config.OpenStdin).toBe(false);
    expect(info?.Config.Entrypoint).toContain('--channel=/run/mcphost/s');
    const lines = collectLines(instance);
    expect(JSON.parse(await lines.next())).toMatchObject({ type: 'ready' });
    const hostDir = mounts[0]!.Source;
    expect(await readdir(hostDir)).toEqual([]); // the name went with the listener
    await instance.kill();
    await instance.exited;
    await expect(readdir(hostDir)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('keeps the attach stream for runsc containers', async () => {
    const driver = socketDriver();
    if (!(await driver.runtimes()).includes('runsc')) {
      // .ci/run registers runsc; without it there is nothing to check here.
      return;
    }
    const instance = await driver.start(smallSpec({ runtime: 'runsc' }));
    const info = await driver.client.inspect(instance.id);
    expect(info?.Mounts ?? []).toEqual([]);
    expect(info?.Config.OpenStdin).toBe(true);
    const lines = collectLines(instance);
    expect(JSON.parse(await lines.next())).toMatchObject({ type: 'ready' });
    await instance.kill();
  });

  it('fails a start it cannot make a socket for without naming the host path to the caller', async () => {
    const notADirectory = path.join(path.dirname(socketDir), 'file');
    await writeFile(notADirectory, '');
    const warnings: string[] = [];
    const driver = new DockerSandbox({
      image,
      planeName: uniquePlaneName('socket-broken'),
      socketDir: notADirectory,
      warn: (message) => warnings.push(message),
    });
    drivers.push(driver);
    const failure = await driver.start(smallSpec()).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'ERR_SANDBOX_UNAVAILABLE' });
    expect((failure as Error).message).not.toContain(notADirectory);
    expect(warnings.join('\n')).toContain(notADirectory);
  });

  it('passes the start-up probe, and a killed container fails only its own instance', async () => {
    const driver = socketDriver();
    await probeSocketDataPath(driver, 20_000);
    const a = await driver.start(smallSpec());
    const b = await driver.start(smallSpec());
    const linesB = collectLines(b);
    expect(JSON.parse(await linesB.next())).toMatchObject({ type: 'ready' });
    await driver.client.kill(a.id);
    expect((await a.exited).exitCode).not.toBe(0);
    b.write('{"type":"cancel","invocation":"none"}\n');
    // b is alive and answers for itself: a cancel of an unknown invocation is its protocol fault (exit 70).
    expect((await b.exited).exitCode).toBe(70);
  });
});

describe('RUNNER_SOCKET_DIR=auto (the default)', () => {
  const log = createLogger('silent');
  const host = { host: 'h', pid: 1 } as unknown as PlaneOwner;

  it('chooses DATA_DIR/run on the engine host, nothing in a container or for a long path, and a named directory as named', () => {
    expect(
      chooseSocketDir({ runnerSocketDir: 'auto', dataDir: '/var/lib/mcphost' }, host, log),
    ).toEqual({
      dir: '/var/lib/mcphost/run',
      explicit: false,
    });
    expect(
      chooseSocketDir(
        { runnerSocketDir: 'auto', dataDir: '/data' },
        { ...host, container: 'c0ffee' },
        log,
      ),
    ).toBeUndefined();
    expect(
      chooseSocketDir({ runnerSocketDir: 'auto', dataDir: `/${'d'.repeat(80)}` }, host, log),
    ).toBeUndefined();
    expect(
      chooseSocketDir({ runnerSocketDir: 'off', dataDir: '/data' }, host, log),
    ).toBeUndefined();
    expect(chooseSocketDir({ runnerSocketDir: '/run/x', dataDir: '/data' }, host, log)).toEqual({
      dir: '/run/x',
      explicit: true,
    });
  });

  it('uses sockets in DATA_DIR/run, and keeps the attach stream when that directory cannot be used', async () => {
    const serving = await startTestControlPlane({ RATE_LIMIT_PER_MINUTE: '0' });
    const dataDir = await mkdtemp(path.join(tmpdir(), 'mcphost-auto-'));
    // Someone else's kind of directory: refused, never changed, and the plane still serves.
    await mkdir(path.join(dataDir, 'run'), { mode: 0o755 });
    await chmod(path.join(dataDir, 'run'), 0o755);
    const fallback = await startTestControlPlane({ DATA_DIR: dataDir, RATE_LIMIT_PER_MINUTE: '0' });
    try {
      for (const [plane, socket] of [
        [serving, true],
        [fallback, false],
      ] as const) {
        await plane.admin('POST', '/api/servers', { subdomain: 'auto' });
        await plane.admin('PUT', '/api/servers/auto/tools/one', {
          description: 'one',
          code: 'return 1;',
        });
        const session = new RawMcpSession(
          `http://127.0.0.1:${plane.port}/mcp`,
          `auto.localhost:${plane.port}`,
        );
        await session.open();
        await session.call('one');
        const docker = new Dockerode();
        const containers = await docker.listContainers({
          filters: { label: [`mcphost.plane=${plane.config.planeName}`] },
        });
        expect(containers.length).toBeGreaterThan(0);
        for (const container of containers) {
          const mounts = (await docker.getContainer(container.Id).inspect()).Mounts;
          expect(mounts.some((mount) => mount.Destination === '/run/mcphost')).toBe(socket);
        }
      }
      expect((await stat(path.join(dataDir, 'run'))).mode & 0o777).toBe(0o755);
    } finally {
      await serving.close();
      await fallback.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('a control plane with RUNNER_SOCKET_DIR', () => {
  let plane: TestControlPlane;

  beforeAll(async () => {
    plane = await startTestControlPlane({
      RUNNER_SOCKET_DIR: socketDir,
      RATE_LIMIT_PER_MINUTE: '0',
    });
  });

  afterAll(async () => {
    await plane?.close();
  });

  it('serves MCP tool calls through runners on the socket', async () => {
    await plane.admin('POST', '/api/servers', { subdomain: 'sock' });
    const saved = await plane.admin('PUT', '/api/servers/sock/tools/add', {
      description: 'adds',
      code: 'console.log("adding"); return params.a + 1;',
      parameters: [{ name: 'a', type: 'number', required: true }],
    });
    expect(saved.status).toBeLessThan(300);
    const session = new RawMcpSession(
      `http://127.0.0.1:${plane.port}/mcp`,
      `sock.localhost:${plane.port}`,
    );
    await session.open();
    for (let i = 0; i < 20; i++) {
      const text = await session.request('tools/call', { name: 'add', arguments: { a: i } });
      expect(text).toContain(`${i + 1}`);
    }
    const pools = (await plane.admin('GET', '/api/pools')).body.pools as { server?: string }[];
    expect(pools.some((pool) => pool.server === 'sock')).toBe(true);
  });

  it('is refused with DOCKER_ENGINES, whose engines may be anywhere', async () => {
    const config = loadConfig(
      {
        ADMIN_TOKEN: 'x'.repeat(32),
        MASTER_KEY: Buffer.alloc(32, 7).toString('base64'),
        DOCKER_ENGINES: 'unix:///var/run/docker.sock',
        RUNNER_SOCKET_DIR: socketDir,
      },
      '/nonexistent/.env',
    );
    await expect(createSandboxDriver(config, createLogger('silent'))).rejects.toMatchObject({
      code: 'ERR_CONFIG',
      message: expect.stringMatching(/works with the one engine of DOCKER_HOST/),
    });
  });
});
