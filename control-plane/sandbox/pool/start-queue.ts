/**
 * At most N container starts at once; the rest wait in line. Starts that a
 * waiting caller needs go before background refills, so a burst of refills
 * never delays a lease. A queued start asks, when its turn comes, whether it
 * is still needed: a caller served meanwhile by a container that freed up
 * leaves nothing to start.
 */

/** Why a container is being started. */
export type StartPurpose = 'demand' | 'refill';

interface QueuedStart {
  purpose: StartPurpose;
  /** Starts the container; resolves when it is up (or failed). */
  run(): Promise<void>;
  /** False when nobody needs this container any more: it is dropped unstarted. */
  stillNeeded(): boolean;
  /** Called instead of `run` when the start is dropped. */
  drop(): void;
}

/** A bounded number of concurrent starts with a demand-first queue. */
export class StartQueue {
  readonly #concurrency: number;
  readonly #demand: QueuedStart[] = [];
  readonly #refill: QueuedStart[] = [];
  #running = 0;

  /** `concurrency`: starts in flight at once, at least 1. */
  constructor(concurrency: number) {
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new TypeError('StartQueue: concurrency must be an integer >= 1');
    }
    this.#concurrency = concurrency;
  }

  /** Starts in flight now. */
  get running(): number {
    return this.#running;
  }

  /** Starts waiting for a free slot. */
  get queued(): number {
    return this.#demand.length + this.#refill.length;
  }

  /** Most starts in flight at once. */
  get concurrency(): number {
    return this.#concurrency;
  }

  /** Queues a start; it runs when a slot is free and it is still needed. */
  enqueue(start: QueuedStart): void {
    (start.purpose === 'demand' ? this.#demand : this.#refill).push(start);
    this.#pump();
  }

  /** Drops every queued start (shutdown). */
  clear(): void {
    for (const start of [...this.#demand.splice(0), ...this.#refill.splice(0)]) start.drop();
  }

  #pump(): void {
    while (this.#running < this.#concurrency) {
      const next = this.#demand.shift() ?? this.#refill.shift();
      if (!next) return;
      if (!next.stillNeeded()) {
        next.drop();
        continue;
      }
      this.#running += 1;
      void next.run().finally(() => {
        this.#running -= 1;
        this.#pump();
      });
    }
  }
}
