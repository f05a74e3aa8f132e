/**
 * The generic pool: unbound containers of the default shape that a pool
 * adopts for good on a miss, so the first call on a new server is warm. It
 * keeps one container, and up to its maximum while pools keep missing
 * (misses in the last minute). A caller that finds none idle takes over one
 * that is already starting, when it is not yet promised to another: the
 * container goes to the oldest promised pool the moment it is ready.
 *
 * The promises are kept here alone, as one list: how many a pool is owed is
 * counted from it, so it can never drift from the promises made nor go
 * below zero.
 */
import type { ContainerBudget } from './container-budget.js';
import { EventWindow } from './event-window.js';
import { sameShape } from './pool-key.js';
import type { PooledInstance } from './pooled-instance.js';
import type { WarmPool } from './warm-pool.js';

/** What the generic pool uses of the WarmPool that holds its containers. */
export type GenericHolder = Pick<
  WarmPool,
  'shape' | 'size' | 'idle' | 'counts' | 'startsUnderWay' | 'configure' | 'takeOutIdle'
>;

/** What the generic pool uses of a pool that adopts its containers. */
export type GenericRequester = Pick<
  WarmPool,
  'generic' | 'server' | 'shape' | 'wantsGeneric' | 'adoptGeneric' | 'grow'
>;

/** The generic pool and the promises made on its starting containers. */
export class GenericPool<Holder extends GenericHolder = WarmPool> {
  readonly pool: Holder;
  readonly #max: number;
  readonly #budget: Pick<ContainerBudget, 'fitsCeiling'>;
  readonly #misses: EventWindow;
  /** Pools owed a generic container that is starting, oldest first; a pool once per container. */
  readonly #promises: GenericRequester[] = [];

  /** `pool`: the WarmPool holding the containers; `max`: most containers kept. */
  constructor(
    pool: Holder,
    max: number,
    budget: Pick<ContainerBudget, 'fitsCeiling'>,
    now: () => number,
  ) {
    this.pool = pool;
    this.#max = max;
    this.#budget = budget;
    this.#misses = new EventWindow(now);
  }

  /** Containers the pool aims to keep now. */
  get target(): number {
    return this.pool.size.minWarm;
  }

  /** A pool found no idle container of its own: the generic pool grows with misses. */
  noteMiss(): void {
    this.#misses.add();
    this.resize();
  }

  /** One container, and up to the maximum while pools missed in the last minute. */
  resize(): void {
    const target = Math.min(this.#max, Math.max(1, this.#misses.countWithin(60_000)));
    if (target !== this.pool.size.minWarm)
      this.pool.configure({ minWarm: target, maxSize: this.#max });
  }

  /** An idle container `requester` may adopt now, if its shape and its server's ceiling allow. */
  borrow(requester: GenericRequester): PooledInstance | undefined {
    if (!this.#fits(requester)) return undefined;
    return this.pool.takeOutIdle();
  }

  /**
   * Promises a container that is starting to `requester`, when one is not yet
   * promised. Only a start under way counts: one still in the start queue may
   * wait behind every other tenant's demand starts (refills go last), and a
   * pool promised it would start nothing of its own meanwhile.
   */
  promise(requester: GenericRequester): boolean {
    if (!this.#fits(requester)) return false;
    if (this.pool.startsUnderWay() <= this.#promises.length) return false;
    this.#promises.push(requester);
    return true;
  }

  /** Starting containers promised to `requester`: its own starts need not cover the callers they will serve. */
  promisedTo(requester: GenericRequester): number {
    let owed = 0;
    for (const promised of this.#promises) if (promised === requester) owed += 1;
    return owed;
  }

  /**
   * A generic container came up: it goes to the oldest promised pool that
   * still has a caller waiting. A pool that no longer wants it is let off its
   * promise and grows its own for any caller it still holds; the container
   * stays generic.
   */
  handOver(): void {
    while (this.#promises.length > 0 && this.pool.idle > 0) {
      const requester = this.#promises.shift()!;
      // Checked again: the server may have reached its ceiling with its own starts meanwhile.
      if (!requester.wantsGeneric() || !this.#fits(requester)) {
        // Let off its promise (drained, at its ceiling): callers it still holds get starts of its own.
        requester.grow();
        continue;
      }
      requester.adoptGeneric(this.pool.takeOutIdle()!);
    }
  }

  /**
   * A starting container was lost: the newest promises it covered are broken,
   * and each pool let down grows its own for the callers still waiting.
   */
  rebalance(): void {
    const covered = this.pool.counts().warming + this.pool.idle;
    while (this.#promises.length > covered) this.#promises.pop()!.grow();
  }

  #fits(requester: GenericRequester): boolean {
    if (requester.generic || !sameShape(requester.shape, this.pool.shape)) return false;
    return this.#budget.fitsCeiling(requester.server!, requester.shape);
  }
}
