/**
 * Stops and starts this machine's Docker engine the way it was started by
 * hand (`dockerd --bridge=none --iptables=false --ip6tables=false`, pid in
 * /var/run/docker.pid): SIGTERM to that pid, wait for the exit, then the same
 * command line again, detached, logging where the old one logged. Stopping
 * the engine stops EVERY container on the machine: only the last file of the
 * fault suite uses this.
 */
import { spawn } from 'node:child_process';
import {
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  closeSync,
} from 'node:fs';
import { docker, pollUntil } from './plane-containers.js';

const PID_FILE = '/var/run/docker.pid';
const DEFAULT_ARGS = ['--bridge=none', '--iptables=false', '--ip6tables=false'];
const DEFAULT_LOG = '/tmp/mcphost-ci-dockerd.log';

/** How the running engine was started, so it can be started again alike. */
export interface EngineLaunch {
  args: string[];
  logPath: string;
}

let lastLaunch: EngineLaunch = { args: DEFAULT_ARGS, logPath: DEFAULT_LOG };

/** Pids of running (not zombie) dockerd processes. */
export function dockerdPids(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      if (/^Name:\s+dockerd$/m.test(status) && !/^State:\s+Z/m.test(status))
        pids.push(Number(entry));
    } catch {
      // exited while we looked
    }
  }
  return pids;
}

/** True when the engine answers a ping. */
export async function engineAnswers(): Promise<boolean> {
  return docker.ping().then(
    () => true,
    () => false,
  );
}

/** SIGTERMs the engine (pid from /var/run/docker.pid) and waits up to `timeoutMs` for it to exit. */
export async function stopDockerEngine(timeoutMs = 90_000): Promise<EngineLaunch> {
  const pid = Number(readFileSync(PID_FILE, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`${PID_FILE} holds no pid`);
  const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  let logPath = DEFAULT_LOG;
  try {
    const target = readlinkSync(`/proc/${pid}/fd/1`);
    if (target.startsWith('/')) logPath = target;
  } catch {
    // no readable stdout: the default log
  }
  lastLaunch = { args: cmdline.slice(1), logPath };
  process.kill(pid, 'SIGTERM');
  const gone = await pollUntil(async () => !dockerdPids().includes(pid), timeoutMs, 250);
  if (!gone) throw new Error(`dockerd ${pid} did not exit within ${timeoutMs} ms of SIGTERM`);
  return lastLaunch;
}

/** Starts the engine as it was started before (detached) and waits until it answers. */
export async function startDockerEngine(
  launch: EngineLaunch = lastLaunch,
  timeoutMs = 90_000,
): Promise<void> {
  if (dockerdPids().length === 0 && existsSync(PID_FILE)) rmSync(PID_FILE, { force: true });
  const log = openSync(launch.logPath, 'a');
  try {
    const child = spawn('dockerd', launch.args, {
      detached: true,
      stdio: ['ignore', log, log],
    });
    child.unref();
  } finally {
    closeSync(log);
  }
  if (!(await pollUntil(engineAnswers, timeoutMs, 250)))
    throw new Error(`the Docker engine did not answer within ${timeoutMs} ms of its start`);
}

/** Leaves the engine running whatever happened: starts it when no dockerd runs, then waits for it. */
export async function ensureDockerEngineRunning(timeoutMs = 90_000): Promise<void> {
  if (await engineAnswers()) return;
  if (dockerdPids().length === 0) {
    await startDockerEngine(lastLaunch, timeoutMs);
    return;
  }
  if (!(await pollUntil(engineAnswers, timeoutMs, 250)))
    throw new Error('a dockerd process runs but the engine does not answer');
}
