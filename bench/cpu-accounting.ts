/**
 * CPU accounting of a load window from /proc and the containers' cgroups: the
 * machine's busy time (/proc/stat), every process's (/proc/<pid>/stat) and
 * every runner container's (its cgroup's cpuacct.usage, or cpu.stat under
 * cgroup v2, which count the container's exited processes too). Two snapshots
 * taken around a window split its CPU into the service's parts. Parsing and
 * the split are pure (tested on sample text); reading is a thin layer.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The machine's CPU time summed over all CPUs, in clock ticks. */
export interface MachineTicks {
  /** user + nice + system + irq + softirq. */
  busy: number;
  /** Time the hypervisor ran something else while a CPU wanted to run. */
  steal: number;
}

/**
 * Parses the `cpu` line of /proc/stat. Busy leaves out idle and iowait (idle
 * time), steal (not this machine's work) and guest/guest_nice (the kernel
 * already counts them inside user and nice).
 */
export function parseMachineStat(text: string): MachineTicks {
  const line = text.split('\n').find((l) => l.startsWith('cpu '));
  if (!line) throw new Error('/proc/stat has no "cpu" line');
  const [user, nice, system, , , irq, softirq, steal] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map((field) => Number(field));
  const busy = [user, nice, system, irq, softirq];
  if (busy.some((n) => n === undefined || !Number.isFinite(n))) {
    throw new Error(`unreadable /proc/stat line: ${line}`);
  }
  return { busy: busy.reduce((a, b) => a! + b!, 0)!, steal: steal ?? 0 };
}

/** One process as /proc/<pid>/stat shows it. */
export interface ProcessTicks {
  pid: number;
  /** The command name, at most 15 bytes (may hold spaces and parentheses). */
  comm: string;
  ppid: number;
  /** Kernel PF_* flags. */
  flags: number;
  /** utime + stime of all its threads, in clock ticks. */
  ticks: number;
  /** cutime + cstime: the ticks of its children that exited and that it reaped. */
  childTicks: number;
  /** Start time after boot, in clock ticks: tells a reused pid from the same process. */
  startTime: number;
}

/** The kernel's PF_KTHREAD: the process is a kernel thread. */
const PF_KTHREAD = 0x00200000;

/**
 * Parses /proc/<pid>/stat. The command name sits between the first '(' and
 * the last ')' and may itself hold both, so the numbered fields are read
 * after the last ')'.
 */
export function parseProcessStat(text: string): ProcessTicks {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) throw new Error(`unreadable /proc/<pid>/stat: ${text}`);
  // Fields 3 onward (state, ppid, …): index 0 is field 3 of proc(5).
  const rest = text
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  const field = (n: number): number => {
    const value = Number(rest[n - 3]);
    if (!Number.isFinite(value)) throw new Error(`/proc/<pid>/stat field ${n} unreadable: ${text}`);
    return value;
  };
  return {
    pid: Number(text.slice(0, open).trim()),
    comm: text.slice(open + 1, close),
    ppid: field(4),
    flags: field(9),
    ticks: field(14) + field(15),
    childTicks: field(16) + field(17),
    startTime: field(22),
  };
}

/** True for a kernel thread (kthreadd and its children, which have no user space). */
export function isKernelThread(process: ProcessTicks): boolean {
  return (process.flags & PF_KTHREAD) !== 0 || process.pid === 2 || process.ppid === 2;
}

/** One line of /proc/<pid>/cgroup: `hierarchy:controllers:path`. */
export interface CgroupMembership {
  /** 0 for the cgroup v2 (unified) hierarchy. */
  hierarchy: number;
  /** Controllers of a v1 hierarchy (`name=systemd` included); none for v2. */
  controllers: string[];
  path: string;
}

export function parseCgroupMembership(text: string): CgroupMembership[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      // The path may hold ':' itself: only the first two separate fields.
      const first = line.indexOf(':');
      const second = line.indexOf(':', first + 1);
      if (first < 0 || second < 0) throw new Error(`unreadable /proc/<pid>/cgroup line: ${line}`);
      const controllers = line.slice(first + 1, second);
      return {
        hierarchy: Number(line.slice(0, first)),
        controllers: controllers === '' ? [] : controllers.split(','),
        path: line.slice(second + 1),
      };
    });
}

/** A mounted cgroup hierarchy, from /proc/self/mountinfo. */
export interface CgroupMount {
  version: 1 | 2;
  /** Where it is mounted. */
  mountPoint: string;
  /** The cgroup of the hierarchy that the mount shows at its top (not "/" inside a container). */
  root: string;
  /** The super options of a v1 mount, its controllers among them (none for v2). */
  controllers: string[];
}

/** mountinfo escapes space, tab, newline and backslash as octal (`\040`). */
function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) =>
    String.fromCharCode(parseInt(octal, 8)),
  );
}

/** The cgroup mounts of /proc/self/mountinfo (see proc(5) for the fields). */
export function parseCgroupMounts(mountinfo: string): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of mountinfo.split('\n')) {
    const fields = line.trim().split(' ');
    // Optional fields end at '-'; the file system type, source and super options follow it.
    const dash = fields.indexOf('-');
    if (dash < 0) continue;
    const type = fields[dash + 1];
    if (type !== 'cgroup' && type !== 'cgroup2') continue;
    mounts.push({
      version: type === 'cgroup2' ? 2 : 1,
      mountPoint: unescapeMountPath(fields[4]!),
      root: unescapeMountPath(fields[3]!),
      controllers: type === 'cgroup2' ? [] : (fields[dash + 3] ?? '').split(','),
    });
  }
  return mounts;
}

/** Where a cgroup's CPU time is read: cgroup v1 cpuacct.usage (ns) or v2 cpu.stat (usage_usec). */
export interface CgroupCpuSource {
  /** The cgroup's directory. */
  directory: string;
  file: 'cpuacct.usage' | 'cpu.stat';
}

/**
 * The directory of a process's CPU accounting, from its /proc/<pid>/cgroup and
 * the mounts: the v1 cpuacct hierarchy where there is one (a hybrid host also
 * has a v2 line without the cpu controller), else the v2 hierarchy. Found
 * rather than guessed, so it holds for the cgroupfs and systemd drivers alike.
 */
export function cgroupCpuSource(
  membership: readonly CgroupMembership[],
  mounts: readonly CgroupMount[],
): CgroupCpuSource | undefined {
  const locate = (path: string, mount: CgroupMount | undefined): string | undefined => {
    if (!mount) return undefined;
    // A mount of a sub-tree (inside a container) shows paths below its root only.
    const root = mount.root === '/' ? '' : mount.root;
    if (root !== '' && path !== root && !path.startsWith(`${root}/`)) return undefined;
    return join(mount.mountPoint, path.slice(root.length));
  };
  const v1 = membership.find((m) => m.hierarchy !== 0 && m.controllers.includes('cpuacct'));
  if (v1) {
    const mount = mounts.find((m) => m.version === 1 && m.controllers.includes('cpuacct'));
    const directory = locate(v1.path, mount);
    if (directory) return { directory, file: 'cpuacct.usage' };
  }
  const v2 = membership.find((m) => m.hierarchy === 0);
  if (v2) {
    const directory = locate(
      v2.path,
      mounts.find((m) => m.version === 2),
    );
    if (directory) return { directory, file: 'cpu.stat' };
  }
  return undefined;
}

/** A cgroup's CPU time in ns, from the text of its cpuacct.usage or cpu.stat. */
export function parseCgroupCpuNs(text: string, file: CgroupCpuSource['file']): number {
  if (file === 'cpuacct.usage') {
    const ns = Number(text.trim());
    if (!Number.isFinite(ns)) throw new Error(`unreadable cpuacct.usage: ${text}`);
    return ns;
  }
  const line = text.split('\n').find((l) => l.startsWith('usage_usec '));
  const usec = Number(line?.split(' ')[1]);
  if (!Number.isFinite(usec)) throw new Error(`cpu.stat has no usage_usec: ${text}`);
  return usec * 1000;
}

// --- Reading ---------------------------------------------------------------

/** Clock ticks per second of /proc's times (USER_HZ, normally 100). */
export function clockTicksPerSecond(): number {
  const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  if (!Number.isInteger(ticks) || ticks <= 0) throw new Error(`getconf CLK_TCK said ${ticks}`);
  return ticks;
}

export function readMachineTicks(): MachineTicks {
  return parseMachineStat(readFileSync('/proc/stat', 'utf8'));
}

/** Every process now running, by pid; one that exits while being read is left out. */
export function readProcessTable(): Map<number, ProcessTicks> {
  const table = new Map<number, ProcessTicks>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let text: string;
    try {
      text = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    table.set(Number(entry), parseProcessStat(text));
  }
  return table;
}

/** Where the CPU time of the cgroup holding `pid` is read. */
export function locateCgroupCpu(pid: number): CgroupCpuSource {
  const membership = parseCgroupMembership(readFileSync(`/proc/${pid}/cgroup`, 'utf8'));
  const source = cgroupCpuSource(
    membership,
    parseCgroupMounts(readFileSync('/proc/self/mountinfo', 'utf8')),
  );
  if (!source) throw new Error(`no CPU accounting found for the cgroup of pid ${pid}`);
  return source;
}

/** The cgroup's CPU time so far in ns, its exited processes included. */
export function readCgroupCpuNs(source: CgroupCpuSource): number {
  return parseCgroupCpuNs(readFileSync(join(source.directory, source.file), 'utf8'), source.file);
}

/** The pids now in the cgroup. */
export function readCgroupPids(source: CgroupCpuSource): number[] {
  return readFileSync(join(source.directory, 'cgroup.procs'), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map(Number);
}

/** A container whose cgroup is read. */
export interface AccountedContainer {
  id: string;
  cgroup: CgroupCpuSource;
}

/**
 * One edge of a window. The machine's ticks and this process's time are read
 * right at the edge (last at the start, first at the end), so the scan of
 * /proc, which takes milliseconds of this process, stays outside the window.
 */
export function takeCpuSnapshot(
  containers: readonly AccountedContainer[],
  edge: 'start' | 'end',
): CpuSnapshot {
  const edgeReadings = () => ({
    machine: readMachineTicks(),
    selfUs: ((usage) => usage.user + usage.system)(process.cpuUsage()),
  });
  const atEnd = edge === 'end' ? edgeReadings() : undefined;
  const containerNs = new Map<string, number>();
  const containerPids = new Set<number>();
  for (const container of containers) {
    try {
      containerNs.set(container.id, readCgroupCpuNs(container.cgroup));
      for (const pid of readCgroupPids(container.cgroup)) containerPids.add(pid);
    } catch {
      // Its cgroup is gone: the container stopped (the split reports it as changed).
    }
  }
  const processes = readProcessTable();
  return { ...(atEnd ?? edgeReadings()), processes, containerNs, containerPids };
}

// --- The split of a window -------------------------------------------------

/** What one edge of a window saw. */
export interface CpuSnapshot {
  machine: MachineTicks;
  processes: ReadonlyMap<number, ProcessTicks>;
  /** CPU time of each container's cgroup, in ns, by container id. */
  containerNs: ReadonlyMap<string, number>;
  /** Pids inside the containers' cgroups (their CPU is counted through the cgroups). */
  containerPids: ReadonlySet<number>;
  /** This process's CPU time (process.cpuUsage), in µs. */
  selfUs: number;
}

/** A window's CPU in ms, each part the sum over the window. */
export interface CpuSplit {
  /** The machine's busy time less the load generator's. */
  serviceMs: number;
  /** The runner containers' cgroups. */
  containersMs: number;
  /** This process (the control plane). */
  controlPlaneMs: number;
  dockerdMs: number;
  containerdMs: number;
  /** The containerd-shim processes of the accounted containers. */
  shimMs: number;
  /** service less the named parts above. */
  kernelAndOtherMs: number;
  /** Of kernelAndOther: kernel threads (kworker, ksoftirqd, …). */
  kernelThreadsMs: number;
  /** Of kernelAndOther: every other process running at an edge (other users of the machine among them). */
  otherProcessesMs: number;
  /** Of kernelAndOther: processes that exited in the window, as their parents' reaped-children time shows them. */
  exitedMs: number;
  /** Of kernelAndOther: what no process shows (interrupts, tick rounding). */
  unattributedMs: number;
  /** The load generator, as it measured itself. */
  loadGeneratorMs: number;
  /** Steal time of the window (not in service). */
  stealMs: number;
  /** Containers present at one edge of the window only. */
  containersChanged: string[];
}

export interface SplitOptions {
  /** This process's pid (counted through `selfUs`). */
  selfPid: number;
  /** The load generator's pid (counted through `loadGeneratorMs`). */
  loadGeneratorPid: number;
  /** The load generator's CPU time over the window, in ms. */
  loadGeneratorMs: number;
  /** Clock ticks per second of /proc's figures. */
  ticksPerSecond: number;
}

type ProcessGroup = 'dockerd' | 'containerd' | 'shim' | 'kernel' | 'other' | 'counted';

/**
 * Splits the window between two snapshots. A process seen at the end only
 * started in the window, so all its time counts. One that exited in the
 * window shows in its parent's reaped-children time, which holds its whole
 * life: so `exited` is the growth of every process's reaped-children time
 * less what the exited ones had used by the window's start. The containers'
 * processes are counted through their cgroups (exited ones included) and are
 * left out of both.
 */
export function splitWindow(
  before: CpuSnapshot,
  after: CpuSnapshot,
  options: SplitOptions,
): CpuSplit {
  const msPerTick = 1000 / options.ticksPerSecond;
  const inContainer = (pid: number) =>
    before.containerPids.has(pid) || after.containerPids.has(pid);
  // The shims of the accounted containers are the parents of their first
  // processes; other shims serve other people's containers.
  const shims = new Set<number>();
  for (const table of [before.processes, after.processes]) {
    for (const p of table.values()) if (inContainer(p.pid)) shims.add(p.ppid);
  }
  const groupOf = (p: ProcessTicks): ProcessGroup => {
    if (p.pid === options.selfPid || p.pid === options.loadGeneratorPid) return 'counted';
    if (inContainer(p.pid)) return 'counted';
    if (p.comm === 'dockerd') return 'dockerd';
    if (p.comm === 'containerd') return 'containerd';
    // comm is cut at 15 bytes: containerd-shim-runc-v2 reads "containerd-shim".
    if (p.comm.startsWith('containerd-shim') && shims.has(p.pid)) return 'shim';
    return isKernelThread(p) ? 'kernel' : 'other';
  };
  const ticks: Record<ProcessGroup, number> = {
    dockerd: 0,
    containerd: 0,
    shim: 0,
    kernel: 0,
    other: 0,
    counted: 0,
  };
  let exitedTicks = 0;
  const sameProcess = (start: ProcessTicks | undefined, end: ProcessTicks | undefined) =>
    start !== undefined && end !== undefined && start.startTime === end.startTime;
  for (const [pid, end] of after.processes) {
    const start = before.processes.get(pid);
    const same = sameProcess(start, end);
    ticks[groupOf(end)] += end.ticks - (same ? start!.ticks : 0);
    if (!inContainer(pid)) exitedTicks += end.childTicks - (same ? start!.childTicks : 0);
  }
  for (const [pid, start] of before.processes) {
    if (sameProcess(start, after.processes.get(pid)) || inContainer(pid)) continue;
    exitedTicks -= start.ticks + start.childTicks;
  }
  let containerNs = 0;
  const changed: string[] = [];
  for (const [id, end] of after.containerNs) {
    const start = before.containerNs.get(id);
    if (start === undefined) changed.push(id);
    containerNs += end - (start ?? 0);
  }
  for (const id of before.containerNs.keys()) if (!after.containerNs.has(id)) changed.push(id);

  const busyMs = (after.machine.busy - before.machine.busy) * msPerTick;
  const serviceMs = busyMs - options.loadGeneratorMs;
  const named = {
    containersMs: containerNs / 1e6,
    controlPlaneMs: (after.selfUs - before.selfUs) / 1000,
    dockerdMs: ticks.dockerd * msPerTick,
    containerdMs: ticks.containerd * msPerTick,
    shimMs: ticks.shim * msPerTick,
  };
  const kernelAndOtherMs =
    serviceMs -
    named.containersMs -
    named.controlPlaneMs -
    named.dockerdMs -
    named.containerdMs -
    named.shimMs;
  const kernelThreadsMs = ticks.kernel * msPerTick;
  const otherProcessesMs = ticks.other * msPerTick;
  const exitedMs = exitedTicks * msPerTick;
  return {
    serviceMs,
    ...named,
    kernelAndOtherMs,
    kernelThreadsMs,
    otherProcessesMs,
    exitedMs,
    unattributedMs: kernelAndOtherMs - kernelThreadsMs - otherProcessesMs - exitedMs,
    loadGeneratorMs: options.loadGeneratorMs,
    stealMs: (after.machine.steal - before.machine.steal) * msPerTick,
    containersChanged: changed,
  };
}
