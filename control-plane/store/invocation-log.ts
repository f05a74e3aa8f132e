/**
 * The invocation log's write path. `append()` is called on the invocation hot
 * path, so it only queues: entries are written in batches (every
 * `flushIntervalMs`, or at once when `batchSize` are waiting), the table is
 * pruned to the store's retention every `pruneIntervalMs` and whenever
 * `pruneAfterRows` more rows were written, and when the database is
 * unavailable the queue is bounded by dropping the oldest entries rather
 * than growing without limit. A call refused before any code ran is not an
 * entry: `countRefusal()` adds one to its server's count of that code in the
 * current time bucket, written with the next batch.
 */
import { parseInvocationRecord, type InvocationRecordInput } from './records.js';
import type { RefusalCount } from './refusal-records.js';
import type { Store } from './store.js';
import { messageOf } from './store-dialect.js';

/** Options of InvocationLog. */
export interface InvocationLogOptions {
  /** Longest an entry waits before it is written, in milliseconds; default 100. */
  flushIntervalMs?: number;
  /** Entries that trigger an immediate write; default 200. */
  batchSize?: number;
  /** Interval between prunes to the retention bound, in milliseconds; default 60000. */
  pruneIntervalMs?: number;
  /** Rows written by this log after which it prunes at once, not waiting for the interval; default 1000. */
  pruneAfterRows?: number;
  /** Entries kept queued while writes fail, and as many refusal counts; the oldest beyond it are dropped; default 10000. */
  maxQueued?: number;
  /** Width of the time buckets refusals are counted in, in milliseconds; default 60000. */
  refusalBucketMs?: number;
  /** Receives write failures and drops; default: none. */
  log?: (message: string) => void;
}

/** Wait after a failed write before the next attempt, in ms. */
const RETRY_DELAY_MS = 1000;

/** The part of the Store the log writes through. */
export type InvocationSink = Pick<
  Store,
  'appendInvocations' | 'pruneInvocations' | 'countRefusals'
>;

/** Batched, non-blocking writer of invocation entries. */
export class InvocationLog {
  readonly #store: InvocationSink;
  readonly #flushIntervalMs: number;
  readonly #batchSize: number;
  readonly #maxQueued: number;
  readonly #log: (message: string) => void;
  readonly #refusalBucketMs: number;
  readonly #pruneAfterRows: number;
  /** Rows written since the last prune started. */
  #rowsSincePrune = 0;
  #pruning: Promise<void> | undefined;
  #queue: InvocationRecordInput[] = [];
  /** Refusals not yet written, by server, code and bucket (see #refusalKey). */
  #refusals = new Map<string, RefusalCount>();
  #flushTimer: NodeJS.Timeout | undefined;
  readonly #pruneTimer: NodeJS.Timeout;
  /** The running write; resolves false when the store refused it. */
  #writing: Promise<boolean> | undefined;
  #closed = false;
  #dropped = 0;
  /** Entries at the head of the queue that the running write is storing: never dropped. */
  #inFlight = 0;
  /** After a failed write, no new write starts before this time (ms since epoch). */
  #retryAt = 0;

  constructor(store: InvocationSink, options: InvocationLogOptions = {}) {
    if (typeof store?.appendInvocations !== 'function')
      throw new TypeError('InvocationLog needs a Store');
    this.#store = store;
    this.#flushIntervalMs = positiveInteger(options.flushIntervalMs ?? 100, 'flushIntervalMs');
    this.#batchSize = positiveInteger(options.batchSize ?? 200, 'batchSize');
    this.#maxQueued = positiveInteger(options.maxQueued ?? 10_000, 'maxQueued');
    const pruneIntervalMs = positiveInteger(options.pruneIntervalMs ?? 60_000, 'pruneIntervalMs');
    this.#refusalBucketMs = positiveInteger(options.refusalBucketMs ?? 60_000, 'refusalBucketMs');
    this.#pruneAfterRows = positiveInteger(options.pruneAfterRows ?? 1000, 'pruneAfterRows');
    this.#log = options.log ?? (() => undefined);
    this.#pruneTimer = setInterval(() => void this.#prune(), pruneIntervalMs);
    this.#pruneTimer.unref();
  }

  /** Queues one entry; never waits. An invalid entry is a TypeError (a bug in the caller). */
  append(entry: InvocationRecordInput): void {
    if (this.#closed) throw new TypeError('InvocationLog.append() after close()');
    const parsed = parseInvocationRecord(entry);
    if (!parsed.success) throw new TypeError(`invalid invocation entry: ${parsed.error.message}`);
    this.#queue.push(parsed.data);
    if (this.#queue.length > this.#maxQueued) this.#dropOldest();
    // While the store is failing, only the retry timer writes: appends must not hammer it.
    if (this.#queue.length >= this.#batchSize && Date.now() >= this.#retryAt) this.#startWrite();
    else this.#scheduleWrite();
  }

  /**
   * Counts one call of `server` refused with `code` before any code ran, in
   * the current time bucket; never waits. `server` must be a server that
   * exists and `code` a registry code (never text a caller chose): both
   * bound how many counts there can be. After close() it is dropped: a
   * request refused while the service stops is not worth failing.
   */
  countRefusal(server: string, code: string): void {
    if (this.#closed) return;
    const bucketMs = Math.floor(Date.now() / this.#refusalBucketMs) * this.#refusalBucketMs;
    const bucketStart = new Date(bucketMs).toISOString();
    const key = refusalKey(server, code, bucketStart);
    const known = this.#refusals.get(key);
    if (known !== undefined) known.count += 1;
    else {
      if (this.#refusals.size >= this.#maxQueued) this.#dropOldestRefusals();
      this.#refusals.set(key, { server, code, bucketStart, count: 1 });
    }
    this.#scheduleWrite();
  }

  /** Entries queued and not yet written. */
  get pending(): number {
    return this.#queue.length;
  }

  /** Writes everything queued and counted so far; rejects if the store refuses the write. */
  async flush(): Promise<void> {
    while (this.#writing !== undefined) await this.#writing;
    if (this.#queue.length === 0 && this.#refusals.size === 0) return;
    this.#startWrite();
    // Counts added while it ran are newer than this call: only a failed write is an error.
    if (await this.#writing) return;
    const left = [
      this.#queue.length > 0 ? `${this.#queue.length} entries` : '',
      this.#refusals.size > 0 ? `${this.#refusals.size} refusal counts` : '',
    ].filter((part) => part !== '');
    if (left.length > 0) {
      throw new Error(`invocation log: ${left.join(' and ')} could not be written`);
    }
  }

  /** Stops the timers, writes what is queued and prunes once. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#pruneTimer);
    try {
      await this.flush();
    } finally {
      clearTimeout(this.#flushTimer);
      this.#flushTimer = undefined;
    }
    // A prune that started before the last rows were written does not count for them.
    await this.#pruning;
    await this.#prune();
  }

  #scheduleWrite(): void {
    this.#flushTimer ??= setTimeout(() => this.#startWrite(), this.#flushIntervalMs).unref();
  }

  #startWrite(): void {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    if (this.#writing !== undefined) return; // the running write picks the rest up
    this.#writing = this.#writeQueued().finally(() => {
      this.#writing = undefined;
      // Counted while the counts were being written: their turn comes with the next flush.
      if (this.#refusals.size > 0 && !this.#closed) this.#scheduleWrite();
    });
  }

  async #writeQueued(): Promise<boolean> {
    // Entries queued meanwhile are written by this same run; counts once, at its end
    // (a flood of refusals is written every flushIntervalMs, not in a loop).
    while (this.#queue.length > 0) if (!(await this.#writeBatch())) return false;
    return this.#refusals.size === 0 || (await this.#writeCounts());
  }

  /** Writes the oldest batch of entries; false when the store failed. */
  async #writeBatch(): Promise<boolean> {
    const batch = this.#queue.slice(0, this.#batchSize);
    this.#inFlight = batch.length;
    try {
      await this.#store.appendInvocations(batch);
    } catch (error) {
      this.#writeFailed(`${batch.length} entries`, error);
      return false;
    } finally {
      this.#inFlight = 0;
    }
    this.#queue.splice(0, batch.length);
    // Rows written faster than the interval prunes them: prune now, so the log
    // never holds much more than its bound between two timer prunes.
    this.#rowsSincePrune += batch.length;
    if (this.#rowsSincePrune >= this.#pruneAfterRows) void this.#prune();
    return true;
  }

  /** Writes the refusal counts; false when the store failed (they are kept, merged with newer ones). */
  async #writeCounts(): Promise<boolean> {
    // Taken out while written: what is counted meanwhile lands in a new map.
    const counts = this.#refusals;
    this.#refusals = new Map();
    try {
      await this.#store.countRefusals([...counts.values()]);
      return true;
    } catch (error) {
      for (const [key, count] of this.#refusals) {
        const known = counts.get(key);
        if (known !== undefined) known.count += count.count;
        else counts.set(key, count);
      }
      this.#refusals = counts;
      this.#writeFailed(`${counts.size} refusal counts`, error);
      return false;
    }
  }

  #writeFailed(what: string, error: unknown): void {
    this.#log(`invocation log: cannot write ${what}, will retry: ${messageOf(error)}`);
    this.#retryAt = Date.now() + RETRY_DELAY_MS;
    if (!this.#closed) {
      this.#flushTimer ??= setTimeout(() => this.#startWrite(), RETRY_DELAY_MS).unref();
    }
  }

  /** Drops the counts of the oldest bucket (the store has been failing for a while). */
  #dropOldestRefusals(): void {
    let oldest: string | undefined;
    for (const count of this.#refusals.values()) {
      if (oldest === undefined || count.bucketStart < oldest) oldest = count.bucketStart;
    }
    let dropped = 0;
    for (const [key, count] of this.#refusals) {
      if (count.bucketStart !== oldest) continue;
      this.#refusals.delete(key);
      dropped += count.count;
    }
    this.#log(
      `invocation log: the store is not keeping up; ${dropped} refusals of ${oldest} not counted`,
    );
  }

  #dropOldest(): void {
    const excess = this.#queue.length - this.#maxQueued;
    // Oldest first, but behind the batch being written (its rows are leaving anyway).
    this.#queue.splice(this.#inFlight, excess);
    this.#dropped += excess;
    // One line per thousand drops: an outage must not flood the log as well.
    if (this.#dropped % 1000 < excess) {
      this.#log(
        `invocation log: the store is not keeping up; ${this.#dropped} entries dropped so far`,
      );
    }
  }

  /** Prunes once; a prune asked for while one runs joins it. */
  #prune(): Promise<void> {
    this.#pruning ??= (async () => {
      this.#rowsSincePrune = 0;
      try {
        await this.#store.pruneInvocations();
      } catch (error) {
        this.#log(`invocation log: pruning failed: ${messageOf(error)}`);
      } finally {
        this.#pruning = undefined;
      }
    })();
    return this.#pruning;
  }
}

function refusalKey(server: string, code: string, bucketStart: string): string {
  return JSON.stringify([server, code, bucketStart]);
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value <= 0)
    throw new TypeError(`InvocationLog: ${name} must be a positive integer`);
  return value;
}
