/**
 * The runner image: built offline from the host's own node (or the pinned
 * LTS node when the host's line is past its end of life), content-addressed,
 * reused without rebuilding, runnable as the non-root user; build failures
 * surface as ERR_IMAGE_BUILD with the engine's message.
 */
import { randomUUID } from 'node:crypto';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Dockerode from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSetting } from '../../control-plane/config.js';
import { packBuildContext } from '../../control-plane/image-build/build-context.js';
import { ensureRunnerImage } from '../../control-plane/image-build/ensure-runner-image.js';
import { buildImage } from '../../control-plane/image-build/image-builds.js';
import { chooseLocalNode } from '../../control-plane/image-build/lts-node.js';
import { parseLddOutput } from '../../control-plane/image-build/local-node-base.js';
import { DockerSandbox } from '../../control-plane/sandbox/docker/docker-sandbox.js';
import { ECHO_HARNESS_DIR, smallSpec, stdoutUntilExit, uniquePlaneName } from './helpers.js';

const docker = new Dockerode();
const builtTags = new Set<string>();
const tempDirs: string[] = [];

/** A harness folder whose content no other test shares, so its image is built by this test. */
async function uniqueHarnessDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mcphost-test-harness-'));
  tempDirs.push(dir);
  await writeFile(join(dir, 'harness.mjs'), `// ${randomUUID()}\nconsole.log('harness up');\n`);
  await copyFile(join(ECHO_HARNESS_DIR, 'lodash.min.js'), join(dir, 'lodash.min.js'));
  await copyFile(join(ECHO_HARNESS_DIR, 'context-scripts.json'), join(dir, 'context-scripts.json'));
  return dir;
}

let harnessDir: string;
let tag: string;

beforeAll(async () => {
  harnessDir = await uniqueHarnessDir();
  tag = await ensureRunnerImage({ base: 'local', harnessDir });
  builtTags.add(tag);
});

afterAll(async () => {
  for (const built of builtTags)
    await docker
      .getImage(built)
      .remove({ force: true })
      .catch(() => {});
  await Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('ensureRunnerImage', () => {
  it('builds offline on the local base, with the harness entrypoint and the non-root user', async () => {
    expect(tag).toMatch(/^mcphost-runner:[0-9a-f]{16}$/);
    const info = await docker.getImage(tag).inspect();
    expect(info.Config.Entrypoint).toEqual([
      'node',
      '--experimental-vm-modules',
      '/opt/mcphost/harness.mjs',
    ]);
    expect(info.Config.User).toBe('10001:10001');
    expect(info.Config.WorkingDir).toBe('/tmp');
    expect(info.Config.Labels?.['mcphost.runner-base']).toBe(
      `local:${(await chooseLocalNode()).version}:${process.arch}`,
    );
  });

  it('runs node in it as the non-root user, and the harness by default', async () => {
    const driver = new DockerSandbox({ image: tag, planeName: uniquePlaneName('image') });
    try {
      const runnerNode = (await chooseLocalNode()).version;
      const probe =
        'console.log(process.version, process.getuid(), require("os").userInfo().username)';
      const node = await driver.start(smallSpec({ command: ['node', '-e', probe] }));
      expect((await stdoutUntilExit(node)).trim()).toBe(`${runnerNode} 10001 mcphost`);
      const version = await driver.start(smallSpec({ command: ['node', '--version'] }));
      expect((await stdoutUntilExit(version)).trim()).toBe(runnerNode);
      const harness = await driver.start(smallSpec());
      expect(await stdoutUntilExit(harness)).toBe('harness up\n');
    } finally {
      await driver.close();
    }
  });

  it('reuses an unchanged image at once and names a changed harness differently', async () => {
    const steps: string[] = [];
    expect(
      await ensureRunnerImage({ base: 'local', harnessDir, log: (line) => steps.push(line) }),
    ).toBe(tag);
    expect(steps).toEqual([]); // found by its tag: nothing built, nothing pulled
    // MCPHOST_RUNNER_BASE=local, RUNNER_BASE's former name, is the same choice as base: 'local'.
    const base = readSetting('runnerBase', { MCPHOST_RUNNER_BASE: 'local' });
    expect(await ensureRunnerImage({ base, harnessDir })).toBe(tag);
  });

  it('auto falls back to the local base when the registry does not answer, and says why', async () => {
    const dir = await uniqueHarnessDir();
    const lines: string[] = [];
    const built = await ensureRunnerImage({
      base: 'auto',
      // Loopback only: nothing listens on port 1, so the pull fails at once.
      nodeImage: `127.0.0.1:1/mcphost-absent/node:${randomUUID().slice(0, 8)}`,
      registryTimeoutMs: 5_000,
      harnessDir: dir,
      log: (line) => lines.push(line),
    });
    builtTags.add(built);
    expect(built).not.toBe(tag);
    expect(lines.join('\n')).toMatch(
      /registry unusable \(pulling 127\.0\.0\.1:1\/.* failed: .*\); building on the local base \(local:v\S+\)/,
    );
    expect((await docker.getImage(built).inspect()).Config.Labels?.['mcphost.runner-base']).toMatch(
      /^local:/,
    );
  });

  it('fails with ERR_IMAGE_BUILD naming the missing harness bundle', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'mcphost-no-harness-'));
    tempDirs.push(empty);
    await expect(ensureRunnerImage({ base: 'local', harnessDir: empty })).rejects.toMatchObject({
      code: 'ERR_IMAGE_BUILD',
      message: expect.stringContaining(
        `the harness bundle is missing at ${join(empty, 'harness.mjs')}`,
      ),
    });
  });

  it('takes the base from its caller only: none, or a bad one, is a TypeError', async () => {
    // RUNNER_BASE is read (and a bad value refused) by the configuration table: config.unit.test.ts.
    await expect(ensureRunnerImage({ harnessDir } as never)).rejects.toThrow(TypeError);
    await expect(ensureRunnerImage({ base: 'cloud' as never, harnessDir })).rejects.toThrow(
      TypeError,
    );
  });
});

describe('image builds', () => {
  it("surfaces the engine's build error as ERR_IMAGE_BUILD", async () => {
    const context = await packBuildContext([
      { name: 'Dockerfile', content: 'FROM scratch\nCOPY no-such-file /\n' },
    ]);
    const failedTag = `mcphost-test-broken:${randomUUID().slice(0, 8)}`;
    await expect(buildImage(docker, context, { tag: failedTag })).rejects.toMatchObject({
      code: 'ERR_IMAGE_BUILD',
      message: expect.stringContaining('no-such-file'),
    });
  });

  it('reads library paths out of ldd output', () => {
    const output = [
      '\tlinux-vdso.so.1 (0x00007ffd)',
      '\tlibstdc++.so.6 => /lib/x86_64-linux-gnu/libstdc++.so.6 (0x00007f23d7800000)',
      '\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f23d761e000)',
      '\t/lib64/ld-linux-x86-64.so.2 (0x00007f23d7bb2000)',
    ].join('\n');
    expect(parseLddOutput(output)).toEqual([
      '/lib/x86_64-linux-gnu/libstdc++.so.6',
      '/lib/x86_64-linux-gnu/libc.so.6',
      '/lib64/ld-linux-x86-64.so.2',
    ]);
    expect(() => parseLddOutput('\tlibfoo.so => not found')).toThrow(/ldd cannot find a library/);
  });
});
