/**
 * `control-plane/main.ts` run as its own process, as `npm start` runs it
 * (node with tsx as an `--import` loader), with its stdout and stderr kept
 * apart: the banner and log lines are what the first-hour tests read.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const TSX_LOADER = pathToFileURL(join(REPO_ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const MAIN = join(REPO_ROOT, 'control-plane/main.ts');

/** A started service: what it wrote, and how to stop it. */
export interface ServiceProcess {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** The banner: stdout from "mcphost is running." to the blank line that ends it. */
  banner(): string;
  /** stdout without the banner: the log lines. */
  logLines(): string[];
  /** SIGINT (Ctrl-C), then the exit code; SIGKILL after `graceMs` (default 30 000). */
  stop(graceMs?: number): Promise<number | null>;
}

/**
 * Starts main.ts with exactly `env` (nothing of this process's environment
 * but PATH and HOME) in `cwd`, and resolves once its banner is out; rejects
 * with its output when it exits first or takes longer than `waitMs`.
 */
export async function startService(options: {
  env: Record<string, string>;
  args?: string[];
  cwd: string;
  /** How long the banner may take, in ms; default 180 000. */
  waitMs?: number;
  /** What to run instead of main.ts (e.g. `npm start`). */
  command?: { file: string; args: string[] };
  /** Run in a process group of its own, and stop the whole group (as Ctrl-C in a terminal does). */
  processGroup?: boolean;
}): Promise<ServiceProcess> {
  const command = options.command ?? {
    file: process.execPath,
    args: ['--import', TSX_LOADER, MAIN, ...(options.args ?? [])],
  };
  const child = spawn(command.file, command.args, {
    cwd: options.cwd,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? options.cwd,
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.processGroup === true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolveExit) =>
    child.once('exit', (code) => resolveExit(code)),
  );
  let hasExited = false;
  void exited.then(() => (hasExited = true));

  // The banner is one write (under PIPE_BUF, so one read): its first line, then lines
  // that are empty or indented, up to the next log line or the end of the output.
  const bannerRange = (): [number, number] | undefined => {
    const marker = '\nmcphost is running.\n';
    const start = stdout.indexOf(marker);
    if (start === -1) return undefined;
    let end = start + marker.length;
    while (end < stdout.length) {
      const next = stdout.indexOf('\n', end);
      if (next === -1) break;
      const line = stdout.slice(end, next);
      if (line !== '' && !line.startsWith(' ')) break;
      end = next + 1;
    }
    return [start + 1, end];
  };
  const service: ServiceProcess = {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    banner: () => {
      const range = bannerRange();
      return range === undefined ? '' : stdout.slice(range[0], range[1]);
    },
    logLines: () => {
      const range = bannerRange();
      const rest =
        range === undefined ? stdout : stdout.slice(0, range[0]) + stdout.slice(range[1]);
      return rest.split('\n').filter((line) => line.trim() !== '');
    },
    stop: async (graceMs = 30_000) => {
      if (hasExited) return exited;
      const signal = (name: NodeJS.Signals) => {
        if (options.processGroup === true) process.kill(-child.pid!, name);
        else child.kill(name);
      };
      signal('SIGINT');
      const timer = setTimeout(() => signal('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
  const deadline = Date.now() + (options.waitMs ?? 180_000);
  while (bannerRange() === undefined) {
    if (hasExited) {
      throw new Error(`the service exited before its banner:\n${stdout}\n${stderr}`);
    }
    if (Date.now() > deadline) {
      await service.stop(5_000);
      throw new Error(`no banner within ${options.waitMs ?? 180_000} ms:\n${stdout}\n${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return service;
}
