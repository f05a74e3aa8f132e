/**
 * The local base holding the pinned LTS node, for real: the platform package
 * from the npm registry (once; then the cache folder the runner image build
 * shares), built into `mcphost-node-base:<version>` with the libraries `ldd`
 * finds, and run in a container. A runner image built on the local base holds
 * the node the choice names: the LTS one whenever the host's is end of life.
 */
import { randomUUID } from 'node:crypto';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Dockerode from 'dockerode';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureRunnerImage } from '../../control-plane/image-build/ensure-runner-image.js';
import { ensureLocalNodeBase } from '../../control-plane/image-build/local-node-base.js';
import { chooseLocalNode, fetchNodeRelease } from '../../control-plane/image-build/lts-node.js';
import { PINNED_LTS_NODE, isEndOfLife } from '../../control-plane/image-build/node-lines.js';
import { DockerSandbox } from '../../control-plane/sandbox/docker/docker-sandbox.js';
import { ECHO_HARNESS_DIR, smallSpec, stdoutUntilExit, uniquePlaneName } from './helpers.js';

const docker = new Dockerode();
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup().catch(() => {});
});

/** What `node <args>` prints in a container of `image`, as its non-root user. */
async function nodeIn(image: string, args: string[]): Promise<string> {
  const driver = new DockerSandbox({ image, planeName: uniquePlaneName('lts-node') });
  try {
    return (
      await stdoutUntilExit(await driver.start(smallSpec({ command: ['node', ...args] })))
    ).trim();
  } finally {
    await driver.close();
  }
}

describe('the local base on the pinned LTS node', () => {
  it('builds from the npm platform package and runs it in a container', async () => {
    const lts = await fetchNodeRelease();
    expect(lts.version).toBe(`v${PINNED_LTS_NODE.version}`);
    const base = await ensureLocalNodeBase({ docker, nodePath: lts.path });
    expect(base).toBe(`mcphost-node-base:${PINNED_LTS_NODE.version}`);
    expect((await docker.getImage(base).inspect()).Config.Labels?.['mcphost.node']).toBe(
      lts.version,
    );
    // It runs with nothing but the libraries the scratch image carries.
    expect(await nodeIn(base, ['--version'])).toBe(lts.version);
  }, 300_000);

  it('is what a runner image on the local base runs when the host is end of life', async () => {
    const harnessDir = await mkdtemp(join(tmpdir(), 'mcphost-test-harness-'));
    cleanups.push(() => rm(harnessDir, { recursive: true, force: true }));
    // A harness no other test shares, so this test builds its own runner image.
    await writeFile(join(harnessDir, 'harness.mjs'), `// ${randomUUID()}\n`);
    for (const file of ['lodash.min.js', 'context-scripts.json'])
      await copyFile(join(ECHO_HARNESS_DIR, file), join(harnessDir, file));
    const lines: string[] = [];
    const tag = await ensureRunnerImage({
      base: 'local',
      harnessDir,
      log: (line) => lines.push(line),
    });
    cleanups.push(() => docker.getImage(tag).remove({ force: true }));

    const chosen = await chooseLocalNode();
    if (isEndOfLife(process.version, new Date()))
      expect(chosen.version).toBe(`v${PINNED_LTS_NODE.version}`);
    expect(await nodeIn(tag, ['--version'])).toBe(chosen.version);
    expect((await docker.getImage(tag).inspect()).Config.Labels?.['mcphost.runner-base']).toBe(
      `local:${chosen.version}:${process.arch}`,
    );
    // The build says which node the base holds, and why.
    expect(lines.join('\n')).toContain(`local base node ${chosen.version} (${chosen.path}): `);
  }, 300_000);
});
