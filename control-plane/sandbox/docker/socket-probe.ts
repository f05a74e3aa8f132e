/**
 * Whether the local data path (RUNNER_SOCKET_DIR) works with this engine,
 * checked once at start with the real thing: one hardened container of the
 * runner image connects to a socket made in the directory and echoes a random
 * token back. It fails where the path cannot work — a remote engine, a
 * control plane whose paths are not the engine host's (in a container), a
 * security module that forbids the connect — and says so before any tool
 * call depends on it.
 */
import { randomBytes } from 'node:crypto';
import type { SandboxDriver } from '../driver.js';
import { buildRawBaselineCommand } from '../harness-command.js';

/**
 * Resolves when a container answered through the socket within `timeoutMs`
 * (a runner's start timeout); rejects with why not. The container runs on the
 * engine's default runtime, as runners that name none do: under gVisor the
 * connect is refused, and the probe says so.
 */
export async function probeSocketDataPath(driver: SandboxDriver, timeoutMs: number): Promise<void> {
  const instance = await driver.start({
    labels: { 'mcphost.pool': 'socket-probe' },
    memoryMb: 64,
    cpus: 0.5,
    pids: 32,
    command: buildRawBaselineCommand(),
  });
  const token = `${randomBytes(16).toString('hex')}\n`;
  let retry: NodeJS.Timeout | undefined;
  let deadline: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      let received = '';
      instance.onStdout((chunk) => {
        received += chunk.toString('utf8');
        if (received.includes(token)) resolve();
      });
      void instance.exited.then((exit) => {
        const tail = exit.stderrTail.trim();
        reject(
          new Error(
            `the probe container exited (code ${exit.exitCode})${tail ? `: ${tail.slice(-400)}` : ''}`,
          ),
        );
      });
      deadline = setTimeout(
        () => reject(new Error(`no answer through the socket within ${timeoutMs} ms`)),
        timeoutMs,
      );
      // The echo connects once it runs: the write is retried until the channel takes it.
      const send = (): void => {
        try {
          instance.write(token);
        } catch {
          retry = setTimeout(send, 20);
        }
      };
      send();
    });
  } finally {
    clearTimeout(retry);
    clearTimeout(deadline);
    await instance.kill();
  }
}
