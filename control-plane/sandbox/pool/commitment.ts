/**
 * What containers commit on their engine: how many there are, and the sums of
 * their memory limits and CPU shares — the figures the container budget
 * counts, never a count times an assumed size. Memory is what the budget
 * bounds (it is not given back under pressure: the kernel's OOM killer takes
 * it from someone); CPU is a quota the kernel shares out, bounded with the
 * container count and reported.
 */
import type { ContainerShape } from './pool-key.js';

/** Containers and what they commit. */
export interface Commitment {
  readonly containers: number;
  /** Sum of memory limits, in MiB. */
  readonly memoryMb: number;
  /** Sum of CPU shares, in cores. */
  readonly cpus: number;
}

/** Nothing committed. */
export const NOTHING: Commitment = Object.freeze({ containers: 0, memoryMb: 0, cpus: 0 });

/** What `count` containers of `shape` commit. */
export function commitmentOf(shape: ContainerShape, count = 1): Commitment {
  return { containers: count, memoryMb: shape.memoryMb * count, cpus: shape.cpus * count };
}

/** The sum of two commitments. */
export function plus(a: Commitment, b: Commitment): Commitment {
  return {
    containers: a.containers + b.containers,
    memoryMb: a.memoryMb + b.memoryMb,
    cpus: a.cpus + b.cpus,
  };
}

/** `a` without `b`. */
export function minus(a: Commitment, b: Commitment): Commitment {
  return {
    containers: a.containers - b.containers,
    memoryMb: a.memoryMb - b.memoryMb,
    cpus: a.cpus - b.cpus,
  };
}
