/**
 * Counts of events (container starts, evictions, misses) over the last hour
 * in one-minute buckets: enough to answer "how many in the last minute / the
 * last hour" for operators and to size the generic pool, in constant memory.
 */

const BUCKET_MS = 60_000;
const BUCKETS = 60;

/** A sliding count of events; the clock is injected. */
export class EventWindow {
  readonly #counts = new Array<number>(BUCKETS).fill(0);
  readonly #starts = new Array<number>(BUCKETS).fill(-1);
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
  }

  /** Records one event now. */
  add(): void {
    const minute = Math.floor(this.#now() / BUCKET_MS);
    const slot = minute % BUCKETS;
    if (this.#starts[slot] !== minute) {
      this.#starts[slot] = minute;
      this.#counts[slot] = 0;
    }
    this.#counts[slot] = (this.#counts[slot] ?? 0) + 1;
  }

  /** Events in the last `ms` milliseconds, at one-minute resolution (the current minute counts whole). */
  countWithin(ms: number): number {
    const current = Math.floor(this.#now() / BUCKET_MS);
    const oldest = current - Math.max(0, Math.ceil(ms / BUCKET_MS) - 1);
    let total = 0;
    for (let slot = 0; slot < BUCKETS; slot += 1) {
      const minute = this.#starts[slot] ?? -1;
      if (minute >= oldest && minute <= current) total += this.#counts[slot] ?? 0;
    }
    return total;
  }

  /** Counts for the last minute and the last hour. */
  summary(): { lastMinute: number; lastHour: number } {
    return {
      lastMinute: this.countWithin(BUCKET_MS),
      lastHour: this.countWithin(BUCKETS * BUCKET_MS),
    };
  }
}
