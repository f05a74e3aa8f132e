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
import Dockerode from 'dockerode';
import {
  currentProcessOwner,
  DockerodeContainerClient,
  DockerSandbox,
  containerIdFromMountinfo,
  readOwnMountinfo,
  rootFilesystemMatches,
  type PlaneOwner,
} from '../sandbox/index.js';
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
  const client = new DockerodeContainerClient(new Dockerode());
  const { owner, composeProject } = await findPlaneOwner(client);
  const planeName = config.planeName ?? composeProject ?? DEFAULT_PLANE_NAME;
  log.info(
    { planeName, container: owner.container?.slice(0, 12) },
    config.planeName !== undefined
      ? 'runner containers labelled with PLANE_NAME'
      : composeProject !== undefined
        ? "runner containers labelled with this compose project's name (PLANE_NAME unset)"
        : 'runner containers labelled with the default plane name (PLANE_NAME unset)',
  );
  const driver = new DockerSandbox({
    client,
    image,
    planeName,
    owner,
    warn: (message) => log.warn({ planeName }, message),
  });
  await driver.ping();
  return driver;
}

/** The plane name of a control plane with no PLANE_NAME outside compose. */
const DEFAULT_PLANE_NAME = 'mcphost';

/**
 * This process as the owner of runner containers, with its own container when
 * it runs in one on the engine it drives (then also that container's compose
 * project, the default plane name: one per stack).
 */
async function findPlaneOwner(
  client: DockerodeContainerClient,
): Promise<{ owner: PlaneOwner; composeProject?: string }> {
  const owner = currentProcessOwner();
  const mountinfo = readOwnMountinfo();
  const id = mountinfo === undefined ? undefined : containerIdFromMountinfo(mountinfo);
  const info = id === undefined ? undefined : await client.inspect(id);
  // Podman, another engine than the one behind the socket, or a container
  // sharing another's namespaces: no container of ours on this engine.
  if (info === undefined || !rootFilesystemMatches(mountinfo!, upperDirOf(info))) {
    return { owner };
  }
  const project = info.Config.Labels?.['com.docker.compose.project'];
  // Compose project names are already lower-case letters, digits, '-' and '_'.
  const usable = project !== undefined && /^[a-z0-9][a-z0-9_.-]{0,62}$/.test(project);
  return { owner: { ...owner, container: info.Id }, composeProject: usable ? project : undefined };
}

/** The overlay upper directory the engine reports (dockerode types only the devicemapper fields). */
function upperDirOf(info: { GraphDriver?: { Data?: object } }): string | undefined {
  const upper = (info.GraphDriver?.Data as { UpperDir?: unknown } | undefined)?.UpperDir;
  return typeof upper === 'string' ? upper : undefined;
}
