/**
 * Which OCI runtimes the Docker engine under test has, asked once per test
 * file. Suites that must pass under both runc and gVisor's runsc run once per
 * runtime; a runtime the engine lacks becomes one visibly skipped test naming
 * why (`.ci/run` registers runsc, so CI runs every case).
 */
import { describe, it } from 'vitest';
import { DockerodeContainerClient } from '../../control-plane/sandbox/docker/container-client.js';

/** The runtimes a server may ask for (ServerRecord `runtime`). */
export type OciRuntime = 'runc' | 'runsc';

export const OCI_RUNTIMES: readonly OciRuntime[] = ['runc', 'runsc'];

/** `docker info` Runtimes of the engine under test; empty when it does not answer. */
export const ENGINE_RUNTIMES: readonly string[] = await new DockerodeContainerClient()
  .runtimes()
  .catch(() => []);

/** Runs `body` inside one `describe` per runtime; a missing runtime is skipped with its reason. */
export function describeEachRuntime(title: string, body: (runtime: OciRuntime) => void): void {
  for (const runtime of OCI_RUNTIMES) {
    describe(`${title} [${runtime}]`, () => {
      if (ENGINE_RUNTIMES.includes(runtime)) return body(runtime);
      const have = ENGINE_RUNTIMES.join(', ') || 'no answer';
      it.skip(`skipped: the Docker engine has no "${runtime}" runtime (it has: ${have}); .ci/run registers gVisor's runsc`, () => {});
    });
  }
}
