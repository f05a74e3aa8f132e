/**
 * Picks and prepares the sandbox driver: Docker (the runner image built when
 * missing, offline from the host's node when no registry answers), or local
 * processes for development without Docker — with a loud warning, since a
 * process is no isolation at all.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import type { Config } from '../config.js';
import type { EngineAddress } from '../engine-address.js';
import { defaultHarnessDir, ensureRunnerImage } from '../image-build/index.js';
import type { Logger } from '../logger.js';
import type { SandboxDriver } from '../sandbox/index.js';
import Dockerode from 'dockerode';
import {
  currentProcessOwner,
  DockerodeContainerClient,
  DockerSandbox,
  MultiEngineSandbox,
  type EngineSource,
  containerIdFromMountinfo,
  readOwnMountinfo,
  rootFilesystemMatches,
  type PlaneOwner,
} from '../sandbox/index.js';
import { ProcessSandbox } from '../sandbox/index.js';
import { checkSocketDir, chooseSocketDir } from './socket-data-path.js';
import { McphostError } from '../errors.js';

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
  const namedSocketDir = config.runnerSocketDir !== 'auto' && config.runnerSocketDir !== 'off';
  if (config.sandboxDriver === 'process') {
    if (namedSocketDir) {
      throw new McphostError(
        'ERR_CONFIG',
        'RUNNER_SOCKET_DIR names a directory for runner containers; SANDBOX_DRIVER=process runs none: unset one of them',
      );
    }
    const harnessDir = await ensureHarnessBundle(log);
    return new ProcessSandbox({ harnessDir, warn: (message: string) => log.warn(message) });
  }
  if (config.dockerEngines !== undefined && config.dockerEngines.length > 0) {
    if (namedSocketDir) {
      throw new McphostError(
        'ERR_CONFIG',
        'RUNNER_SOCKET_DIR names a directory, which works with the one engine of DOCKER_HOST, not with DOCKER_ENGINES: unset one of them',
      );
    }
    return openEngines(config, config.dockerEngines, log);
  }
  const docker = new Dockerode();
  const client = new DockerodeContainerClient(docker);
  const image =
    config.runnerImage ??
    (await runnerImageOn(docker, config, log, () => ensureHarnessBundle(log)));
  const { owner, composeProject } = await findPlaneOwner(client);
  const planeName = resolvePlaneName(config, composeProject, owner, log);
  const driverWith = (socketDir: string | undefined) =>
    new DockerSandbox({
      client,
      image,
      planeName,
      owner,
      warn: (message) => log.warn({ planeName }, message),
      socketDir,
    });
  const choice = chooseSocketDir(config, owner, log);
  let driver = driverWith(choice?.dir);
  await driver.ping();
  if (choice !== undefined && !(await checkSocketDir(choice, driver, config, log))) {
    await driver.close();
    driver = driverWith(undefined);
  }
  return driver;
}

/** The runner image on `docker`, built there when missing (from the harness bundle `harnessDir` gives). */
async function runnerImageOn(
  docker: Dockerode,
  config: Config,
  log: Logger,
  harnessDir: () => Promise<string>,
  engine?: string,
): Promise<string> {
  return ensureRunnerImage({
    docker,
    base: config.runnerBase,
    harnessDir: await harnessDir(),
    log: (line) => log.info({ component: 'runner-image', engine }, line),
  });
}

function resolvePlaneName(
  config: Config,
  composeProject: string | undefined,
  owner: PlaneOwner,
  log: Logger,
): string {
  const planeName = config.planeName ?? composeProject ?? DEFAULT_PLANE_NAME;
  log.info(
    { planeName, container: owner.container?.slice(0, 12) },
    config.planeName !== undefined
      ? 'runner containers labelled with PLANE_NAME'
      : composeProject !== undefined
        ? "runner containers labelled with this compose project's name (PLANE_NAME unset)"
        : 'runner containers labelled with the default plane name (PLANE_NAME unset)',
  );
  return planeName;
}

/**
 * DOCKER_ENGINES: one DockerSandbox per engine under a MultiEngineSandbox. An
 * engine is opened (runner image ensured, leftovers reaped) when it first
 * answers, at start or later; the plane name is decided once, from the first
 * listed engine (set PLANE_NAME to make it independent of that).
 */
async function openEngines(
  config: Config,
  addresses: readonly EngineAddress[],
  log: Logger,
): Promise<MultiEngineSandbox> {
  const dockers = new Map<string, Promise<Dockerode>>();
  const dockerOf = (address: EngineAddress) => {
    let docker = dockers.get(address.name);
    if (docker === undefined) {
      // A failure (certificates not readable yet) is not kept: the next check reads them again.
      docker = engineClient(address).catch((error: unknown) => {
        dockers.delete(address.name);
        throw error;
      });
      dockers.set(address.name, docker);
    }
    return docker;
  };
  // One bundle for every engine's image build, built once (again after a failure).
  let harness: Promise<string> | undefined;
  const harnessDir = () =>
    (harness ??= ensureHarnessBundle(log).catch((error: unknown) => {
      harness = undefined;
      throw error;
    }));
  const planeName = await planeNameOfEngines(config, dockerOf(addresses[0]!), log);
  const sources: EngineSource[] = addresses.map((address) => ({
    name: address.name,
    open: async () => {
      const docker = await dockerOf(address);
      const client = new DockerodeContainerClient(docker);
      await client.ping();
      const { owner } = await findPlaneOwner(client);
      const image =
        config.runnerImage ?? (await runnerImageOn(docker, config, log, harnessDir, address.name));
      return new DockerSandbox({
        client,
        image,
        planeName,
        owner,
        warn: (message) => log.warn({ planeName, engine: address.name }, message),
      });
    },
    capacity: async () => {
      const info = await (await dockerOf(address)).info();
      return { memoryMb: info.MemTotal / 1048576, cpus: info.NCPU };
    },
  }));
  const driver = new MultiEngineSandbox({
    engines: sources,
    checkIntervalMs: config.dockerEngineCheckIntervalMs,
    startTimeoutMs: config.runnerStartupTimeoutMs,
    log: (message, details) => log.warn({ component: 'engines', ...details }, message),
  });
  await driver.open();
  return driver;
}

/**
 * The plane name of a multi-engine control plane: PLANE_NAME, else the
 * compose project of its own container on the *first* listed engine, else
 * the default — decided once, from one engine, so it does not depend on which
 * engine answers first.
 */
async function planeNameOfEngines(
  config: Config,
  first: Promise<Dockerode>,
  log: Logger,
): Promise<string> {
  if (config.planeName !== undefined)
    return resolvePlaneName(config, undefined, currentProcessOwner(), log);
  const found = await Promise.race([
    first.then((docker) => findPlaneOwner(new DockerodeContainerClient(docker))),
    sleep(10_000, undefined, { ref: false }),
  ]).catch(() => undefined);
  return resolvePlaneName(
    config,
    found?.composeProject,
    found?.owner ?? currentProcessOwner(),
    log,
  );
}

/** A Dockerode client for one DOCKER_ENGINES entry; a remote one with its TLS client certificates. */
export async function engineClient(address: EngineAddress): Promise<Dockerode> {
  // Every connection setting given: docker-modem would otherwise take DOCKER_HOST's
  // host over our socket path, and talk to another engine.
  if (address.kind === 'unix') {
    return new Dockerode({
      socketPath: address.socketPath,
      host: undefined,
      port: undefined,
      protocol: 'http',
    });
  }
  const [ca, cert, key] = await Promise.all(
    ['ca.pem', 'cert.pem', 'key.pem'].map((file) => readFile(join(address.certDir, file))),
  );
  return new Dockerode({
    host: address.host,
    port: address.port,
    protocol: 'https',
    ca,
    cert,
    key,
  });
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
