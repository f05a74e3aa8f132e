/**
 * Before anything is written (the data directory, a generated `master.key`),
 * the Docker engine must answer: a start that cannot reach it says where it
 * looked and what to do, instead of `connect ENOENT /var/run/docker.sock`.
 */
import Dockerode from 'dockerode';
import { McphostError } from '../../errors.js';

/** Where Dockerode looks for the engine: DOCKER_HOST, else the default socket. */
export function dockerEndpoint(env: NodeJS.ProcessEnv = process.env): string {
  return env.DOCKER_HOST || 'unix:///var/run/docker.sock';
}

/** Pings the engine; throws ERR_SANDBOX_UNAVAILABLE naming the fix when it does not answer. */
export async function checkDockerEngine(docker: Dockerode = new Dockerode()): Promise<void> {
  try {
    await docker.ping();
  } catch (error) {
    throw explainDockerFailure(error, dockerEndpoint());
  }
}

/** The failure to reach the engine at `where`, as an operator can act on it. */
export function explainDockerFailure(error: unknown, where: string): McphostError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = (error as Error | undefined)?.message ?? String(error);
  const processDriver = 'or set SANDBOX_DRIVER=process for development only (no isolation)';
  const why: Record<string, string> = {
    ENOENT: `no Docker engine socket at ${where}. Start Docker (e.g. \`systemctl start docker\`), or point DOCKER_HOST at your engine's socket (rootless Docker: unix://$XDG_RUNTIME_DIR/docker.sock), ${processDriver}`,
    EACCES: `permission denied on the Docker socket at ${where}. Add this user to the socket's group (\`sudo usermod -aG docker $USER\`, then log in again), or in compose set DOCKER_GID to the socket's group id (\`stat -c %g /var/run/docker.sock\`)`,
    ECONNREFUSED: `nothing answers at ${where}: is the Docker engine running? Check DOCKER_HOST, ${processDriver}`,
  };
  return new McphostError(
    'ERR_SANDBOX_UNAVAILABLE',
    why[code ?? ''] ??
      `the Docker engine at ${where} does not answer (${message}); check DOCKER_HOST, ${processDriver}`,
    { cause: error },
  );
}
