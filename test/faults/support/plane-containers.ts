/**
 * The test's view of one control plane's containers on the engine, found by
 * the `mcphost.plane=<name>` label (so other planes sharing the engine are
 * never touched), and a killer loop that `docker kill`s one of them at random.
 */
import Dockerode from 'dockerode';

/** The engine at DOCKER_HOST or the default socket. */
export const docker = new Dockerode();

/** Containers labelled with `planeName`, running ones only unless `all`. */
export async function planeContainers(
  planeName: string,
  all = false,
): Promise<Dockerode.ContainerInfo[]> {
  return docker.listContainers({
    all,
    filters: { label: [`mcphost.plane=${planeName}`] },
  });
}

/** Removes every container of `planeName` (cleanup after a test; never another plane's). */
export async function removePlaneContainers(planeName: string): Promise<void> {
  const leftovers = await planeContainers(planeName, true).catch(() => []);
  await Promise.all(
    leftovers.map((info) =>
      docker
        .getContainer(info.Id)
        .remove({ force: true })
        .catch(() => undefined),
    ),
  );
}

/** A running killer loop. */
export interface RandomKiller {
  /** Stops the loop; resolves with the number of containers it killed. */
  stop(): Promise<number>;
}

/** Every `minMs`–`maxMs` ms, SIGKILLs one random running container of `planeName`. */
export function startRandomKiller(planeName: string, minMs = 100, maxMs = 300): RandomKiller {
  let running = true;
  let kills = 0;
  const loop = (async () => {
    while (running) {
      await new Promise((r) => setTimeout(r, minMs + Math.random() * (maxMs - minMs)));
      if (!running) break;
      const candidates = await planeContainers(planeName).catch(() => []);
      const victim = candidates[Math.floor(Math.random() * candidates.length)];
      if (!victim) continue;
      // 404/409: it exited or was removed meanwhile (retired by the pool): not a kill.
      const killed = await docker
        .getContainer(victim.Id)
        .kill()
        .then(
          () => true,
          () => false,
        );
      if (killed) kills += 1;
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return kills;
    },
  };
}

/** Polls `check` every 200 ms until it returns true or `timeoutMs` passes; returns the last verdict. */
export async function pollUntil(
  check: () => Promise<boolean>,
  timeoutMs: number,
  intervalMs = 200,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
