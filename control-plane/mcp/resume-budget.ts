/**
 * What a replica may keep of response streams whose client went away before
 * their answer (detached streams, call-stream.ts): the events wait, in memory
 * and — with PostgreSQL — in the store's archive, for the client to resume.
 * Anyone who can call a server can cut responses, so what is kept is bounded
 * per caller on a server, per server, and in all.
 *
 * Past a bound the oldest detached streams go first — of the same caller;
 * at the server bound the caller's own older ones, then the server's oldest;
 * at the service bound those of the server keeping the most. Why the oldest and not the newcomer: a client resumes
 * within its `retry` interval (a second by default), so the newest streams
 * are the ones a resume will still ask for; an old one has most likely been
 * given up. Refusing the newcomer instead would let one flood make every later
 * stream of its server unresumable for as long as the flood's streams live.
 * A dropped stream is forgotten (a resume of it is refused) and its call, whose
 * answer nobody can receive any more, is cancelled.
 *
 * Replicas do not count each other's streams: each keeps an equal share of
 * every bound (live replicas counted through the heartbeat table, as rate
 * limits are), so the store never holds more than the bound in all. A stream
 * lives on the replica that runs its call, which is where its bytes come from.
 */

/** A detached stream's events, as the budget counts them. */
export interface ResumeHold {
  /** Counts `bytes` more of the stream; may drop it, or older streams, to stay within bounds. */
  charge(bytes: number): void;
  /** The stream is gone (resumed to its end, expired, dropped): its bytes are free. Idempotent. */
  release(): void;
}

export interface ResumeBudgetOptions {
  /** Bytes of detached streams one caller may keep on one server, over all replicas. */
  maxBytesPerCaller: number;
  /** Bytes of detached streams of one server, over all its callers and replicas. */
  maxBytesPerServer: number;
  /** Bytes of detached streams over every server and replica. */
  maxBytes: number;
  /** How many replicas share the bounds now (each keeps 1/share of each); at least 1. */
  share: () => number;
}

/** What one kept event costs beyond its message: a stored row, ids, a floor for empty events. */
const EVENT_OVERHEAD_BYTES = 64;

/** What keeping an event whose JSON text is `message` costs, in bytes. */
export function eventCost(message: string): number {
  return Buffer.byteLength(message, 'utf8') + EVENT_OVERHEAD_BYTES;
}

interface Held {
  readonly server: string;
  readonly caller: string;
  readonly drop: () => void;
  bytes: number;
  released: boolean;
}

export class ResumeBudget {
  readonly #options: ResumeBudgetOptions;
  /** Streams held, per server and per [server, caller], each in the order they were detached. */
  readonly #byServer = new Map<string, Set<Held>>();
  readonly #byCaller = new Map<string, Set<Held>>();
  readonly #serverBytes = new Map<string, number>();
  readonly #callerBytes = new Map<string, number>();
  #totalBytes = 0;

  constructor(options: ResumeBudgetOptions) {
    for (const name of ['maxBytesPerCaller', 'maxBytesPerServer', 'maxBytes'] as const) {
      if (!Number.isInteger(options[name]) || options[name] < 0) {
        throw new TypeError(`ResumeBudget: ${name} must be a non-negative integer`);
      }
    }
    this.#options = options;
  }

  /** Bytes held now (this replica), in all. */
  get bytes(): number {
    return this.#totalBytes;
  }

  /**
   * Starts counting a detached stream of `quotaKey` on `subdomain`; `drop`
   * runs (once) when the budget gives up on it to stay within a bound.
   */
  hold(subdomain: string, quotaKey: string, drop: () => void): ResumeHold {
    const held: Held = {
      server: subdomain,
      caller: JSON.stringify([subdomain, quotaKey]),
      drop,
      bytes: 0,
      released: false,
    };
    addTo(this.#byServer, held.server, held);
    addTo(this.#byCaller, held.caller, held);
    return {
      charge: (bytes) => {
        if (held.released || bytes <= 0) return;
        held.bytes += bytes;
        this.#count(held, bytes);
        this.#enforce(held);
      },
      release: () => this.#release(held),
    };
  }

  /** Drops the oldest streams until every bound `held` counts against is kept. */
  #enforce(held: Held): void {
    const share = Math.max(1, Math.floor(this.#options.share()));
    const limit = (bound: number) => Math.floor(bound / share);
    const { maxBytesPerCaller, maxBytesPerServer, maxBytes } = this.#options;
    while ((this.#callerBytes.get(held.caller) ?? 0) > limit(maxBytesPerCaller)) {
      if (!this.#dropOldest(this.#byCaller.get(held.caller))) break;
    }
    while ((this.#serverBytes.get(held.server) ?? 0) > limit(maxBytesPerServer)) {
      // The caller that went over pays with its own older streams first; only
      // then does the server's oldest go (which may be this one).
      if (
        !this.#dropOldest(this.#byCaller.get(held.caller), held) &&
        !this.#dropOldest(this.#byServer.get(held.server))
      ) {
        break;
      }
    }
    while (this.#totalBytes > limit(maxBytes)) {
      if (!this.#dropOldest(this.#byServer.get(this.#largestServer() ?? ''))) break;
    }
  }

  /** The server keeping the most bytes here. */
  #largestServer(): string | undefined {
    let largest: string | undefined;
    let most = -1;
    for (const [server, bytes] of this.#serverBytes) {
      if (bytes > most) [largest, most] = [server, bytes];
    }
    return largest;
  }

  /** Releases and drops the oldest stream of `streams` other than `spared`; false when there is none. */
  #dropOldest(streams: Set<Held> | undefined, spared?: Held): boolean {
    for (const oldest of streams ?? []) {
      if (oldest === spared) continue;
      this.#release(oldest);
      oldest.drop();
      return true;
    }
    return false;
  }

  #release(held: Held): void {
    if (held.released) return;
    held.released = true;
    this.#count(held, -held.bytes);
    removeFrom(this.#byServer, held.server, held);
    removeFrom(this.#byCaller, held.caller, held);
  }

  #count(held: Held, delta: number): void {
    this.#totalBytes += delta;
    adjust(this.#serverBytes, held.server, delta);
    adjust(this.#callerBytes, held.caller, delta);
  }
}

function addTo(map: Map<string, Set<Held>>, key: string, held: Held): void {
  let streams = map.get(key);
  if (!streams) map.set(key, (streams = new Set()));
  streams.add(held);
}

function removeFrom(map: Map<string, Set<Held>>, key: string, held: Held): void {
  const streams = map.get(key);
  streams?.delete(held);
  if (streams?.size === 0) map.delete(key);
}

function adjust(counts: Map<string, number>, key: string, delta: number): void {
  const next = (counts.get(key) ?? 0) + delta;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}
