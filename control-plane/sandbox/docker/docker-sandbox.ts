/**
 * SandboxDriver on a Docker engine: each instance is a hardened runner
 * container (see hardened-container-config.ts), attached before it starts so
 * no early output is lost. Every container carries the plane's name and this
 * driver's instance id, so a restarted control plane can reap what a killed
 * one left behind without touching other planes sharing the engine.
 */
import { randomUUID } from 'node:crypto';
import Dockerode from 'dockerode';
import { z } from 'zod';
import { isMcphostError, McphostError } from '../../errors.js';
import { sandboxUnavailable, shuttingDown } from '../sandbox-errors.js';
import type { SandboxDriver, SandboxInstance, SandboxSpec } from '../driver.js';
import { missingRuntimeMessage } from '../runtime-availability.js';
import { DockerodeContainerClient, type ContainerClient } from './container-client.js';
import { DockerInstance } from './docker-instance.js';
import { removeSocketGroups, RunnerSocket, SOCKET_GROUP_CHARS } from './runner-socket.js';
import {
  hardenedContainerOptions,
  PLANE_INSTANCE_LABEL,
  PLANE_LABEL,
} from './hardened-container-config.js';
import { DEFAULT_STDERR_TAIL_BYTES } from '../stderr-tail.js';
import {
  currentProcessOwner,
  OWNER_CONTAINER_LABEL,
  OWNER_HOST_LABEL,
  OWNER_PID_LABEL,
  ownerLabels,
  ownerLiveness,
  type OwnerLiveness,
  type PlaneOwner,
} from './plane-owner.js';
import { describeProblems } from '../../validation-problems.js';

/** Options of {@link DockerSandbox}. */
export interface DockerSandboxOptions {
  /** Engine to use; default `new Dockerode()`. Ignored when `client` is given. */
  docker?: Dockerode;
  /** Container operations; default a DockerodeContainerClient over `docker`. */
  client?: ContainerClient;
  /** Runner image tag (from ensureRunnerImage). */
  image: string;
  /** Scope of reaping: containers of other plane names are never touched. Letters, digits, `._-`. */
  planeName: string;
  /** Extra labels on every container; default none. */
  labels?: Record<string, string>;
  /** Size of the /tmp tmpfs in MiB; default 16. */
  tmpfsMb?: number;
  /** Open-file limit (soft = hard); default 256. */
  nofile?: number;
  /** How long kill() waits for the exit before forcing removal, in ms; default 10 000. */
  killTimeoutMs?: number;
  /** Bytes of stderr kept for exit diagnostics; default 8 192. */
  stderrTailBytes?: number;
  /** The process starting the containers; default this one, outside any container. */
  owner?: PlaneOwner;
  /** Told about containers of this plane name whose control plane may still run; default dropped. */
  warn?: (message: string) => void;
  /**
   * A directory on the engine's host for the local data path (runner-socket.ts):
   * runc containers then speak the protocol over a Unix socket made there
   * instead of the attach stream; runsc ones keep the attach stream (gVisor
   * refuses host sockets unless its runtime is registered with --host-uds).
   * Default none: the attach stream for all.
   */
  socketDir?: string;
}

const OptionsSchema = z.object({
  image: z.string().min(1),
  planeName: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/, 'planeName: letters, digits and ._- only'),
  labels: z.record(z.string(), z.string()).optional(),
  tmpfsMb: z.number().int().positive().optional(),
  nofile: z.number().int().positive().optional(),
  killTimeoutMs: z.number().int().nonnegative().optional(),
  stderrTailBytes: z.number().int().positive().optional(),
});

/** Checks a spec handed in by our own pools; a bad one is a programming error. */
const SpecSchema = z.object({
  labels: z.record(z.string(), z.string()),
  memoryMb: z.number().int().min(6, 'memoryMb: Docker needs at least 6 MiB'),
  cpus: z.number().positive(),
  pids: z.number().int().positive(),
  runtime: z.enum(['runc', 'runsc']).optional(),
  command: z.array(z.string()).min(1).optional(),
});

/** Runs each sandbox instance as a hardened Docker container. */
export class DockerSandbox implements SandboxDriver {
  readonly kind = 'docker' as const;
  /** This driver's identity on the engine (the `mcphost.plane-instance` label). */
  readonly planeInstance = randomUUID();
  readonly #client: ContainerClient;
  readonly #settings: Required<
    Omit<DockerSandboxOptions, 'docker' | 'client' | 'owner' | 'warn' | 'socketDir'>
  >;
  readonly #socketDir: string | undefined;
  readonly #owner: PlaneOwner;
  readonly #warn: (message: string) => void;
  readonly #live = new Set<DockerInstance>();
  /** Starts under way: close() waits for them, so none leaves a container behind. */
  readonly #starting = new Set<Promise<unknown>>();
  /** Containers created by starts still under way (not yet running, not yet live). */
  readonly #startingIds = new Set<string>();
  /** Creates the engine has not answered yet: their containers may be listed before we know their ids. */
  #creating = 0;
  #closed = false;

  constructor(options: DockerSandboxOptions) {
    const parsed = OptionsSchema.safeParse(options);
    if (!parsed.success) throw new TypeError(`DockerSandbox: ${describeProblems(parsed.error)}`);
    this.#client =
      options.client ?? new DockerodeContainerClient(options.docker ?? new Dockerode());
    this.#settings = {
      image: options.image,
      planeName: options.planeName,
      labels: options.labels ?? {},
      tmpfsMb: options.tmpfsMb ?? 16,
      nofile: options.nofile ?? 256,
      killTimeoutMs: options.killTimeoutMs ?? 10_000,
      stderrTailBytes: options.stderrTailBytes ?? DEFAULT_STDERR_TAIL_BYTES,
    };
    this.#socketDir = options.socketDir;
    this.#owner = options.owner ?? currentProcessOwner();
    this.#warn = options.warn ?? (() => {});
  }

  /** The container client this driver uses (pools and tests may inspect with it). */
  get client(): ContainerClient {
    return this.#client;
  }

  start(spec: SandboxSpec): Promise<SandboxInstance> {
    const starting = this.#start(spec);
    this.#starting.add(starting);
    const settled = () => this.#starting.delete(starting);
    starting.then(settled, settled);
    return starting;
  }

  async #start(spec: SandboxSpec): Promise<SandboxInstance> {
    const checked = SpecSchema.safeParse(spec);
    if (!checked.success)
      throw new TypeError(`DockerSandbox.start: ${describeProblems(checked.error)}`);
    if (this.#closed) throw shuttingDown('the Docker sandbox driver');
    const runnerSocket =
      this.#socketDir !== undefined && spec.runtime !== 'runsc'
        ? await this.#openRunnerSocket(this.#socketDir)
        : undefined;
    const options = hardenedContainerOptions(
      spec,
      {
        ...this.#settings,
        planeInstance: this.planeInstance,
        ownerLabels: ownerLabels(this.#owner),
      },
      runnerSocket?.channel(),
    );
    this.#creating += 1;
    let id: string;
    try {
      id = await this.#create(options, spec);
    } catch (error) {
      await runnerSocket?.close().catch(() => {});
      throw this.#withoutSocketDir(error);
    } finally {
      this.#creating -= 1;
    }
    // close() ran while the engine created it: it must not outlive the driver.
    if (this.#closed) {
      await this.#client.remove(id).catch(() => {});
      await runnerSocket?.close().catch(() => {});
      throw shuttingDown('the Docker sandbox driver');
    }
    this.#startingIds.add(id);
    try {
      return await this.#attachAndStart(id, runnerSocket);
    } finally {
      this.#startingIds.delete(id);
    }
  }

  async #attachAndStart(id: string, runnerSocket?: RunnerSocket): Promise<SandboxInstance> {
    let instance: DockerInstance;
    try {
      // Attach before start: output written in the first milliseconds is not lost.
      const socket = await this.#client.attach(id);
      try {
        await this.#client.start(id);
      } catch (error) {
        socket.destroy();
        throw error;
      }
      instance = new DockerInstance(id, socket, this.#client, this.#settings, runnerSocket);
    } catch (error) {
      await this.#client.remove(id).catch(() => {});
      await runnerSocket?.close().catch(() => {});
      throw this.#withoutSocketDir(error);
    }
    this.#live.add(instance);
    void instance.exited.then(() => this.#live.delete(instance));
    // close() may have run while we were starting; it could not see this one.
    if (this.#closed) {
      await instance.kill();
      throw shuttingDown('the Docker sandbox driver');
    }
    return instance;
  }

  /** Creates the container; a runtime the engine lacks is named as such, not as a generic failure. */
  async #create(options: Dockerode.ContainerCreateOptions, spec: SandboxSpec): Promise<string> {
    try {
      return await this.#client.create(options);
    } catch (error) {
      if (spec.runtime === undefined) throw error;
      const available = await this.#client.runtimes().catch(() => undefined);
      if (available === undefined || available.includes(spec.runtime)) throw error;
      throw new McphostError(
        'ERR_SANDBOX_UNAVAILABLE',
        missingRuntimeMessage(spec.runtime, available),
        { cause: error, details: { runtime: spec.runtime, available } },
      );
    }
  }

  /**
   * Removes the containers of this plane name whose control plane is gone;
   * those of one that may still run are left alone, and named in a warning.
   */
  async reapLeftovers(): Promise<number> {
    const ours = await this.#client.listByLabels({ [PLANE_LABEL]: this.#settings.planeName });
    // One verdict per owner, keyed by every label it is judged on: a container
    // someone else labelled with a live instance's id but another owner is
    // judged on its own labels, never decides for the live one's. (Node 20 has
    // no Map.groupBy.)
    const byOwner = new Map<string, typeof ours>();
    for (const container of ours) {
      if (container.labels[PLANE_INSTANCE_LABEL] === this.planeInstance) continue;
      const key = JSON.stringify(
        [PLANE_INSTANCE_LABEL, OWNER_HOST_LABEL, OWNER_PID_LABEL, OWNER_CONTAINER_LABEL].map(
          (label) => container.labels[label] ?? null,
        ),
      );
      byOwner.set(key, [...(byOwner.get(key) ?? []), container]);
    }
    let reaped = 0;
    for (const containers of byOwner.values()) {
      const labels = containers[0]!.labels;
      const running = async (id: string) => {
        const info = await this.#client.inspect(id);
        return info === undefined ? undefined : info.State.Running;
      };
      // An engine that cannot say keeps them: never remove what may be in use.
      const liveness = await ownerLiveness(labels, this.#owner, running).catch(
        (): OwnerLiveness => 'unknown',
      );
      if (liveness === 'gone') {
        await Promise.all(containers.map((container) => this.#client.remove(container.id)));
        reaped += containers.length;
        await this.#removeSocketGroupOf(labels[PLANE_INSTANCE_LABEL]);
      } else {
        this.#warn(this.#sharedNameWarning(liveness, labels, containers));
      }
    }
    return reaped;
  }

  #sharedNameWarning(
    liveness: Exclude<OwnerLiveness, 'gone'>,
    labels: Readonly<Record<string, string>>,
    containers: readonly { id: string }[],
  ): string {
    const owner =
      labels[OWNER_CONTAINER_LABEL] !== undefined
        ? `container ${labels[OWNER_CONTAINER_LABEL].slice(0, 12)}`
        : `host ${labels[OWNER_HOST_LABEL]}, pid ${labels[OWNER_PID_LABEL]}`;
    const name = `PLANE_NAME=${this.#settings.planeName}`;
    const advice =
      'two control planes sharing one plane name on one Docker engine remove each ' +
      "other's runners whenever one restarts: give each its own PLANE_NAME";
    // Container ids come from the engine (hex), never from a label: the command is safe to paste.
    const ids = containers.map((container) => container.id.slice(0, 12)).join(' ');
    return liveness === 'running'
      ? `another control plane with ${name} is running on this Docker engine (${owner}); ` +
          `its ${containers.length} runner container(s) are left alone, but ${advice}`
      : `${containers.length} runner container(s) with ${name} belong to a control plane this ` +
          `one cannot check (${owner}); they are left alone. If it no longer runs, remove them ` +
          `with: docker rm -f ${ids}; if it runs, ${advice}`;
  }

  /**
   * A runner's socket, or ERR_SANDBOX_UNAVAILABLE without the host's path:
   * the error reaches the tenant whose call needed the container, the
   * reason (with the path) goes to the operator's log.
   */
  async #openRunnerSocket(socketDir: string): Promise<RunnerSocket> {
    try {
      return await RunnerSocket.open(socketDir, socketGroupOf(this.planeInstance));
    } catch (error) {
      this.#warn(`cannot make a runner socket in ${socketDir}: ${(error as Error).message}`);
      throw sandboxUnavailable(
        'the runner socket could not be made (see the control plane log)',
        error,
      );
    }
  }

  /** The engine's error with the socket directory's host path taken out (it names the operator's host). */
  #withoutSocketDir(error: unknown): unknown {
    const socketDir = this.#socketDir;
    if (
      socketDir === undefined ||
      !(error instanceof Error) ||
      !error.message.includes(socketDir)
    ) {
      return error;
    }
    const message = error.message.replaceAll(socketDir, 'RUNNER_SOCKET_DIR');
    return isMcphostError(error)
      ? new McphostError(error.code, message, { cause: error })
      : new Error(message, { cause: error });
  }

  /** Removes the socket directories a gone control plane left (empty once its runners connected). */
  async #removeSocketGroupOf(planeInstance: string | undefined): Promise<void> {
    if (this.#socketDir === undefined || planeInstance === undefined) return;
    const gone = socketGroupOf(planeInstance);
    await removeSocketGroups(this.#socketDir, (group) => group !== gone).catch(() => 0);
  }

  async reapStopped(): Promise<number> {
    // A create in flight may have made a container whose id we do not know yet:
    // 'created' ones wait for a reap with no create in flight.
    const creating = this.#creating > 0;
    const ours = await this.#client.listByLabels({ [PLANE_INSTANCE_LABEL]: this.planeInstance });
    const tracked = new Set([...this.#live].map((instance) => instance.id));
    const stopped = ours.filter(
      (container) =>
        container.state !== 'running' &&
        !(container.state === 'created' && (creating || this.#creating > 0)) &&
        !tracked.has(container.id) &&
        !this.#startingIds.has(container.id),
    );
    await Promise.all(stopped.map((container) => this.#client.remove(container.id)));
    return stopped.length;
  }

  async ping(): Promise<void> {
    await this.#client.ping();
  }

  /** The engine's registered runtimes (`docker info`), asked afresh: SIGHUP may add one at any time. */
  async runtimes(): Promise<string[]> {
    return this.#client.runtimes();
  }

  /**
   * Kills every container it started, after letting the starts under way
   * finish (each sees the driver closed and removes its own container): a
   * control plane whose start failed (EADDRINUSE) leaves nothing behind.
   */
  async close(): Promise<void> {
    this.#closed = true;
    // Bounded: an engine that stopped answering must not hold the shutdown forever.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.#starting]),
      new Promise((resolve) => (timer = setTimeout(resolve, this.#settings.killTimeoutMs))),
    ]);
    clearTimeout(timer);
    await Promise.all([...this.#live].map((instance) => instance.kill()));
    await this.#removeSocketGroupOf(this.planeInstance);
  }
}

/** The socket directory group of a driver instance: its id's first hex digits. */
function socketGroupOf(planeInstance: string): string {
  return planeInstance
    .replaceAll('-', '')
    .slice(0, SOCKET_GROUP_CHARS)
    .padEnd(SOCKET_GROUP_CHARS, '0');
}
