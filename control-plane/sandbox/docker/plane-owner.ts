/**
 * Which control-plane process owns a runner container, and whether it still
 * runs. Every runner carries its owner's host name, pid and (when the control
 * plane itself runs in a container on the same engine) that container's id.
 * At start a control plane reaps the leftovers of its plane name — but only
 * those of owners that are gone: two control planes sharing one PLANE_NAME on
 * one engine (two compose stacks with the old default, a second `npm start`)
 * must not SIGKILL each other's runners in the middle of their calls. The
 * survivor is told instead, so the operator can give each its own name.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/** Labels of the owner, beside the plane name and instance (hardened-container-config.ts). */
export const OWNER_HOST_LABEL = 'mcphost.plane-host';
export const OWNER_PID_LABEL = 'mcphost.plane-pid';
export const OWNER_CONTAINER_LABEL = 'mcphost.plane-container';

/** The process that starts runner containers. */
export interface PlaneOwner {
  host: string;
  pid: number;
  /** Our own container's id, when the control plane runs in a container of the engine it drives. */
  container?: string;
}

/** What is known of the owner of a container not ours. */
export type OwnerLiveness = 'gone' | 'running' | 'unknown';

/** The labels that describe `owner` on every container it creates. */
export function ownerLabels(owner: PlaneOwner): Record<string, string> {
  return {
    [OWNER_HOST_LABEL]: owner.host,
    [OWNER_PID_LABEL]: String(owner.pid),
    ...(owner.container === undefined ? {} : { [OWNER_CONTAINER_LABEL]: owner.container }),
  };
}

/** This process, without its container (see {@link containerIdFromMountinfo}). */
export function currentProcessOwner(): PlaneOwner {
  return { host: hostname(), pid: process.pid };
}

/**
 * The id of the container this process runs in, from the engine's bind mounts
 * of `/etc/hostname`, `/etc/hosts` and `/etc/resolv.conf`, whose sources live
 * in `<data-root>/containers/<id>/` (cgroup paths do not name the container
 * under cgroup v2's private namespaces). Undefined outside a container.
 */
export function containerIdFromMountinfo(mountinfo: string): string | undefined {
  for (const line of mountinfo.split('\n')) {
    const match = /\/containers\/([0-9a-f]{64})\/(?:hostname|hosts|resolv\.conf)\s/.exec(line);
    if (match) return match[1];
  }
  return undefined;
}

/** This process's mount table; undefined off Linux. */
export function readOwnMountinfo(): string | undefined {
  try {
    return readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * Whether the container the engine describes is the one whose root
 * filesystem we run on. `containerIdFromMountinfo` alone can be fooled: a
 * container started with `network_mode: service:X` gets X's hostname and
 * resolv.conf files, hence X's id. Its overlay upper directory is its own.
 * A storage driver that names no upper directory cannot be checked this way,
 * and the id is taken as found.
 */
export function rootFilesystemMatches(mountinfo: string, upperDir: string | undefined): boolean {
  if (upperDir === undefined || upperDir === '') return true;
  return (
    mountinfo.includes(`upperdir=${upperDir},`) || mountinfo.includes(`upperdir=${upperDir}\n`)
  );
}

/** Asks the engine whether a container runs: undefined when it does not exist. */
export type ContainerRunning = (id: string) => Promise<boolean | undefined>;

/**
 * Whether the owner named by a container's labels still runs, judged from
 * `self`. Containers of versions before these labels count as gone (they were
 * always reaped). An owner in another container of this engine is asked
 * about through the engine; one on this host by its pid; one elsewhere cannot
 * be asked, so it is left alone.
 */
export async function ownerLiveness(
  labels: Readonly<Record<string, string>>,
  self: PlaneOwner,
  containerRunning: ContainerRunning,
): Promise<OwnerLiveness> {
  const host = labels[OWNER_HOST_LABEL];
  const container = labels[OWNER_CONTAINER_LABEL];
  if (host === undefined) return 'gone';
  if (container !== undefined) {
    // Our own container, another instance: the process this container ran before a restart.
    if (container === self.container) return 'gone';
    // The label is only written by an owner that found its container on this engine:
    // a container missing from it was removed.
    return (await containerRunning(container)) === true ? 'running' : 'gone';
  }
  if (self.container !== undefined || host !== self.host) return 'unknown';
  const pid = Number(labels[OWNER_PID_LABEL]);
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === self.pid) return 'gone';
  return processRuns(pid) ? 'running' : 'gone';
}

/** Signal 0 tests a pid without touching it; EPERM means it exists under another user. */
function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
