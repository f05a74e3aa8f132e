/**
 * One container's life in a pool: warming → idle ⇄ leased → retired. Every
 * change goes through `transition`, which refuses the ones that make no sense
 * (a retired container is never leased again; a leased one is never leased twice).
 */
import type { FaultRetireReason } from '../../errors.js';
import type { RunnerConnection } from '../runner-connection.js';

/** Where a pooled container is in its life. */
export type InstanceState = 'warming' | 'idle' | 'leased' | 'retired';

/**
 * Why a container left service; counted per pool in `stats()`. An invocation's
 * failure gives its code's `retire` in the error registry, or `faulted` when
 * the code has none.
 */
export type RetireReason =
  | FaultRetireReason
  | 'strict'
  | 'max-invocations'
  | 'heap'
  | 'idle-ttl'
  | 'faulted'
  | 'exited'
  | 'start-failed'
  | 'retired-tool'
  | 'drained'
  | 'resized'
  | 'evicted'
  | 'rebalanced'
  | 'unneeded'
  | 'closed';

const ALLOWED: Record<InstanceState, readonly InstanceState[]> = {
  warming: ['idle', 'retired'],
  idle: ['leased', 'retired'],
  leased: ['idle', 'retired'],
  retired: [],
};

let sequence = 0;

/** A container as a pool sees it. */
export class PooledInstance {
  /** Pool-local name, stable before the driver has given an id. */
  readonly name = `pooled-${++sequence}`;
  #state: InstanceState = 'warming';
  /** The stdio conversation, once the driver has started the container. */
  connection: RunnerConnection | undefined;
  /** Pool this container serves for good; undefined while in the generic pool. */
  boundTo: string | undefined;
  /** Pool generation it was started under; an older one is retired on release. */
  generation: number;
  /** Finished invocations. */
  invocations = 0;
  /** Invocations in a row after which the heap stayed above the pool's retire share. */
  highHeapStreak = 0;
  /** True from the moment the driver is asked to start it until it is ready or failed. */
  starting = false;
  /** When it last became idle, in ms of the pool's clock. */
  idleSince = 0;
  retireReason: RetireReason | undefined;

  constructor(generation: number, boundTo: string | undefined) {
    this.generation = generation;
    this.boundTo = boundTo;
  }

  get state(): InstanceState {
    return this.#state;
  }

  /** The driver's id, once started. */
  get id(): string | undefined {
    return this.connection?.instance.id;
  }

  /** Moves to `next`; throws on a move the lifecycle does not allow (a bug in the pool). */
  transition(next: InstanceState): void {
    if (!ALLOWED[this.#state].includes(next)) {
      throw new Error(`pooled instance ${this.name}: ${this.#state} → ${next} is not allowed`);
    }
    this.#state = next;
  }
}
