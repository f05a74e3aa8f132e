/**
 * At most N container starts at once; the rest wait in line. Starts that a
 * waiting caller needs go before background refills, so a burst of refills
 * never delays a lease. Within each, servers take turns: the next start is
 * the oldest of the server served least recently, so a server starting many
 * containers (a burst of callers, single-use strict containers) delays
 * another server's start by at most one start of its own, never by its whole
 * line; and one server holds at most its share of the slots at once, so
 * another server's start usually finds one free. A queued start asks, when its turn comes, whether it is still needed:
 * a caller served meanwhile by a container that freed up leaves nothing to start.
 */

/** Why a container is being started. */
export type StartPurpose = 'demand' | 'refill';

interface QueuedStart {
  purpose: StartPurpose;
  /** The server the container is for; undefined: the generic pool. Starts take turns by owner. */
  owner: string | undefined;
  /** Starts the container; resolves when it is up (or failed). */
  run(): Promise<void>;
  /** False when nobody needs this container any more: it is dropped unstarted. */
  stillNeeded(): boolean;
  /** Called instead of `run` when the start is dropped. */
  drop(): void;
}

/** A bounded number of concurrent starts with a demand-first queue, fair between owners. */
export class StartQueue {
  readonly #concurrency: number;
  readonly #perOwner: number;
  /** Each line in arrival order. */
  readonly #demand: QueuedStart[] = [];
  readonly #refill: QueuedStart[] = [];
  /**
   * Owners with starts in line or in flight: when each was last served (a turn
   * number) and how many of its starts run. An owner absent here ranks first
   * (ties in arrival order).
   */
  readonly #owners = new Map<string | undefined, { lastServed: number; running: number }>();
  #turn = 0;
  #running = 0;

  /**
   * `concurrency`: starts in flight at once, at least 1; `perOwner`: starts of
   * one owner in flight at once, 1 to `concurrency` (default: `concurrency`).
   * Below `concurrency`, a slot stays free for another server's start: a start
   * cannot be taken back once running, so a share is kept, not won back.
   */
  constructor(concurrency: number, perOwner = concurrency) {
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new TypeError('StartQueue: concurrency must be an integer >= 1');
    }
    if (!Number.isInteger(perOwner) || perOwner < 1 || perOwner > concurrency) {
      throw new TypeError('StartQueue: perOwner must be an integer from 1 to concurrency');
    }
    this.#concurrency = concurrency;
    this.#perOwner = perOwner;
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

  /** Most starts of one owner in flight at once. */
  get perOwner(): number {
    return this.#perOwner;
  }

  /** Queues a start; it runs when a slot is free, it is its owner's turn and it is still needed. */
  enqueue(start: QueuedStart): void {
    (start.purpose === 'demand' ? this.#demand : this.#refill).push(start);
    this.#pump();
  }

  /** Drops every queued start (shutdown). */
  clear(): void {
    this.#owners.clear();
    for (const start of [...this.#demand.splice(0), ...this.#refill.splice(0)]) start.drop();
  }

  #pump(): void {
    while (this.#running < this.#concurrency) {
      const next = this.#take();
      if (!next) return;
      if (!next.stillNeeded()) {
        this.#forgetIdleOwner(next.owner);
        next.drop();
        continue;
      }
      const owner = this.#owners.get(next.owner) ?? { lastServed: 0, running: 0 };
      owner.lastServed = ++this.#turn;
      owner.running += 1;
      this.#owners.set(next.owner, owner);
      this.#running += 1;
      void next.run().finally(() => {
        this.#running -= 1;
        owner.running -= 1;
        this.#forgetIdleOwner(next.owner);
        this.#pump();
      });
    }
  }

  /**
   * Removes and returns the next start: demand first, then the owner served
   * least recently among those below their share of the slots.
   */
  #take(): QueuedStart | undefined {
    for (const line of [this.#demand, this.#refill]) {
      let best = -1;
      let bestServed = Infinity;
      for (let index = 0; index < line.length; index += 1) {
        const owner = this.#owners.get(line[index]!.owner);
        if ((owner?.running ?? 0) >= this.#perOwner) continue;
        const served = owner?.lastServed ?? 0;
        // Strictly less: among equals the earliest in line wins.
        if (served < bestServed) [best, bestServed] = [index, served];
      }
      if (best >= 0) return line.splice(best, 1)[0];
    }
    return undefined;
  }

  /**
   * An owner with nothing in line or in flight is forgotten: when it comes back
   * it ranks first again, behind earlier arrivals of the same rank, so it still
   * waits for at most one start of each other owner.
   */
  #forgetIdleOwner(owner: string | undefined): void {
    if ((this.#owners.get(owner)?.running ?? 0) > 0) return;
    const waiting = (start: QueuedStart) => start.owner === owner;
    if (!this.#demand.some(waiting) && !this.#refill.some(waiting)) this.#owners.delete(owner);
  }
}
