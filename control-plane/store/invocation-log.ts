/**
 * The invocation log's write path. `append()` is called on the invocation hot
 * path, so it only queues: entries are written in batches (every
 * `flushIntervalMs`, or at once when `batchSize` are waiting), the table is
 * pruned to the store's retention bound now and then, and when the database
 * is unavailable the queue is bounded by dropping the oldest entries rather
 * than growing without limit.
 */
import { invocationRecordSchema, type InvocationRecordInput } from './records.js';
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
  /** Entries kept queued while writes fail; the oldest beyond it are dropped; default 10000. */
  maxQueued?: number;
  /** Receives write failures and drops; default: none. */
  log?: (message: string) => void;
}

/** Wait after a failed write before the next attempt, in ms. */
const RETRY_DELAY_MS = 1000;

/** The part of the Store the log writes through. */
export type InvocationSink = Pick<Store, 'appendInvocations' | 'pruneInvocations'>;

/** Batched, non-blocking writer of invocation entries. */
export class InvocationLog {
  readonly #store: InvocationSink;
  readonly #flushIntervalMs: number;
  readonly #batchSize: number;
  readonly #maxQueued: number;
  readonly #log: (message: string) => void;
  #queue: InvocationRecordInput[] = [];
  #flushTimer: NodeJS.Timeout | undefined;
  readonly #pruneTimer: NodeJS.Timeout;
  #writing: Promise<void> | undefined;
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
    this.#log = options.log ?? (() => undefined);
    this.#pruneTimer = setInterval(() => void this.#prune(), pruneIntervalMs);
    this.#pruneTimer.unref();
  }

  /** Queues one entry; never waits. An invalid entry is a TypeError (a bug in the caller). */
  append(entry: InvocationRecordInput): void {
    if (this.#closed) throw new TypeError('InvocationLog.append() after close()');
    const parsed = invocationRecordSchema.safeParse(entry);
    if (!parsed.success) throw new TypeError(`invalid invocation entry: ${parsed.error.message}`);
    this.#queue.push(parsed.data);
    if (this.#queue.length > this.#maxQueued) this.#dropOldest();
    // While the store is failing, only the retry timer writes: appends must not hammer it.
    if (this.#queue.length >= this.#batchSize && Date.now() >= this.#retryAt) this.#startWrite();
    else this.#flushTimer ??= setTimeout(() => this.#startWrite(), this.#flushIntervalMs).unref();
  }

  /** Entries queued and not yet written. */
  get pending(): number {
    return this.#queue.length;
  }

  /** Writes everything queued so far; rejects if the store refuses the write. */
  async flush(): Promise<void> {
    while (this.#writing !== undefined) await this.#writing;
    if (this.#queue.length === 0) return;
    this.#startWrite();
    await this.#writing;
    if (this.#queue.length > 0) {
      throw new Error(`invocation log: ${this.#queue.length} entries could not be written`);
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
    await this.#prune();
  }

  #startWrite(): void {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    if (this.#writing !== undefined) return; // the running write picks the rest up
    this.#writing = this.#writeQueued().finally(() => {
      this.#writing = undefined;
    });
  }

  async #writeQueued(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.slice(0, this.#batchSize);
      this.#inFlight = batch.length;
      try {
        await this.#store.appendInvocations(batch);
      } catch (error) {
        this.#log(
          `invocation log: cannot write ${batch.length} entries, will retry: ${messageOf(error)}`,
        );
        this.#retryAt = Date.now() + RETRY_DELAY_MS;
        if (!this.#closed) {
          this.#flushTimer ??= setTimeout(() => this.#startWrite(), RETRY_DELAY_MS).unref();
        }
        return;
      } finally {
        this.#inFlight = 0;
      }
      this.#queue.splice(0, batch.length);
    }
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

  async #prune(): Promise<void> {
    try {
      await this.#store.pruneInvocations();
    } catch (error) {
      this.#log(`invocation log: pruning failed: ${messageOf(error)}`);
    }
  }
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value <= 0)
    throw new TypeError(`InvocationLog: ${name} must be a positive integer`);
  return value;
}
