/**
 * At most `maxRunning` pieces of work at once, at most `maxWaiting` more
 * queued in arrival order, and a refusal past that — for work whose cost an
 * outsider can trigger at will: store lookups of presented API keys, scrypt
 * checks of presented passwords (each holds ~32 MiB on the thread pool).
 */
export interface ConcurrencyLimitOptions {
  /** Work running at once; a positive integer. */
  maxRunning: number;
  /** Work that may wait for a slot; 0 refuses whatever finds every slot taken. */
  maxWaiting: number;
  /** The error a refused piece of work rejects with. */
  refusal: () => Error;
}

export class ConcurrencyLimit {
  readonly #maxRunning: number;
  readonly #maxWaiting: number;
  readonly #refusal: () => Error;
  readonly #waiting: (() => void)[] = [];
  #running = 0;

  constructor(options: ConcurrencyLimitOptions) {
    if (!Number.isInteger(options.maxRunning) || options.maxRunning < 1) {
      throw new TypeError('ConcurrencyLimit: maxRunning must be a positive integer');
    }
    if (!Number.isInteger(options.maxWaiting) || options.maxWaiting < 0) {
      throw new TypeError('ConcurrencyLimit: maxWaiting must be a non-negative integer');
    }
    this.#maxRunning = options.maxRunning;
    this.#maxWaiting = options.maxWaiting;
    this.#refusal = options.refusal;
  }

  /** Runs `work` when a slot is free; rejects with the refusal when the queue is full. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    await this.#acquire();
    try {
      return await work();
    } finally {
      this.#release();
    }
  }

  #acquire(): Promise<void> {
    if (this.#running < this.#maxRunning) {
      this.#running += 1;
      return Promise.resolve();
    }
    if (this.#waiting.length >= this.#maxWaiting) return Promise.reject(this.#refusal());
    // The slot passes straight from the releasing work to this one: #running stays.
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  #release(): void {
    const next = this.#waiting.shift();
    if (next !== undefined) next();
    else this.#running -= 1;
  }
}
