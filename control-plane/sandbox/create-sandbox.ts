/**
 * Picks and prepares the sandbox driver: Docker (the runner image built when
 * missing, offline from the host's node when no registry answers), or local
 * processes for development without Docker — with a loud warning, since a
 * process is no isolation at all. The composition root calls
 * `checkSandboxEngine` before it writes anything, and `createSandboxDriver`
 * once the store is open.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import type { EngineAddress } from '../engine-address.js';
import { defaultHarnessDir, ensureRunnerImage, type RunnerBase } from '../image-build/index.js';
import type { Logger } from '../logger.js';
import Dockerode from 'dockerode';
import type { SandboxDriver } from './driver.js';
import { DockerSandbox } from './docker/docker-sandbox.js';
import { DockerodeContainerClient } from './docker/container-client.js';
import { checkDockerEngine } from './docker/docker-preflight.js';
import {
  containerIdFromMountinfo,
  currentProcessOwner,
  readOwnMountinfo,
  rootFilesystemMatches,
  type PlaneOwner,
} from './docker/plane-owner.js';
import { checkSocketDir, chooseSocketDir } from './docker/socket-data-path.js';
import { MultiEngineSandbox, type EngineSource } from './engines/multi-engine-sandbox.js';
import { ProcessSandbox } from './process/process-sandbox.js';
import { McphostError } from '../errors.js';

/** What the sandbox driver is made from (SANDBOX_DRIVER, RUNNER_*, PLANE_NAME, DOCKER_ENGINES*, DATA_DIR). */
export interface SandboxSettings {
  readonly sandboxDriver: 'docker' | 'process';
  readonly dataDir: string;
  readonly runnerImage: string | undefined;
  readonly runnerBase: RunnerBase;
  /** 'auto', 'off' or a directory (RUNNER_SOCKET_DIR). */
  readonly runnerSocketDir: string;
  readonly runnerStartupTimeoutMs: number;
  readonly planeName: string | undefined;
  readonly dockerEngines: readonly EngineAddress[] | undefined;
  readonly dockerEngineCheckIntervalMs: number;
}

/**
 * Nothing is written (data directory, a generated master.key) before the
 * engine answers: with one Docker engine it is pinged here, first. With
 * DOCKER_ENGINES the engines are checked as they are opened (one answering is
 * enough), which comes after the data directory exists.
 */
export async function checkSandboxEngine(settings: SandboxSettings): Promise<void> {
  if (settings.sandboxDriver === 'docker' && settings.dockerEngines === undefined) {
    await checkDockerEngine();
  }
}

/**
 * The built harness bundle's folder. Building it is a step of its own
 * (`npm run build:assets`, which `npm start` runs first; `npm run build` for a
 * deployment): the control plane only reads it.
 */
async function harnessBundle(): Promise<string> {
  const harnessDir = defaultHarnessDir();
  if (!existsSync(join(harnessDir, 'harness.mjs'))) {
    throw new McphostError(
      'ERR_CONFIG',
      `the harness bundle is missing (${join(harnessDir, 'harness.mjs')}): run \`npm run build:assets\` (\`npm start\` runs it before it starts)`,
    );
  }
  return harnessDir;
}

export async function createSandboxDriver(
  settings: SandboxSettings,
  log: Logger,
): Promise<SandboxDriver> {
  const namedSocketDir = settings.runnerSocketDir !== 'auto' && settings.runnerSocketDir !== 'off';
  if (settings.sandboxDriver === 'process') {
    if (namedSocketDir) {
      throw new McphostError(
        'ERR_CONFIG',
        'RUNNER_SOCKET_DIR names a directory for runner containers; SANDBOX_DRIVER=process runs none: unset one of them',
      );
    }
    const harnessDir = await harnessBundle();
    return new ProcessSandbox({ harnessDir, warn: (message: string) => log.warn(message) });
  }
  if (settings.dockerEngines !== undefined && settings.dockerEngines.length > 0) {
    if (namedSocketDir) {
      throw new McphostError(
        'ERR_CONFIG',
        'RUNNER_SOCKET_DIR names a directory, which works with the one engine of DOCKER_HOST, not with DOCKER_ENGINES: unset one of them',
      );
    }
    return openEngines(settings, settings.dockerEngines, log);
  }
  const docker = new Dockerode();
  const client = new DockerodeContainerClient(docker);
  const image = settings.runnerImage ?? (await runnerImageOn(docker, settings, log, harnessBundle));
  const { owner, composeProject } = await findPlaneOwner(client);
  const planeName = resolvePlaneName(settings, composeProject, owner, log);
  const driverWith = (socketDir: string | undefined) =>
    new DockerSandbox({
      client,
      image,
      planeName,
      owner,
      warn: (message) => log.warn({ planeName }, message),
      socketDir,
    });
  const choice = chooseSocketDir(settings, owner, log);
  let driver = driverWith(choice?.dir);
  await driver.ping();
  if (choice !== undefined && !(await checkSocketDir(choice, driver, settings, log))) {
    await driver.close();
    driver = driverWith(undefined);
  }
  return driver;
}

/** The runner image on `docker`, built there when missing (from the harness bundle `harnessDir` gives). */
async function runnerImageOn(
  docker: Dockerode,
  settings: SandboxSettings,
  log: Logger,
  harnessDir: () => Promise<string>,
  engine?: string,
): Promise<string> {
  return ensureRunnerImage({
    docker,
    base: settings.runnerBase,
    harnessDir: await harnessDir(),
    log: (line) => log.info({ component: 'runner-image', engine }, line),
  });
}

function resolvePlaneName(
  settings: SandboxSettings,
  composeProject: string | undefined,
  owner: PlaneOwner,
  log: Logger,
): string {
  const planeName = settings.planeName ?? composeProject ?? DEFAULT_PLANE_NAME;
  log.info(
    { planeName, container: owner.container?.slice(0, 12) },
    settings.planeName !== undefined
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
  settings: SandboxSettings,
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
  const planeName = await planeNameOfEngines(settings, dockerOf(addresses[0]!), log);
  const sources: EngineSource[] = addresses.map((address) => ({
    name: address.name,
    open: async () => {
      const docker = await dockerOf(address);
      const client = new DockerodeContainerClient(docker);
      await client.ping();
      const { owner } = await findPlaneOwner(client);
      const image =
        settings.runnerImage ??
        (await runnerImageOn(docker, settings, log, harnessBundle, address.name));
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
    checkIntervalMs: settings.dockerEngineCheckIntervalMs,
    startTimeoutMs: settings.runnerStartupTimeoutMs,
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
  settings: SandboxSettings,
  first: Promise<Dockerode>,
  log: Logger,
): Promise<string> {
  if (settings.planeName !== undefined)
    return resolvePlaneName(settings, undefined, currentProcessOwner(), log);
  const found = await Promise.race([
    first.then((docker) => findPlaneOwner(new DockerodeContainerClient(docker))),
    sleep(10_000, undefined, { ref: false }),
  ]).catch(() => undefined);
  return resolvePlaneName(
    settings,
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
