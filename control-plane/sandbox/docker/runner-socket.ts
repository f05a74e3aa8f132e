/**
 * The local data path between the control plane and one runner container: a
 * Unix socket in a directory bind-mounted (read-only) into the container,
 * instead of the engine's attach stream. With attach, dockerd and the
 * containerd-shim copy every protocol byte; through the socket the harness
 * and the control plane talk directly (measured in docs/decisions.md: about
 * half the round trip, and ~0.2–0.35 ms less engine CPU per call).
 *
 * Who may do what, and why:
 * - The control plane creates and listens; the container only connects. A
 *   container that listened could plant a symlink at the name and have the
 *   host connect to anything (tried: the host reached dockerd's socket).
 * - One directory per container, 0711, inside a root the control plane keeps
 *   at 0700: other host users cannot reach it, and inside the container the
 *   read-only mount refuses every create, rename and unlink.
 * - The socket is 0777 (`writableAll`): the harness connects as uid 10001.
 * - One connection only: the listener closes at the first (Node then removes
 *   the name), and the harness connects before any tool code runs, so tool
 *   code finds nothing to connect to.
 * The directory must be on the engine's host: a remote engine, or a control
 * plane in a container whose paths are not the host's, keeps the attach
 * stream (see DockerSandboxOptions.socketDir).
 */
import { randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, readdir, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import path from 'node:path';
import { CHANNEL_FLAG } from '../../../src/protocol/index.js';
import type { RunnerChannel } from './hardened-container-config.js';

/** Where the directory appears inside the container. */
export const RUNNER_SOCKET_TARGET = '/run/mcphost';
/** The socket's path inside the container. */
export const RUNNER_SOCKET_PATH_IN_CONTAINER = `${RUNNER_SOCKET_TARGET}/s`;
/** Longest Unix socket path Linux takes (sun_path is 108 bytes, NUL included). */
const MAX_SOCKET_PATH_BYTES = 107;
/** Length of a group's name (a driver's) and of a container's directory name, in hex digits. */
export const SOCKET_GROUP_CHARS = 12;
const SOCKET_DIR_CHARS = 16;
/** Room the part of the path under the root takes: `/<group>/<dir>/s`. */
const PER_CONTAINER_PATH_BYTES = 1 + SOCKET_GROUP_CHARS + 1 + SOCKET_DIR_CHARS + 2;

/** The longest root directory a socket path still fits under. */
export const MAX_SOCKET_ROOT_BYTES = MAX_SOCKET_PATH_BYTES - PER_CONTAINER_PATH_BYTES;

/** One container's socket: its directory, the listener, and the one connection. */
export class RunnerSocket {
  /** The directory on the host (the bind mount's source). */
  readonly hostDir: string;
  /** Settles with the harness's connection; rejects once closed before one came. */
  readonly connection: Promise<Socket>;
  readonly #server: Server;
  #accepted: Socket | undefined;
  #closed = false;
  #reject: (error: Error) => void = () => {};

  private constructor(hostDir: string, server: Server) {
    this.hostDir = hostDir;
    this.#server = server;
    this.connection = new Promise<Socket>((resolve, reject) => {
      this.#reject = reject;
      server.on('connection', (socket) => {
        if (this.#accepted !== undefined || this.#closed) {
          socket.destroy();
          return;
        }
        this.#accepted = socket;
        // The name goes with the listener: nothing else can connect from here on.
        server.close();
        resolve(socket);
      });
    });
    // Unobserved until the instance asks: a start that fails early must not leave an unhandled rejection.
    this.connection.catch(() => undefined);
  }

  /**
   * Makes `<root>/<group>/<random>` (the root and group 0700, the directory
   * 0711) and listens on the socket `s` in it. `group` (SOCKET_GROUP_CHARS
   * characters) keeps one driver's directories together, so leftovers of a
   * gone control plane can be removed.
   */
  static async open(root: string, group: string): Promise<RunnerSocket> {
    if (group.length !== SOCKET_GROUP_CHARS || group.includes('/')) {
      throw new TypeError(
        `RunnerSocket.open: group must be ${SOCKET_GROUP_CHARS} characters, no /`,
      );
    }
    const groupDir = path.join(root, group);
    await mkdir(groupDir, { recursive: true, mode: 0o700 });
    const hostDir = path.join(groupDir, randomBytes(SOCKET_DIR_CHARS / 2).toString('hex'));
    await mkdir(hostDir, { mode: 0o711 });
    // mkdir's mode passes through the umask; the container's uid needs the x bit.
    await chmod(hostDir, 0o711);
    const server = createServer({ allowHalfOpen: false });
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ path: path.join(hostDir, 's'), writableAll: true }, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (error) {
      await rm(hostDir, { recursive: true, force: true });
      throw error;
    }
    const runnerSocket = new RunnerSocket(hostDir, server);
    // An accept that fails (out of descriptors) fails this runner's start, never the process.
    server.on('error', () => void runnerSocket.close().catch(() => {}));
    return runnerSocket;
  }

  /** What the container is created with: the directory bind-mounted read-only, and where to connect. */
  channel(): RunnerChannel {
    return {
      mount: { Type: 'bind', Source: this.hostDir, Target: RUNNER_SOCKET_TARGET, ReadOnly: true },
      argument: `${CHANNEL_FLAG}${RUNNER_SOCKET_PATH_IN_CONTAINER}`,
    };
  }

  /** Closes the listener and the connection, and removes the directory; idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#reject(new Error('the runner socket closed before the harness connected'));
    this.#accepted?.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    await rm(this.hostDir, { recursive: true, force: true });
  }
}

/**
 * Prepares the root directory: made 0700 when missing; an existing one must
 * already be a directory (not a symlink) of this process's user that no one
 * else may enter, since every runner's directory is made inside it. Nothing
 * existing is changed: a root pointed at /tmp by mistake is refused, not
 * closed to every other user of the host. Throws with the reason.
 */
export async function prepareSocketRoot(root: string): Promise<void> {
  if (!path.isAbsolute(root)) throw new TypeError(`${root} is not an absolute path`);
  if (Buffer.byteLength(root) > MAX_SOCKET_ROOT_BYTES) {
    throw new TypeError(
      `${root} is longer than ${MAX_SOCKET_ROOT_BYTES} bytes: Unix socket paths under it would not fit`,
    );
  }
  const made = await mkdir(root, { recursive: true, mode: 0o700 });
  if (made === root) {
    // Fresh: the umask may have taken bits mkdir's mode asked for, never added any.
    await chmod(root, 0o700);
    return;
  }
  const found = await lstat(root);
  const uid = process.getuid?.();
  if (!found.isDirectory())
    throw new TypeError(`${root} is not a directory (a symlink is refused)`);
  if (uid !== undefined && found.uid !== uid) {
    throw new TypeError(`${root} belongs to uid ${found.uid}, not to this process's uid ${uid}`);
  }
  if ((found.mode & 0o077) !== 0) {
    throw new TypeError(
      `${root} may be entered by other users (mode ${(found.mode & 0o777).toString(8)}): ` +
        'give it mode 700, or name a directory that does not exist yet',
    );
  }
}

/** Removes the groups under `root` that `keep` does not name (a gone control plane's directories). */
export async function removeSocketGroups(
  root: string,
  keep: (group: string) => boolean,
): Promise<number> {
  const entries = await readdir(root, { withFileTypes: true }).catch(() => []);
  const stale = entries.filter((entry) => entry.isDirectory() && !keep(entry.name));
  await Promise.all(
    stale.map((entry) => rm(path.join(root, entry.name), { recursive: true, force: true })),
  );
  return stale.length;
}
