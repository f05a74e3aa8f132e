/**
 * What the tests of two replicas behind the nginx round-robin proxy share
 * (replica-sessions, modern-replicas, path-address-replicas): waiting until
 * both serve, and taking the pair down.
 */
import type { ChildControlPlane } from '../faults/support/child-control-plane.js';
import { pollUntil, removePlaneContainers } from '../faults/support/plane-containers.js';
import { onPostgresServer } from '../store/store-targets.js';
import type { RoundRobinProxy } from './round-robin-proxy.js';

/**
 * Waits until every replica serves the `echo` tool of `subdomain`: its
 * configuration is loaded and its pool is warm. Throws with the replica's
 * output when one does not within 20 s.
 */
export async function untilEachReplicaServesEcho(
  replicas: readonly ChildControlPlane[],
  subdomain: string,
): Promise<void> {
  for (const replica of replicas) {
    const served = await pollUntil(async () => {
      const answer = await replica.admin('POST', `/api/servers/${subdomain}/tools/echo/invoke`, {
        params: { token: 'warm' },
      });
      return answer.body?.result === 'warm';
    }, 20_000);
    if (!served)
      throw new Error(`replica ${replica.port} does not serve echo:\n${replica.output()}`);
  }
}

/**
 * Takes a pair down: the proxy, the replicas (SIGTERM: each removes its own
 * runner containers; one SIGKILLed by a test left its own behind, removed
 * here), then the database, when one was made.
 */
export async function stopReplicaPair(pair: {
  proxy: RoundRobinProxy | undefined;
  replicas: readonly (ChildControlPlane | undefined)[];
  database: string | undefined;
}): Promise<void> {
  await pair.proxy?.stop();
  await Promise.all(pair.replicas.map((replica) => replica?.close()));
  for (const replica of pair.replicas) {
    if (replica) await removePlaneContainers(replica.planeName);
  }
  if (pair.database !== undefined) {
    await onPostgresServer(`DROP DATABASE IF EXISTS ${pair.database} WITH (FORCE)`);
  }
}
