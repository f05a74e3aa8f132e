/**
 * Where a new runner container goes when the control plane drives several
 * Docker engines: the engine with the most memory left after what this
 * control plane already placed there (memory is what runs out first: every
 * container reserves its limit), then the one holding fewer of our
 * containers, then the order the operator listed them in. Engines that are
 * down, or that lack the OCI runtime the server asked for, are never chosen.
 */

/** What placement knows of one engine. */
export interface EngineLoad {
  name: string;
  up: boolean;
  /** The engine's memory (`docker info` MemTotal), in MiB. */
  memoryMb: number;
  /** Memory limits of the containers we placed there and that still run, in MiB. */
  placedMb: number;
  /** Containers we placed there that still run. */
  containers: number;
  /** Its OCI runtimes; undefined when not known yet. */
  runtimes?: readonly string[];
}

/** Engines able to take a container of `memoryMb` with `runtime`, best first. */
export function placementOrder(
  engines: readonly EngineLoad[],
  memoryMb: number,
  runtime: string | undefined,
): EngineLoad[] {
  const eligible = engines.filter(
    (engine) =>
      engine.up &&
      (runtime === undefined || engine.runtimes === undefined || engine.runtimes.includes(runtime)),
  );
  const order = new Map(engines.map((engine, index) => [engine.name, index]));
  const free = (engine: EngineLoad) => engine.memoryMb - engine.placedMb - memoryMb;
  return eligible.sort(
    (a, b) =>
      free(b) - free(a) ||
      a.containers - b.containers ||
      (order.get(a.name) ?? 0) - (order.get(b.name) ?? 0),
  );
}
