/**
 * The harness needs Node's `--experimental-vm-modules` flag. Without it, an
 * `import()` in tool code is rejected by Node with an error object of the HOST
 * realm, and `error.constructor.constructor('return process')()` escapes the
 * sandbox. With it, our `importModuleDynamically` callback runs and rejects
 * with an error made inside the tool's context.
 *
 * Container commands should pass the flag; when they do not, the harness starts
 * itself again with it (same stdio) rather than run unsafely.
 *
 * node:child_process is loaded only for that relaunch: importing it costs every
 * runner 2–7 ms of CPU at start (measured, node 20), on its cold-start path,
 * for a path the control plane's commands never take.
 */

const FLAG = '--experimental-vm-modules';
const RELAUNCHED_ENV = 'MCPHOST_HARNESS_RELAUNCHED';
/** How often a relaunched harness checks that its parent is alive, in ms. */
const PARENT_CHECK_INTERVAL_MS = 500;

/** True when this process runs with --experimental-vm-modules. */
export function hasVmModulesFlag(env: NodeJS.ProcessEnv = process.env): boolean {
  return process.execArgv.includes(FLAG) || (env.NODE_OPTIONS ?? '').split(/\s+/).includes(FLAG);
}

/**
 * Returns 'ready' when the flag is set (and, in a relaunched child, starts
 * watching the parent); otherwise relaunches this script with the flag, proxies
 * its exit, and returns 'relaunched' (the caller must then do nothing more).
 */
export function ensureVmModulesFlag(): 'ready' | 'relaunched' {
  if (hasVmModulesFlag()) {
    if (process.env[RELAUNCHED_ENV] === '1') exitWhenOrphaned();
    return 'ready';
  }
  if (process.env[RELAUNCHED_ENV] === '1') {
    process.stderr.write(
      `harness: ${FLAG} is still missing after a relaunch; refusing to run tool code\n`,
    );
    process.exit(78);
  }
  relaunch().catch((error: unknown) => {
    process.stderr.write(`harness: cannot relaunch with ${FLAG}: ${String(error)}\n`);
    process.exit(78);
  });
  return 'relaunched';
}

/** Starts this script again with the flag, forwards signals to it and exits with its status. */
async function relaunch(): Promise<void> {
  // A pending import keeps the process alive until the child's handle does.
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, [FLAG, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, [RELAUNCHED_ENV]: '1' },
  });
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    process.on(signal, () => child.kill(signal));
  }
  child.on('exit', (code, signal) =>
    process.exit(code ?? (signal === null ? 1 : 128 + signalNumber(signal))),
  );
}

// A SIGKILLed parent cannot forward anything; the child notices it was re-parented.
function exitWhenOrphaned(): void {
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) process.exit(70);
  }, PARENT_CHECK_INTERVAL_MS).unref();
}

function signalNumber(signal: NodeJS.Signals): number {
  return ({ SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 } as Record<string, number>)[signal] ?? 1;
}
