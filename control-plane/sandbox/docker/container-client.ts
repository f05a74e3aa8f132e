/**
 * The one place that talks to the Docker engine about containers. Everything
 * above it (DockerSandbox, pools) sees this narrow interface; tests and other
 * engines can supply their own implementation. Engine failures surface as
 * ERR_SANDBOX_UNAVAILABLE; "already gone" answers to kill/remove are not errors.
 */
import type { Duplex } from 'node:stream';
import Dockerode from 'dockerode';
import { McphostError } from '../../errors.js';

/** A container as listed by label. */
export interface ListedContainer {
  id: string;
  labels: Record<string, string>;
  /** Engine state: created, running, exited… */
  state: string;
}

/** How a container ended, as the engine recorded it. */
export interface ContainerEndState {
  exitCode: number | null;
  /** The kernel's OOM killer hit the container's cgroup. */
  oomKilled: boolean;
}

/** What the sandbox layer may do to containers, and nothing more. */
export interface ContainerClient {
  /** Resolves when the engine answers within `timeoutMs` (default 5 000). */
  ping(timeoutMs?: number): Promise<void>;
  /** Names of the OCI runtimes the engine has registered (`docker info` Runtimes), sorted. */
  runtimes(): Promise<string[]>;
  /** Creates a container; returns its id. */
  create(options: Dockerode.ContainerCreateOptions): Promise<string>;
  /** Hijacked stdin/stdout/stderr stream (multiplexed when Tty is false); call before `start`. */
  attach(id: string): Promise<Duplex>;
  start(id: string): Promise<void>;
  /** Resolves with the exit code once the (started) container is not running. */
  wait(id: string): Promise<number | null>;
  /** Sends SIGKILL; a container already stopped or gone is fine. */
  kill(id: string): Promise<void>;
  /** Exit code and OOM flag, or undefined when the container is gone. */
  inspectEnd(id: string): Promise<ContainerEndState | undefined>;
  /** Full engine description (tests inspect hardening with it), or undefined when gone. */
  inspect(id: string): Promise<Dockerode.ContainerInspectInfo | undefined>;
  /** Containers (any state) carrying every one of `labels`. */
  listByLabels(labels: Record<string, string>): Promise<ListedContainer[]>;
  /** Removes a container whatever its state; a container already gone is fine. */
  remove(id: string): Promise<void>;
}

/** {@link ContainerClient} over dockerode. */
export class DockerodeContainerClient implements ContainerClient {
  readonly #docker: Dockerode;

  /** `docker`: the engine; default `new Dockerode()` (DOCKER_HOST or /var/run/docker.sock). */
  constructor(docker: Dockerode = new Dockerode()) {
    this.#docker = docker;
  }

  async ping(timeoutMs = 5_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([this.#docker.ping(), timeout]);
    } catch (error) {
      throw unavailable('ping', error);
    } finally {
      clearTimeout(timer);
    }
  }

  async runtimes(): Promise<string[]> {
    try {
      const info = (await this.#docker.info()) as { Runtimes?: Record<string, unknown> };
      return Object.keys(info.Runtimes ?? {}).sort();
    } catch (error) {
      throw unavailable('list runtimes', error);
    }
  }

  async create(options: Dockerode.ContainerCreateOptions): Promise<string> {
    try {
      return (await this.#docker.createContainer(options)).id;
    } catch (error) {
      throw unavailable('create container', error);
    }
  }

  async attach(id: string): Promise<Duplex> {
    try {
      const stream = await this.#docker
        .getContainer(id)
        .attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true });
      return stream as unknown as Duplex;
    } catch (error) {
      throw unavailable('attach to container', error);
    }
  }

  async start(id: string): Promise<void> {
    try {
      await this.#docker.getContainer(id).start();
    } catch (error) {
      throw unavailable('start container', error);
    }
  }

  async wait(id: string): Promise<number | null> {
    try {
      const result = (await this.#docker.getContainer(id).wait()) as { StatusCode?: number };
      return typeof result.StatusCode === 'number' ? result.StatusCode : null;
    } catch (error) {
      if (isGone(error)) return null;
      throw unavailable('wait for container', error);
    }
  }

  async kill(id: string): Promise<void> {
    try {
      await this.#docker.getContainer(id).kill({ signal: 'SIGKILL' });
    } catch (error) {
      // 409: not running (already exited), 404: gone; both mean "dead enough".
      if (isGone(error) || statusOf(error) === 409) return;
      throw unavailable('kill container', error);
    }
  }

  async inspectEnd(id: string): Promise<ContainerEndState | undefined> {
    const info = await this.inspect(id);
    if (info === undefined) return undefined;
    return { exitCode: info.State.ExitCode ?? null, oomKilled: info.State.OOMKilled === true };
  }

  async inspect(id: string): Promise<Dockerode.ContainerInspectInfo | undefined> {
    try {
      return await this.#docker.getContainer(id).inspect();
    } catch (error) {
      if (isGone(error)) return undefined;
      throw unavailable('inspect container', error);
    }
  }

  async listByLabels(labels: Record<string, string>): Promise<ListedContainer[]> {
    const filters = { label: Object.entries(labels).map(([key, value]) => `${key}=${value}`) };
    try {
      const containers = await this.#docker.listContainers({ all: true, filters });
      return containers.map((container) => ({
        id: container.Id,
        labels: container.Labels,
        state: container.State,
      }));
    } catch (error) {
      throw unavailable('list containers', error);
    }
  }

  async remove(id: string): Promise<void> {
    try {
      await this.#docker.getContainer(id).remove({ force: true, v: true });
    } catch (error) {
      // 409 "removal already in progress" ends the same way.
      if (isGone(error) || statusOf(error) === 409) return;
      throw unavailable('remove container', error);
    }
  }
}

function statusOf(error: unknown): number | undefined {
  return (error as { statusCode?: number } | null)?.statusCode;
}

function isGone(error: unknown): boolean {
  return statusOf(error) === 404;
}

function unavailable(operation: string, error: unknown): McphostError {
  const message = error instanceof Error ? error.message.trim() : String(error);
  return new McphostError(
    'ERR_SANDBOX_UNAVAILABLE',
    `Docker engine: ${operation} failed: ${message}`,
    {
      cause: error,
    },
  );
}
