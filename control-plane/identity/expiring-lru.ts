/**
 * A map with a size bound and an age bound: the least recently read entry
 * goes first when full, and an entry older than its time to live reads as
 * absent. Small on purpose (a `Map` keeps insertion order, so re-inserting on
 * each read is the recency list); the clock is injected for tests.
 */

/** Options of an ExpiringLru. */
export interface ExpiringLruOptions {
  /** Most entries held; the least recently read is dropped for a new one. At least 1. */
  maxEntries: number;
  /** Age, in ms, past which an entry reads as absent. At least 1. */
  ttlMs: number;
  /** Milliseconds since the epoch; default Date.now. */
  now?: () => number;
}

interface Slot<V> {
  value: V;
  storedAt: number;
}

/** A bounded, expiring least-recently-used map. */
export class ExpiringLru<V> {
  readonly #entries = new Map<string, Slot<V>>();
  readonly #maxEntries: number;
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(options: ExpiringLruOptions) {
    if (!Number.isInteger(options.maxEntries) || options.maxEntries < 1) {
      throw new TypeError('ExpiringLru: maxEntries must be a positive integer');
    }
    if (!(options.ttlMs >= 1)) throw new TypeError('ExpiringLru: ttlMs must be at least 1');
    this.#maxEntries = options.maxEntries;
    this.#ttlMs = options.ttlMs;
    this.#now = options.now ?? Date.now;
  }

  /** Entries held, expired ones included until they are read or pushed out. */
  get size(): number {
    return this.#entries.size;
  }

  /** True when `key` holds a live entry (which then counts as recently read). */
  has(key: string): boolean {
    return this.#read(key) !== undefined;
  }

  /** The live value of `key`, or undefined; a read makes it the most recent. */
  get(key: string): V | undefined {
    return this.#read(key)?.value;
  }

  /** The live value of `key` with its age in ms, or undefined; a read makes it the most recent. */
  getWithAge(key: string): { value: V; ageMs: number } | undefined {
    const slot = this.#read(key);
    return slot === undefined
      ? undefined
      : { value: slot.value, ageMs: this.#now() - slot.storedAt };
  }

  /** Drops `key`. */
  delete(key: string): void {
    this.#entries.delete(key);
  }

  /** Stores `value` under `key` as the most recent entry, dropping the least recent when full. */
  set(key: string, value: V): void {
    this.#entries.delete(key);
    if (this.#entries.size >= this.#maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    this.#entries.set(key, { value, storedAt: this.#now() });
  }

  /** Drops every entry whose value `test` accepts. */
  deleteWhere(test: (value: V) => boolean): void {
    for (const [key, slot] of this.#entries) {
      if (test(slot.value)) this.#entries.delete(key);
    }
  }

  /** Drops everything. */
  clear(): void {
    this.#entries.clear();
  }

  #read(key: string): Slot<V> | undefined {
    const slot = this.#entries.get(key);
    if (slot === undefined) return undefined;
    this.#entries.delete(key);
    if (this.#now() - slot.storedAt >= this.#ttlMs) return undefined;
    this.#entries.set(key, slot);
    return slot;
  }
}
