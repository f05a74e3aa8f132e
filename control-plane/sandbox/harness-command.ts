/**
 * How the harness is launched: its place inside the runner image, the V8 flags
 * derived from a memory limit, and the raw echo program benchmarks compare it
 * with. Both drivers use these so Docker and process instances start alike.
 *
 * Node flags travel as an entrypoint override (`node --experimental-vm-modules
 * --max-old-space-size=N /opt/mcphost/harness.mjs`), never as NODE_OPTIONS: the environment is
 * visible to anything that can read /proc/self/environ, the command line says
 * the same thing in the open and leaves the environment empty of mcphost knobs.
 */

/** Where Dockerfile.runner copies the harness bundle inside the image. */
export const HARNESS_DIR_IN_IMAGE = '/opt/mcphost';

/** The harness entry file inside the image. */
export const HARNESS_PATH_IN_IMAGE = `${HARNESS_DIR_IN_IMAGE}/harness.mjs`;

/** The runner image's user, which its containers run as (image-build/ owns the image). */
export { RUNNER_USER } from '../image-build/index.js';

/** Smallest V8 old-space size we ever ask for, in MiB. */
const MIN_HEAP_MB = 16;

/**
 * V8 old-space limit for a container of `memoryMb` MiB: about 70 %, leaving room
 * for the young generation, code and buffers so a heap hog fails inside V8
 * ("heap out of memory") before the kernel's OOM killer has to step in.
 */
export function heapLimitMb(memoryMb: number): number {
  if (!Number.isFinite(memoryMb) || memoryMb <= 0) {
    throw new TypeError(`heapLimitMb: memoryMb must be a positive number, got ${memoryMb}`);
  }
  return Math.max(MIN_HEAP_MB, Math.floor(memoryMb * 0.7));
}

/**
 * Flag the harness needs to confine `import()` in tool code (see
 * runner-image/vm-modules-flag.ts); without it the harness relaunches itself,
 * costing a second process and its start-up time.
 */
export const VM_MODULES_FLAG = '--experimental-vm-modules';

/** Node flags the harness runs with under a memory limit of `memoryMb` MiB. */
export function harnessNodeFlags(memoryMb: number): string[] {
  return [VM_MODULES_FLAG, `--max-old-space-size=${heapLimitMb(memoryMb)}`];
}

/** Full command that starts the harness inside the runner image. */
export function harnessCommandInImage(memoryMb: number): string[] {
  return ['node', ...harnessNodeFlags(memoryMb), HARNESS_PATH_IN_IMAGE];
}

/**
 * A tiny Node program that writes every stdin chunk straight back to stdout,
 * or, given `--channel=<path>` like the harness (the local data path), every
 * chunk of that socket back to it: the raw baseline of either data path.
 */
export const RAW_ECHO_PROGRAM =
  "const a=process.argv.find((x)=>x.startsWith('--channel='));" +
  "if(a){const s=require('net').connect(a.slice(10));s.on('data',(c)=>s.write(c));s.on('close',()=>process.exit(0))}" +
  "else process.stdin.on('data',(c)=>process.stdout.write(c))";

/**
 * The raw baseline for benchmarks: the same image running a bare echo instead of
 * the harness (pass as `SandboxSpec.command`), so harness overhead can be told
 * apart from container and stdio overhead.
 */
export function buildRawBaselineCommand(): string[] {
  // `--` ends node's options: a `--channel=` appended after it reaches the program's argv.
  return ['node', '-e', RAW_ECHO_PROGRAM, '--'];
}
