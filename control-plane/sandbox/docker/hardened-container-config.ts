/**
 * The create options of every runner container, in one place so the hardening
 * can be read (and asserted) as a whole: no network, read-only root, a small
 * noexec /tmp, no capabilities, no privilege gain, a non-root user, hard
 * limits on memory (no swap), CPU, processes and open files, and the OCI
 * runtime the server asked for.
 */
import type Dockerode from 'dockerode';
import type { SandboxSpec } from '../driver.js';
import { harnessCommandInImage, RUNNER_USER } from '../harness-command.js';

/** Label naming the control plane (its scope) a container belongs to. */
export const PLANE_LABEL = 'mcphost.plane';
/** Label naming the driver instance (one control-plane process) that started it. */
export const PLANE_INSTANCE_LABEL = 'mcphost.plane-instance';

const MIB = 1024 * 1024;

/** Everything besides the spec that shapes a container. */
export interface HardeningSettings {
  image: string;
  planeName: string;
  planeInstance: string;
  /** Who started it (plane-owner.ts), so another control plane can tell whether it still runs. */
  ownerLabels: Record<string, string>;
  /** Extra labels of the driver; the spec's and the plane's labels win over them. */
  labels: Record<string, string>;
  /** Size of the /tmp tmpfs, in MiB. */
  tmpfsMb: number;
  /** Soft and hard limit of open file descriptors. */
  nofile: number;
}

/** The local data path of one container (runner-socket.ts): its mount and the harness's argument. */
export interface RunnerChannel {
  /** The socket's directory, bind-mounted read-only (`Mounts`, never `Binds`: a missing source fails the create instead of being made by the engine). */
  mount: Dockerode.MountSettings;
  /** `--channel=<path in the container>`, appended to the command. */
  argument: string;
}

/**
 * Room for gVisor's own threads under runsc. Its sandbox kernel (the Sentry,
 * a Go program) and file proxy run inside the container's cgroup, so their
 * threads count against its pids limit: an idle runner holds 45 tasks under
 * runsc against 11 under runc (measured), and the Go runtime adds a thread
 * for every blocking host call. A limit sized for node alone lets a burst of
 * output make the Sentry fail to create a thread, and Go's fatal error kills
 * the sandbox (exit status 2) in the middle of a call. Tool code cannot start
 * processes either way; the limit guards against the runtime, not the tool.
 */
export const GVISOR_SANDBOX_TASKS = 256;

/**
 * CPU time a runc container may spend at full speed in one go, in ms: its CFS
 * quota per period. Docker's `--cpus` keeps the kernel's 100 ms period, so a
 * container at 0.5 CPU runs 50 ms and then waits 50 ms. The harness needs
 * ~170–200 ms of CPU from its start to its first result (node's own boot
 * ~40 ms of it), so under that period a cold start spent about as long
 * throttled as running, while the raw baseline (node alone) fit in the first
 * 50 ms. A period long enough for a quota of this much keeps the container's
 * share of the CPU over every period and lets the boot run unthrottled.
 * Measured (runner bench, 0.5 CPU, runs alternated with the 100 ms period,
 * quiet machine): cold p50 over raw 2.59× / 2.66× → 1.72× / 1.60×. The cost: a container that
 * spends its whole quota waits up to 250 ms instead of 50 ms before running
 * again (its own calls; other tenants keep their CFS share of the cores).
 * gVisor containers keep the 100 ms period: their sandbox kernel spends the
 * quota too, so their cold start gained nothing (2.45× both ways) while their
 * back-to-back warm p99 grew from ~60 ms to ~250 ms.
 */
export const CPU_BURST_MS = 250;
/** The kernel's (and Docker's) default CFS period, in µs: the shortest used. */
const DEFAULT_CPU_PERIOD_US = 100_000;
/** The longest CFS period the kernel accepts, in µs. */
const MAX_CPU_PERIOD_US = 1_000_000;

/**
 * CFS period for a container of `cpus` cores, in µs: under runc, long enough
 * for a quota of CPU_BURST_MS where the kernel allows; under runsc, the default.
 */
export function cpuPeriodUs(cpus: number, runtime: SandboxSpec['runtime'] = 'runc'): number {
  if (runtime === 'runsc') return DEFAULT_CPU_PERIOD_US;
  const forBurst = Math.round((CPU_BURST_MS * 1000) / cpus);
  return Math.min(MAX_CPU_PERIOD_US, Math.max(DEFAULT_CPU_PERIOD_US, forBurst));
}

/**
 * Create options for one runner container. AutoRemove is off on purpose: the
 * driver inspects the stopped container (exit code, OOMKilled) and then
 * removes it itself — with AutoRemove the engine may delete it before the
 * inspect, losing the OOM verdict. Leftovers of a crashed control plane are
 * found by label and reaped.
 */
export function hardenedContainerOptions(
  spec: SandboxSpec,
  settings: HardeningSettings,
  channel?: RunnerChannel,
): Dockerode.ContainerCreateOptions {
  // Without an explicit command the harness runs with V8 flags sized to the limit.
  const command = spec.command ?? harnessCommandInImage(spec.memoryMb);
  // With a socket, the protocol leaves stdin and stdout: the harness is told where to connect.
  const entrypoint = channel === undefined ? command : [...command, channel.argument];
  const cpuPeriod = cpuPeriodUs(spec.cpus, spec.runtime);
  return {
    Image: settings.image,
    Entrypoint: entrypoint,
    Cmd: [],
    User: RUNNER_USER,
    WorkingDir: '/tmp',
    Env: [],
    Labels: {
      ...settings.labels,
      ...spec.labels,
      ...settings.ownerLabels,
      [PLANE_LABEL]: settings.planeName,
      [PLANE_INSTANCE_LABEL]: settings.planeInstance,
    },
    AttachStdin: channel === undefined,
    AttachStdout: true,
    AttachStderr: true,
    OpenStdin: channel === undefined,
    StdinOnce: false,
    Tty: false,
    NetworkDisabled: true,
    HostConfig: {
      NetworkMode: 'none',
      // docker-init (tini) as PID 1: node, no longer PID 1, dies on SIGTERM even
      // while the harness boots (before its own handler exists), so an engine
      // stopping never waits 10 s for a runner started during its shutdown.
      Init: true,
      ReadonlyRootfs: true,
      Tmpfs: { '/tmp': `rw,noexec,nosuid,nodev,size=${settings.tmpfsMb}m` },
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      PidsLimit: spec.runtime === 'runsc' ? spec.pids + GVISOR_SANDBOX_TASKS : spec.pids,
      Memory: spec.memoryMb * MIB,
      // Equal to Memory: no swap, so the limit is a real limit.
      MemorySwap: spec.memoryMb * MIB,
      // `cpus` cores; under runc over a period long enough for the harness to boot unthrottled (CPU_BURST_MS).
      CpuPeriod: cpuPeriod,
      CpuQuota: Math.max(1_000, Math.round(spec.cpus * cpuPeriod)),
      Ulimits: [{ Name: 'nofile', Soft: settings.nofile, Hard: settings.nofile }],
      AutoRemove: false,
      RestartPolicy: { Name: 'no' },
      IpcMode: 'private',
      // Diagnostics travel over the attach stream; nothing is written to the engine's disk.
      LogConfig: { Type: 'none', Config: {} },
      ...(channel === undefined ? {} : { Mounts: [channel.mount] }),
      // gVisor (`runsc`) puts its own kernel between the tool and the host's; unset = engine default.
      ...(spec.runtime === undefined ? {} : { Runtime: spec.runtime }),
    },
  };
}
