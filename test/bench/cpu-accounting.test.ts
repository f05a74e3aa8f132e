import { describe, expect, it } from 'vitest';
import {
  cgroupCpuSource,
  isKernelThread,
  locateCgroupCpu,
  parseCgroupCpuNs,
  parseCgroupMembership,
  parseCgroupMounts,
  parseMachineStat,
  parseProcessStat,
  readCgroupCpuNs,
  readMachineTicks,
  readProcessTable,
  splitWindow,
  type CpuSnapshot,
  type ProcessTicks,
} from '../../bench/cpu-accounting.js';

/** A /proc/<pid>/stat line as proc(5) lays it out (52 fields), with the fields a test sets. */
function statLine(
  pid: number,
  comm: string,
  fields: { ppid?: number; flags?: number; utime?: number; stime?: number; start?: number },
): string {
  const rest = Array.from({ length: 50 }, () => '0'); // fields 3 … 52
  rest[0] = 'S';
  rest[4 - 3] = String(fields.ppid ?? 1);
  rest[9 - 3] = String(fields.flags ?? 0x400100);
  rest[14 - 3] = String(fields.utime ?? 0);
  rest[15 - 3] = String(fields.stime ?? 0);
  rest[16 - 3] = '77'; // cutime: children's time is not the process's
  rest[22 - 3] = String(fields.start ?? 1000);
  return `${pid} (${comm}) ${rest.join(' ')}\n`;
}

describe('parseMachineStat', () => {
  it('counts user, nice, system, irq and softirq as busy; not idle, iowait, steal or guest', () => {
    const text = [
      'cpu  34904 10 6315 61639 1853 3 500 62 900 40',
      'cpu0 8593 0 2525 41013 164 0 217 29 0 0',
      'intr 123 0 0',
      '',
    ].join('\n');
    expect(parseMachineStat(text)).toEqual({ busy: 34904 + 10 + 6315 + 3 + 500, steal: 62 });
  });

  it('refuses a text without the cpu line', () => {
    expect(() => parseMachineStat('cpu0 1 2 3 4\n')).toThrow(/no "cpu" line/);
  });
});

describe('parseProcessStat', () => {
  it('reads the fields after the last parenthesis, whatever the command name holds', () => {
    const parsed = parseProcessStat(
      statLine(4321, 'a) (b) S 9 (x', { ppid: 17, utime: 250, stime: 40, start: 98765 }),
    );
    expect(parsed).toEqual({
      pid: 4321,
      comm: 'a) (b) S 9 (x',
      ppid: 17,
      flags: 0x400100,
      ticks: 290,
      childTicks: 77,
      startTime: 98765,
    });
  });

  it('reads a real line', () => {
    const line =
      '10965 (containerd-shim) S 1 10965 5617 0 -1 1077936384 1031 3613 0 7 12 31 5 2 20 0 10 0 53205 1244520448 2390 18446744073709551615 1 1 0 0 0 0 1002055680 0 2143420158 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0';
    expect(parseProcessStat(line)).toMatchObject({
      pid: 10965,
      comm: 'containerd-shim',
      ppid: 1,
      ticks: 43,
      childTicks: 7,
      startTime: 53205,
    });
  });

  it('refuses a line without a command name', () => {
    expect(() => parseProcessStat('12 S 1 2 3')).toThrow(/unreadable/);
  });

  it('tells kernel threads by their flag, and kthreadd and its children', () => {
    const kworker = parseProcessStat(statLine(40, 'kworker/0:1', { ppid: 2, flags: 0x04208060 }));
    const init = parseProcessStat(statLine(1, 'init', { ppid: 0 }));
    const kthreadd = parseProcessStat(statLine(2, 'kthreadd', { ppid: 0, flags: 0x208040 }));
    expect([kworker, init, kthreadd].map(isKernelThread)).toEqual([true, false, true]);
  });
});

const id = 'be1777734e24d8d04bddc76727fc4463513623131f4f93394d3518ef01844129';

/** Docker's cgroupfs driver on a hybrid host: v1 controllers and a v2 line without cpu. */
const hybridMembership = `9:name=systemd:/docker/${id}
4:memory:/docker/${id}
2:cpuacct:/docker/${id}
1:cpu:/docker/${id}
0::/docker/${id}
`;

const hybridMountinfo = `23 1 0:21 / /sys rw,nosuid - sysfs sysfs rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`;

describe('cgroups', () => {
  it('parses /proc/<pid>/cgroup, a path with colons included', () => {
    expect(parseCgroupMembership('3:cpu,cpuacct:/a:b\n0::/x\n')).toEqual([
      { hierarchy: 3, controllers: ['cpu', 'cpuacct'], path: '/a:b' },
      { hierarchy: 0, controllers: [], path: '/x' },
    ]);
  });

  it('parses the cgroup mounts of mountinfo, optional fields and escapes included', () => {
    const mounts = parseCgroupMounts(
      `${hybridMountinfo}50 31 0:40 /kube /sys/fs/my\\040cgroup rw shared:5 master:2 - cgroup cgroup rw,cpu,cpuacct\n`,
    );
    expect(mounts).toContainEqual({
      version: 1,
      mountPoint: '/sys/fs/cgroup/cpuacct',
      root: '/',
      controllers: ['rw', 'cpuacct'],
    });
    expect(mounts).toContainEqual({
      version: 2,
      mountPoint: '/sys/fs/cgroup/unified',
      root: '/',
      controllers: [],
    });
    expect(mounts).toContainEqual({
      version: 1,
      mountPoint: '/sys/fs/my cgroup',
      root: '/kube',
      controllers: ['rw', 'cpu', 'cpuacct'],
    });
    expect(mounts.some((m) => m.mountPoint === '/sys')).toBe(false);
  });

  it('prefers the v1 cpuacct hierarchy on a hybrid host', () => {
    expect(
      cgroupCpuSource(parseCgroupMembership(hybridMembership), parseCgroupMounts(hybridMountinfo)),
    ).toEqual({ directory: `/sys/fs/cgroup/cpuacct/docker/${id}`, file: 'cpuacct.usage' });
  });

  it('reads cpu.stat under cgroup v2 with the systemd driver', () => {
    const membership = `0::/system.slice/docker-${id}.scope\n`;
    const mountinfo = '30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n';
    expect(
      cgroupCpuSource(parseCgroupMembership(membership), parseCgroupMounts(mountinfo)),
    ).toEqual({
      directory: `/sys/fs/cgroup/system.slice/docker-${id}.scope`,
      file: 'cpu.stat',
    });
  });

  it('maps a path under a mount of a sub-tree, and finds nothing outside it', () => {
    const mounts = parseCgroupMounts('30 23 0:26 /outer /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n');
    expect(cgroupCpuSource(parseCgroupMembership('0::/outer/docker/abc\n'), mounts)).toEqual({
      directory: '/sys/fs/cgroup/docker/abc',
      file: 'cpu.stat',
    });
    expect(cgroupCpuSource(parseCgroupMembership('0::/elsewhere/abc\n'), mounts)).toBeUndefined();
  });

  it('reads CPU time in ns from either file', () => {
    expect(parseCgroupCpuNs('42398962\n', 'cpuacct.usage')).toBe(42398962);
    expect(
      parseCgroupCpuNs(
        'usage_usec 514118803\nuser_usec 428997930\nsystem_usec 85120872\n',
        'cpu.stat',
      ),
    ).toBe(514118803000);
    expect(() => parseCgroupCpuNs('user_usec 1\n', 'cpu.stat')).toThrow(/usage_usec/);
  });
});

describe('splitWindow', () => {
  const running = (
    pid: number,
    comm: string,
    ticks: number,
    extra: Partial<ProcessTicks> = {},
  ): ProcessTicks => ({
    pid,
    comm,
    ppid: 1,
    flags: 0x400100,
    ticks,
    childTicks: 0,
    startTime: 100,
    ...extra,
  });

  const table = (...processes: ProcessTicks[]) => new Map(processes.map((p) => [p.pid, p]));

  // 100 ticks per second: a tick is 10 ms.
  const before: CpuSnapshot = {
    machine: { busy: 10_000, steal: 5 },
    selfUs: 2_000_000,
    containerNs: new Map([
      ['c1', 1_000_000_000],
      ['c2', 500_000_000],
      ['gone', 100_000_000],
    ]),
    containerPids: new Set([501, 502, 503]),
    processes: table(
      running(1, 'init', 0, { ppid: 0, childTicks: 1000 }),
      running(10, 'bench', 999), // self: counted through selfUs
      running(11, 'node', 999), // the load generator
      running(20, 'dockerd', 100),
      running(21, 'containerd', 50),
      running(30, 'containerd-shim', 10), // ours: parent of 501
      running(31, 'containerd-shim', 10), // someone else's container
      running(40, 'kworker/0:1', 5, { ppid: 2, flags: 0x04208060 }),
      running(50, 'tsc', 300),
      running(60, 'exits', 40, { ppid: 50 }),
      running(70, 'reused', 80, { startTime: 100 }),
      running(501, 'docker-init', 1, { ppid: 30 }),
      running(502, 'node', 900, { ppid: 501 }),
      running(503, 'node', 50, { ppid: 501 }), // exits in its container
    ),
  };
  const after: CpuSnapshot = {
    machine: { busy: 10_500, steal: 7 }, // 5,000 ms busy
    selfUs: 3_200_000, // 1,200 ms
    containerNs: new Map([
      ['c1', 2_500_000_000], // 1,500 ms
      ['c2', 1_000_000_000], // 500 ms
    ]),
    containerPids: new Set([501, 502]),
    processes: table(
      // Reaped in the window: the old pid 70 (85 ticks in all) and one whose whole life was in it (3).
      running(1, 'init', 0, { ppid: 0, childTicks: 1000 + 85 + 3 }),
      running(10, 'bench', 1500),
      running(11, 'node', 1500),
      running(20, 'dockerd', 130), // 300 ms
      running(21, 'containerd', 51), // 10 ms
      running(30, 'containerd-shim', 30), // 200 ms
      running(31, 'containerd-shim', 15), // 50 ms, other
      running(40, 'kworker/0:1', 7, { ppid: 2, flags: 0x04208060 }), // 20 ms
      running(50, 'tsc', 310, { childTicks: 55 }), // 100 ms, other; reaped pid 60 (55 ticks in all)
      running(70, 'reused', 3, { startTime: 900 }), // a new process: all 30 ms, other
      running(80, 'started', 2), // started in the window: 20 ms, other
      running(501, 'docker-init', 1, { ppid: 30, childTicks: 60 }), // reaped 503: in the cgroup
      running(502, 'node', 5000, { ppid: 501 }), // counted through the cgroup
    ),
  };
  const split = splitWindow(before, after, {
    selfPid: 10,
    loadGeneratorPid: 11,
    loadGeneratorMs: 800,
    ticksPerSecond: 100,
  });

  it('takes the load generator out of the machine busy time', () => {
    expect(split.serviceMs).toBe(5000 - 800);
    expect(split.loadGeneratorMs).toBe(800);
    expect(split.stealMs).toBe(20);
  });

  it('names the containers (by cgroup), the control plane, the daemons and our shims', () => {
    expect(split.containersMs).toBe(2000);
    expect(split.controlPlaneMs).toBe(1200);
    expect(split.dockerdMs).toBe(300);
    expect(split.containerdMs).toBe(10);
    expect(split.shimMs).toBe(200);
  });

  it('splits the rest into kernel threads, other processes, exited ones and what no process shows', () => {
    expect(split.kernelAndOtherMs).toBe(4200 - 2000 - 1200 - 300 - 10 - 200);
    expect(split.kernelThreadsMs).toBe(20);
    // Another container's shim 50, tsc 100, a reused pid 30, a process started in the window 20.
    expect(split.otherProcessesMs).toBe(200);
    // In the window: pid 60 15 ticks (55 − 40), the old pid 70 5 (85 − 80), the short one 3.
    expect(split.exitedMs).toBe(230);
    expect(split.unattributedMs).toBe(490 - 20 - 200 - 230);
  });

  it('reports a container whose cgroup went away', () => {
    expect(split.containersChanged).toEqual(['gone']);
  });
});

describe('reading this machine', () => {
  it('finds this process in /proc, its cgroup’s CPU time and the machine’s busy ticks', () => {
    const self = readProcessTable().get(process.pid);
    expect(self?.ppid).toBe(process.ppid);
    expect(self?.ticks).toBeGreaterThanOrEqual(0);
    expect(readMachineTicks().busy).toBeGreaterThan(0);
    expect(readCgroupCpuNs(locateCgroupCpu(process.pid))).toBeGreaterThan(0);
  });
});
