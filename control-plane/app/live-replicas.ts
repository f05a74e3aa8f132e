/**
 * How many control-plane replicas are alive, for limits the replicas share
 * out (each enforces 1/count of a rate limit). On PostgreSQL every replica
 * writes a heartbeat row every HEARTBEAT_MS and counts the rows newer than
 * STALE_AFTER_MS; the embedded store is one process, so the count is 1.
 */
import { randomUUID } from 'node:crypto';
import type { Store } from '../store/index.js';

/** How often a replica says it is alive, in ms. */
const HEARTBEAT_MS = 10_000;
/** A replica silent this long is counted out (three missed heartbeats), in ms. */
const STALE_AFTER_MS = 30_000;

export class LiveReplicas {
  readonly #store: Pick<Store, 'dialect' | 'heartbeatReplica' | 'removeReplica'>;
  readonly #id = randomUUID();
  readonly #onError: (error: unknown) => void;
  #count = 1;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    store: Pick<Store, 'dialect' | 'heartbeatReplica' | 'removeReplica'>,
    onError: (error: unknown) => void,
  ) {
    this.#store = store;
    this.#onError = onError;
  }

  /** This replica's id (random per start): what a parked call's state names as its holder. */
  get id(): string {
    return this.#id;
  }

  /** Live replicas, this one included (the last count; 1 until known). */
  get count(): number {
    return this.#count;
  }

  /** Writes the first heartbeat (so the count is known before requests arrive), then keeps beating. */
  async start(): Promise<void> {
    if (this.#store.dialect !== 'postgres') return;
    await this.#beat();
    this.#timer = setInterval(() => void this.#beat(), HEARTBEAT_MS);
    this.#timer.unref();
  }

  /** Stops beating and leaves, so the others stop counting this replica at once. */
  async stop(): Promise<void> {
    if (this.#store.dialect !== 'postgres') return;
    clearInterval(this.#timer);
    await this.#store.removeReplica(this.#id).catch(this.#onError);
  }

  async #beat(): Promise<void> {
    try {
      this.#count = await this.#store.heartbeatReplica(this.#id, STALE_AFTER_MS);
    } catch (error) {
      // Keep the last count: a store hiccup must not lift or tighten every limit.
      this.#onError(error);
    }
  }
}
