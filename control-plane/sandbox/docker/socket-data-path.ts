/**
 * Which data path runner containers get (RUNNER_SOCKET_DIR): the local one —
 * a Unix socket per container, runner-socket.ts —
 * where it can work, else the engine's attach stream. `auto` (the default)
 * takes it only where it is known to work: one local engine, this control
 * plane on the engine's own host (not in a container, whose paths are not the
 * host's), a directory of its own under DATA_DIR, and a probe container at
 * start that answered through it; any of these missing keeps the attach
 * stream, with a line in the log saying why. A directory the operator names
 * must work: the start fails with the reason otherwise.
 */
import path from 'node:path';
import { McphostError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { DockerSandbox } from './docker-sandbox.js';
import type { PlaneOwner } from './plane-owner.js';
import { MAX_SOCKET_ROOT_BYTES, prepareSocketRoot } from './runner-socket.js';
import { probeSocketDataPath } from './socket-probe.js';

/** The directory the sockets go in, and whether the operator named it. */
export interface SocketDirChoice {
  dir: string;
  explicit: boolean;
}

/** What RUNNER_SOCKET_DIR asks for with one engine and this owner, before any probe. */
export function chooseSocketDir(
  settings: { readonly runnerSocketDir: string; readonly dataDir: string },
  owner: PlaneOwner,
  log: Logger,
): SocketDirChoice | undefined {
  const setting = settings.runnerSocketDir;
  if (setting === 'off') return undefined;
  if (setting !== 'auto') return { dir: setting, explicit: true };
  if (owner.container !== undefined) {
    log.info(
      "runner containers use the attach stream: this control plane runs in a container, whose paths are not the engine host's (RUNNER_SOCKET_DIR=auto)",
    );
    return undefined;
  }
  const dir = path.resolve(settings.dataDir, 'run');
  if (Buffer.byteLength(dir) > MAX_SOCKET_ROOT_BYTES) {
    log.info(
      { dir },
      `runner containers use the attach stream: ${dir} is longer than ${MAX_SOCKET_ROOT_BYTES} bytes for socket paths (RUNNER_SOCKET_DIR=auto; name a shorter one to use sockets)`,
    );
    return undefined;
  }
  return { dir, explicit: false };
}

/**
 * Prepares the directory and probes it with `driver` (made with it). Resolves
 * true when runners may use it; false when `auto` falls back to the attach
 * stream (logged); throws ERR_CONFIG when a named directory does not work.
 */
export async function checkSocketDir(
  choice: SocketDirChoice,
  driver: DockerSandbox,
  settings: { readonly runnerStartupTimeoutMs: number },
  log: Logger,
): Promise<boolean> {
  try {
    await prepareSocketRoot(choice.dir);
    await probeSocketDataPath(driver, settings.runnerStartupTimeoutMs);
  } catch (error) {
    if (choice.explicit) throw socketDirFailed(choice.dir, error);
    log.warn(
      { err: error, dir: choice.dir },
      'runner containers use the attach stream: the local data path did not work here (RUNNER_SOCKET_DIR=auto; set it to off to skip the probe)',
    );
    return false;
  }
  log.info({ dir: choice.dir }, 'runner containers speak over Unix sockets (RUNNER_SOCKET_DIR)');
  return true;
}

/** A named RUNNER_SOCKET_DIR that does not work here: why, and what to do. */
function socketDirFailed(dir: string, error: unknown): McphostError {
  return new McphostError(
    'ERR_CONFIG',
    `RUNNER_SOCKET_DIR=${dir} does not work with this Docker engine (${(error as Error).message}); ` +
      "it must be a directory on the engine's own host, reachable at the same path by this control plane, " +
      "and the engine's default runtime must let containers connect to host sockets (runc does; gVisor's runsc " +
      "refuses, and so may an SELinux or AppArmor policy). Set it to 'off' to use the attach stream",
    { cause: error },
  );
}
