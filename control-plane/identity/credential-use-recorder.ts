/**
 * Keeps credentials' `lastUsedAt` roughly current without writing on the
 * request path: a use is noted in memory, and the ids noted are written in
 * one statement every few seconds. A credential is written at most once per
 * interval by this process (the interval also counts from the `lastUsedAt`
 * the record was read with, which another replica may have written), so a
 * busy key costs one UPDATE a minute, not one per request.
 */

/** Options of a CredentialUseRecorder. */
export interface CredentialUseRecorderOptions {
  /** Marks credentials used now, in one write (the store's `touchCredentials`). */
  touch(ids: readonly string[]): Promise<void>;
  /** Shortest time, in ms, between two writes for one credential; default 60000. */
  intervalMs?: number;
  /** How often, in ms, the noted uses are written; default 5000. */
  flushEveryMs?: number;
  /** Told when a write failed (the uses it carried are dropped: the field is informational). */
  onError(error: unknown): void;
  /** Milliseconds since the epoch; default Date.now. */
  now?: () => number;
}

/** Batches credential uses into periodic `touch` writes. */
export class CredentialUseRecorder {
  readonly #touch: (ids: readonly string[]) => Promise<void>;
  readonly #intervalMs: number;
  readonly #onError: (error: unknown) => void;
  readonly #now: () => number;
  readonly #timer: NodeJS.Timeout;
  /** Ids to write at the next flush. */
  #pending = new Set<string>();
  /** When each credential was last written (or seen written), in ms: uses before then + interval are skipped. */
  readonly #writtenAt = new Map<string, number>();
  #flushing: Promise<void> | undefined;
  #closed = false;

  constructor(options: CredentialUseRecorderOptions) {
    this.#touch = options.touch;
    this.#intervalMs = options.intervalMs ?? 60_000;
    this.#onError = options.onError;
    this.#now = options.now ?? Date.now;
    const flushEveryMs = options.flushEveryMs ?? 5_000;
    if (!(flushEveryMs >= 1))
      throw new TypeError('CredentialUseRecorder: flushEveryMs must be ≥ 1');
    this.#timer = setInterval(() => void this.flush(), flushEveryMs);
    // Never what keeps the process alive.
    this.#timer.unref();
  }

  /** Notes a use of credential `id`, whose record says it was last used at `lastUsedAt`. Never waits. */
  record(id: string, lastUsedAt: string | null): void {
    if (this.#closed || this.#pending.has(id)) return;
    const now = this.#now();
    const seen = lastUsedAt === null ? Number.NEGATIVE_INFINITY : Date.parse(lastUsedAt);
    const written = Math.max(this.#writtenAt.get(id) ?? Number.NEGATIVE_INFINITY, seen);
    if (now - written < this.#intervalMs) return;
    this.#writtenAt.set(id, now);
    this.#pending.add(id);
  }

  /** Writes the uses noted so far; resolves when written (or the failure was reported). */
  async flush(): Promise<void> {
    // One write at a time: a slow store must not pile up UPDATEs.
    while (this.#flushing !== undefined) await this.#flushing;
    this.#forgetOldWrites();
    if (this.#pending.size === 0) return;
    const ids = [...this.#pending];
    this.#pending = new Set();
    this.#flushing = this.#touch(ids)
      .catch((error: unknown) => {
        for (const id of ids) this.#writtenAt.delete(id);
        this.#onError(error);
      })
      .finally(() => (this.#flushing = undefined));
    await this.#flushing;
  }

  /** Stops the timer and writes what is still noted. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    await this.flush();
  }

  /** Entries past the interval decide nothing any more: dropped, so the map holds recent keys only. */
  #forgetOldWrites(): void {
    const now = this.#now();
    for (const [id, at] of this.#writtenAt) {
      if (now - at >= this.#intervalMs && !this.#pending.has(id)) this.#writtenAt.delete(id);
    }
  }
}
