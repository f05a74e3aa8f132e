/**
 * The seam between warm pools and whatever runs the harness: a Docker engine in
 * production, a local child process in development and fast unit tests (later,
 * perhaps several engines or Kubernetes). A driver only starts, wires and kills
 * instances; the stdio protocol on top is the pool's business.
 */

/** What one instance should look like. Units are in the names. */
export interface SandboxSpec {
  /** Labels stamped on the instance so leftovers can be found and reaped. */
  labels: Record<string, string>;
  /** Memory limit in MiB (Docker: Memory = MemorySwap; V8 heap sized below it). */
  memoryMb: number;
  /** CPU share, in cores (Docker NanoCpus = cpus × 1e9). */
  cpus: number;
  /** Largest number of processes/threads inside the instance. */
  pids: number;
  /** OCI runtime (Docker `HostConfig.Runtime`): `runc` (default) or gVisor's `runsc`. */
  runtime?: 'runc' | 'runsc';
  /** Replaces the harness command; used only by benchmarks' raw baselines. */
  command?: string[];
}

/** Why an instance stopped. */
export interface SandboxExit {
  exitCode: number | null;
  signal?: string;
  /** The kernel killed it for exceeding its memory limit. */
  oomKilled: boolean;
  /** Last bytes of stderr (diagnostics), bounded. */
  stderrTail: string;
}

export interface SandboxInstance {
  /** Container id or `process:<pid>`. */
  readonly id: string;
  /** The Docker engine running it, when the driver has several (DOCKER_ENGINES). */
  readonly engine?: string;
  /** Writes bytes to the harness's stdin; throws when the instance can no longer take input. */
  write(data: string): void;
  /** Receives stdout bytes (the protocol). */
  onStdout(listener: (chunk: Buffer) => void): void;
  /** Settles once, when the instance has exited; never rejects. */
  readonly exited: Promise<SandboxExit>;
  /** Stops the instance at once; idempotent; resolves when it is gone. */
  kill(): Promise<void>;
}

export interface SandboxDriver {
  readonly kind: 'docker' | 'process';
  /** Creates, starts and attaches an instance; does not wait for `ready`. */
  start(spec: SandboxSpec): Promise<SandboxInstance>;
  /** Removes instances left by an earlier run of this control plane; returns how many. */
  reapLeftovers(): Promise<number>;
  /**
   * Removes this driver's own instances that stopped without it (killed from
   * outside, an engine restart, a start cut short) and that nothing tracks
   * any more; returns how many.
   */
  reapStopped(): Promise<number>;
  /** Resolves when the engine answers; rejects with ERR_SANDBOX_UNAVAILABLE otherwise. */
  ping(): Promise<void>;
  /**
   * OCI runtimes this driver can start instances with (`SandboxSpec.runtime`
   * values), so a server asking for one the engine lacks is refused when it is
   * saved rather than at its first call. Rejects with ERR_SANDBOX_UNAVAILABLE
   * when the engine does not answer.
   */
  runtimes(): Promise<string[]>;
  /** Kills every instance this driver started. */
  close(): Promise<void>;
}
