/**
 * One wording for "this engine lacks the OCI runtime a server asked for",
 * used where a server is saved (422) and where a container fails to start
 * (ERR_SANDBOX_UNAVAILABLE), so an operator reads the same remedy in both.
 */

/** The message naming the missing runtime, the engine's runtimes and the remedy. */
export function missingRuntimeMessage(runtime: string, available: readonly string[]): string {
  const have = available.length === 0 ? 'none' : available.join(', ');
  const remedy =
    runtime === 'runsc'
      ? `; install gVisor (Debian: apt-get install runsc), add it to /etc/docker/daemon.json "runtimes" and send dockerd SIGHUP`
      : '';
  return `the sandbox engine has no runtime "${runtime}" (it has: ${have})${remedy}`;
}
