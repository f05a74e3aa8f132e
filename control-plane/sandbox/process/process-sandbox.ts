/**
 * SandboxDriver that runs the harness as a local child process — for
 * development without Docker and for fast tests. It is NOT a security
 * boundary: the tool code runs as this user, with this machine's network and
 * files. It warns once, loudly, when constructed.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { McphostError } from '../../errors.js';
import type { SandboxDriver, SandboxExit, SandboxInstance, SandboxSpec } from '../driver.js';
import { DEFAULT_STDERR_TAIL_BYTES, StderrTail } from '../stderr-tail.js';
import { looksLikeHeapExhaustion } from '../faults.js';
import { shuttingDown } from '../sandbox-errors.js';
import { harnessNodeFlags } from '../harness-command.js';
import { StdoutFanout } from '../stdout-fanout.js';
import { describeProblems } from '../../validation-problems.js';

/** Options of {@link ProcessSandbox}. */
export interface ProcessSandboxOptions {
  /** Folder holding harness.mjs (and lodash.min.js next to it). */
  harnessDir: string;
  /** Receives the one-time "not isolated" warning; default `console.warn`. */
  warn?: (message: string) => void;
  /** Node binary to run; default `process.execPath`. */
  nodePath?: string;
  /** Bytes of stderr kept for exit diagnostics; default 8 192. */
  stderrTailBytes?: number;
}

const OptionsSchema = z.object({
  harnessDir: z.string().min(1),
  nodePath: z.string().min(1).optional(),
  stderrTailBytes: z.number().int().positive().optional(),
});

/** What `runtimes()` reports: the default every server starts with, so development works unchanged. */
const PROCESS_RUNTIMES = ['runc'] as const;

/** The only environment a child gets: enough PATH to find system tools, nothing else. */
const CHILD_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };

/** Runs each instance as a child process of this one (no isolation). */
export class ProcessSandbox implements SandboxDriver {
  readonly kind = 'process' as const;
  readonly #harnessPath: string;
  readonly #nodePath: string;
  readonly #stderrTailBytes: number;
  readonly #live = new Set<ProcessInstance>();
  #closed = false;

  constructor(options: ProcessSandboxOptions) {
    const parsed = OptionsSchema.safeParse(options);
    if (!parsed.success) throw new TypeError(`ProcessSandbox: ${describeProblems(parsed.error)}`);
    this.#harnessPath = join(options.harnessDir, 'harness.mjs');
    this.#nodePath = options.nodePath ?? process.execPath;
    this.#stderrTailBytes = options.stderrTailBytes ?? DEFAULT_STDERR_TAIL_BYTES;
    (options.warn ?? console.warn)(
      'WARNING: the process sandbox does not isolate tools — tool code runs as this user with this ' +
        "machine's network and files. Use it for development only; production needs the Docker driver.",
    );
  }

  async start(spec: SandboxSpec): Promise<SandboxInstance> {
    if (this.#closed) throw shuttingDown('the process sandbox driver');
    // Running a gVisor server's code as a plain process would silently drop the isolation it asked for.
    if (spec.runtime !== undefined && spec.runtime !== 'runc')
      throw new McphostError(
        'ERR_SANDBOX_UNAVAILABLE',
        `the process sandbox cannot run runtime "${spec.runtime}" (it has: ${PROCESS_RUNTIMES.join(', ')}); use the Docker driver with ${spec.runtime} registered`,
      );
    const [program, ...args] = this.#commandFor(spec);
    const workDir = await mkdtemp(join(tmpdir(), 'mcphost-process-'));
    const child = spawn(program ?? this.#nodePath, args, {
      cwd: workDir,
      env: CHILD_ENV,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const instance = new ProcessInstance(child, new StderrTail(this.#stderrTailBytes), workDir);
    await instance.spawned.catch(async (error: unknown) => {
      await rm(workDir, { recursive: true, force: true });
      throw new McphostError(
        'ERR_SANDBOX_UNAVAILABLE',
        `cannot start ${program}: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    });
    this.#live.add(instance);
    void instance.exited.then(() => this.#live.delete(instance));
    return instance;
  }

  /** Child processes die with their parent's pipes; nothing is left to find. */
  async reapLeftovers(): Promise<number> {
    return 0;
  }

  /** An exited child is gone with its process: nothing stays behind. */
  async reapStopped(): Promise<number> {
    return 0;
  }

  async ping(): Promise<void> {}

  /** Only `runc`, standing for "no extra kernel": a child process has no OCI runtime at all. */
  async runtimes(): Promise<string[]> {
    return [...PROCESS_RUNTIMES];
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#live].map((instance) => instance.kill()));
  }

  #commandFor(spec: SandboxSpec): string[] {
    if (spec.command === undefined)
      return [this.#nodePath, ...harnessNodeFlags(spec.memoryMb), this.#harnessPath];
    const [first, ...rest] = spec.command;
    // `node` in a baseline command means the same node that runs the harness.
    return first === 'node' ? [this.#nodePath, ...rest] : spec.command;
  }
}

/** One child process as a SandboxInstance. */
class ProcessInstance implements SandboxInstance {
  readonly id: string;
  readonly exited: Promise<SandboxExit>;
  /** Settles once the child has spawned (or failed to). */
  readonly spawned: Promise<void>;
  readonly #child: ChildProcessWithoutNullStreams;
  #killing: Promise<void> | undefined;
  readonly #stdout = new StdoutFanout();

  constructor(child: ChildProcessWithoutNullStreams, stderr: StderrTail, workDir: string) {
    this.#child = child;
    this.id = `process:${child.pid ?? 'unstarted'}`;
    this.spawned = new Promise((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.once('error', reject);
    });
    child.stdout.on('data', (chunk: Buffer) => this.#stdout.emit(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    // EPIPE after the child died is reported by `exited`, not thrown.
    child.stdin.on('error', () => {});
    this.exited = new Promise<SandboxExit>((resolve) => {
      child.once('close', (code, signal) => {
        const stderrTail = stderr.text();
        resolve({
          exitCode: code,
          signal: signal ?? undefined,
          oomKilled: looksLikeHeapExhaustion(stderrTail),
          stderrTail,
        });
      });
      child.once('error', () =>
        resolve({ exitCode: null, oomKilled: false, stderrTail: stderr.text() }),
      );
    }).finally(() => rm(workDir, { recursive: true, force: true }).catch(() => {}));
  }

  write(data: string): void {
    if (
      this.#child.exitCode !== null ||
      this.#child.signalCode !== null ||
      !this.#child.stdin.writable
    ) {
      throw new Error(`${this.id} no longer takes input`);
    }
    this.#child.stdin.write(data);
  }

  onStdout(listener: (chunk: Buffer) => void): void {
    this.#stdout.listen(listener);
  }

  kill(): Promise<void> {
    this.#killing ??= (async () => {
      this.#child.kill('SIGKILL');
      await this.exited;
    })();
    return this.#killing;
  }
}
