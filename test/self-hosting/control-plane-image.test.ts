/**
 * The offline control plane image (scripts/control-plane-image.ts) against
 * the real engine: it builds from a build output on the local node base, and
 * the container it makes serves /healthz, runs as a non-root uid, keeps its
 * code read-only and writes only to the data volume.
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { PassThrough } from 'node:stream';
import Dockerode from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildControlPlaneImage, CONTROL_PLANE_USER } from '../../scripts/control-plane-image.js';
import { freePort } from '../support/loopback-server.js';
import { buildOutputInTemp } from './build-output.js';

const docker = new Dockerode();
const runId = `${process.pid}-${randomBytes(4).toString('hex')}`;
const tag = `mcphost-selfhost-test:${runId}`;
const volumeName = `mcphost-selfhost-test-data-${runId}`;
const label = { 'mcphost.test': `self-hosting-${runId}` };

let distDir: string | undefined;
let container: Dockerode.Container | undefined;
let port = 0;

/** Runs `command` inside the test container; returns its exit code and stdout+stderr. */
async function execIn(command: string[]): Promise<{ exitCode: number; output: string }> {
  if (container === undefined) throw new Error('no container');
  const exec = await container.exec({ Cmd: command, AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({ hijack: true, stdin: false });
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on('data', (chunk: Buffer) => chunks.push(chunk));
  docker.modem.demuxStream(stream, sink, sink);
  await new Promise<void>((resolve, reject) => {
    stream.on('end', resolve);
    stream.on('error', reject);
  });
  const { ExitCode } = await exec.inspect();
  return { exitCode: ExitCode ?? -1, output: Buffer.concat(chunks).toString() };
}

/** Polls GET /healthz until it answers or `timeoutMs` passes. */
async function waitForHealthz(timeoutMs: number): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      return await fetch(`http://127.0.0.1:${port}/healthz`, {
        signal: AbortSignal.timeout(2_000),
      });
    } catch (error) {
      lastError = error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  const logs =
    container === undefined
      ? ''
      : (await container.logs({ stdout: true, stderr: true })).toString();
  throw new Error(
    `healthz did not answer within ${timeoutMs} ms (${String(lastError)}); logs:\n${logs}`,
  );
}

beforeAll(async () => {
  distDir = await buildOutputInTemp();
  await buildControlPlaneImage({ docker, distDir, tag });
  port = await freePort(); // the container shares the host's network namespace
  await docker.createVolume({ Name: volumeName, Labels: label });
  container = await docker.createContainer({
    Image: tag,
    name: `mcphost-selfhost-test-${runId}`,
    Labels: label,
    // No socket in this test: the process driver needs none.
    Env: [
      'SANDBOX_DRIVER=process',
      `PORT=${port}`,
      'LISTEN_HOST=127.0.0.1',
      `ADMIN_TOKEN=${'a'.repeat(32)}`,
    ],
    HostConfig: {
      // dockerd runs with --bridge=none here: host networking is the only way to reach it, over loopback.
      NetworkMode: 'host',
      ReadonlyRootfs: true,
      Tmpfs: { '/tmp': 'rw,size=16m' },
      SecurityOpt: ['no-new-privileges:true'],
      CapDrop: ['ALL'],
      Binds: [`${volumeName}:/data`],
    },
  });
  await container.start();
}, 240_000);

afterAll(async () => {
  await container?.remove({ force: true }).catch(() => {});
  await docker
    .getVolume(volumeName)
    .remove()
    .catch(() => {});
  await docker
    .getImage(tag)
    .remove({ force: true })
    .catch(() => {});
  if (distDir !== undefined) await rm(distDir, { recursive: true, force: true });
});

describe('the offline control plane image', () => {
  it('declares the non-root user, the entry point, port 8080, a health check and the data volume', async () => {
    const { Config } = (await docker.getImage(tag).inspect()) as {
      Config: {
        User: string;
        Entrypoint: string[];
        ExposedPorts: Record<string, unknown>;
        Healthcheck?: { Test: string[] };
        Volumes: Record<string, unknown>;
        Env: string[];
      };
    };
    expect(Config.User).toBe(CONTROL_PLANE_USER);
    expect(Config.Entrypoint).toEqual(['node', 'dist/control-plane/main.js']);
    expect(Object.keys(Config.ExposedPorts)).toEqual(['8080/tcp']);
    expect(Config.Healthcheck?.Test[0]).toBe('CMD');
    expect(Config.Healthcheck?.Test.join(' ')).toContain('/healthz');
    expect(Object.keys(Config.Volumes)).toEqual(['/data']);
    expect(Config.Env).toContain('DATA_DIR=/data');
  });

  it('starts and answers GET /healthz', async () => {
    const response = await waitForHealthz(60_000);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: 'ok' });
  });

  it('runs the service as a non-root uid that can write only the data volume', async () => {
    await waitForHealthz(60_000);
    const status = await execIn([
      'node',
      '-e',
      "process.stdout.write(require('fs').readFileSync('/proc/1/status','utf8'))",
    ]);
    const uids = /^Uid:\s+(\d+)\s+(\d+)/m.exec(status.output);
    expect(uids?.slice(1)).toEqual([
      CONTROL_PLANE_USER.split(':')[0],
      CONTROL_PLANE_USER.split(':')[0],
    ]);

    // The store and the generated master key landed in the volume.
    const data = await execIn([
      'node',
      '-e',
      "process.stdout.write(require('fs').readdirSync('/data').join(','))",
    ]);
    expect(data.output.split(',')).toContain('master.key');

    const writeCode = await execIn([
      'node',
      '-e',
      "require('fs').writeFileSync('/app/dist/evil.js','')",
    ]);
    expect(writeCode.exitCode).not.toBe(0);
    expect(writeCode.output).toMatch(/EROFS|EACCES/);
  });
});

describe('buildControlPlaneImage input checks', () => {
  it('refuses a build output without the entry point, naming the file and the fix', async () => {
    const error = await buildControlPlaneImage({
      docker,
      distDir: '/nonexistent-mcphost-dist',
      tag,
    }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'ERR_IMAGE_BUILD' });
    expect((error as Error).message).toBe(
      `cannot build ${tag}: /nonexistent-mcphost-dist/control-plane/main.js is missing (run npm run build first)`,
    );
  });

  it('treats a malformed tag as misuse (TypeError)', async () => {
    await expect(buildControlPlaneImage({ docker, tag: 'Not A Tag' })).rejects.toThrow(TypeError);
  });
});
