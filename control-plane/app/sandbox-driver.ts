/**
 * Picks and prepares the sandbox driver: Docker (the runner image built when
 * missing, offline from the host's node when no registry answers), or local
 * processes for development without Docker — with a loud warning, since a
 * process is no isolation at all.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config.js';
import { defaultHarnessDir, ensureRunnerImage } from '../image-build/index.js';
import type { Logger } from '../logger.js';
import type { SandboxDriver } from '../sandbox/index.js';
import { DockerSandbox } from '../sandbox/index.js';
import { ProcessSandbox } from '../sandbox/index.js';

/** Builds the harness bundle when it is missing or older than its sources (a checkout, not a built image). */
async function ensureHarnessBundle(log: Logger): Promise<string> {
  const harnessDir = defaultHarnessDir();
  try {
    const { buildHarness } = await import('../../scripts/build-harness.js');
    await buildHarness();
  } catch (error) {
    // A deployed build ships the bundle and may lack the bundler; only a missing bundle is fatal.
    if (!existsSync(join(harnessDir, 'harness.mjs'))) throw error;
    log.debug({ err: error }, 'harness bundle not rebuilt; using the shipped one');
  }
  return harnessDir;
}

export async function createSandboxDriver(config: Config, log: Logger): Promise<SandboxDriver> {
  if (config.sandboxDriver === 'process') {
    const harnessDir = await ensureHarnessBundle(log);
    return new ProcessSandbox({ harnessDir, warn: (message: string) => log.warn(message) });
  }
  let image = config.runnerImage;
  if (image === undefined) {
    const harnessDir = await ensureHarnessBundle(log);
    image = await ensureRunnerImage({
      base: config.runnerBase,
      harnessDir,
      log: (line) => log.info({ component: 'runner-image' }, line),
    });
  }
  const driver = new DockerSandbox({ image, planeName: config.planeName });
  await driver.ping();
  return driver;
}
