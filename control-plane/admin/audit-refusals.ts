/**
 * Which refusals become audit entries: one entry per kind of refusal of one
 * actor a minute, standing for every refusal of that kind in its minute (the
 * entry's `summary.count`). A kind is (actor, action, server, reason code);
 * an anonymous actor is its client network. An actor that opens more than
 * `kindsPerActor` kinds in a minute (a new server named in each request, say)
 * has the rest counted on one more entry of its own. So however fast one
 * actor is refused, it adds at most `kindsPerActor + 1` entries a minute on a
 * replica, and memory stays bounded (`maxWindows`).
 *
 * This is only the bookkeeping, free of the store: AuditTrail writes the
 * first refusal of a window at once and its count when the window closes.
 */
import { AddressThrottle } from '../identity/index.js';

/** Options of RefusalWindows; every field has a default. */
export interface RefusalWindowsOptions {
  /** How long one entry gathers refusals of its kind, in ms; default 60000. */
  windowMs?: number;
  /**
   * Kinds one actor may open per minute before the rest share one entry;
   * default 64 (more than the admin API's routes: an actor refused on each
   * route of a server still reads kind by kind).
   */
  kindsPerActor?: number;
  /** Windows held at once; the least recently refused is closed early; default 10000. */
  maxWindows?: number;
  /** Milliseconds since the epoch; default Date.now. */
  now?: () => number;
}

/** The refusals of one kind in one window, and the entry that stands for them. */
export interface RefusalWindow {
  readonly openedAt: number;
  /** Refusals in the window, the first included. */
  count: number;
  /** The count the entry holds in the store. */
  written: number;
  /** The entry, once appended (undefined while it is written, or when it could not be). */
  entry?: { id: string; summary: Record<string, unknown> };
}

/** What one refusal amounts to: a new entry to write, or one more on an entry's count. */
export type RefusalNote =
  | {
      opened: true;
      window: RefusalWindow;
      /** True when it stands for the actor's kinds beyond `kindsPerActor`, whatever their action or server. */
      overflow: boolean;
    }
  | { opened: false };

/** The open windows of every actor's refusals. */
export class RefusalWindows {
  readonly #windowMs: number;
  readonly #maxWindows: number;
  readonly #now: () => number;
  /** New kinds per actor: the same sliding-minute allowance that throttles sign-ins. */
  readonly #kinds: AddressThrottle;
  /** Open windows by kind; Map order is recency (least recently refused first). */
  readonly #windows = new Map<string, RefusalWindow>();
  /** Windows closed before a sweep took them (replaced, or pushed out). */
  #closed: RefusalWindow[] = [];

  constructor(options: RefusalWindowsOptions = {}) {
    this.#windowMs = options.windowMs ?? 60_000;
    this.#maxWindows = options.maxWindows ?? 10_000;
    this.#now = options.now ?? Date.now;
    this.#kinds = new AddressThrottle({
      perMinute: options.kindsPerActor ?? 64,
      maxAddresses: this.#maxWindows,
      now: this.#now,
    });
    if (!(this.#windowMs > 0) || !Number.isInteger(this.#maxWindows) || this.#maxWindows < 1) {
      throw new TypeError('RefusalWindows: windowMs and maxWindows must be positive');
    }
  }

  /** Notes one refusal of `kind` by `actor` (both opaque keys). */
  note(actor: string, kind: string): RefusalNote {
    const now = this.#now();
    const key = JSON.stringify([actor, kind]);
    if (this.#counted(key, now)) return { opened: false };
    if (this.#kinds.take(actor).allowed)
      return { opened: true, window: this.#open(key, now), overflow: false };
    const overflowKey = JSON.stringify([actor, null]);
    if (this.#counted(overflowKey, now)) return { opened: false };
    return { opened: true, window: this.#open(overflowKey, now), overflow: true };
  }

  /** Takes out every window whose time is up (and those closed early) that counted more than its first refusal: their counts are final. */
  takeClosed(): RefusalWindow[] {
    const now = this.#now();
    const closed = this.#closed;
    this.#closed = [];
    for (const [key, window] of this.#windows) {
      if (now - window.openedAt >= this.#windowMs) {
        this.#windows.delete(key);
        if (window.count > 1) closed.push(window);
      }
    }
    return closed;
  }

  /** Takes out every window, open or not, that counted more than its first refusal (at shutdown). */
  takeAll(): RefusalWindow[] {
    const all = [...this.#closed, ...[...this.#windows.values()].filter((w) => w.count > 1)];
    this.#closed = [];
    this.#windows.clear();
    return all;
  }

  /** Adds one to the open window of `key`; false when there is none (a closed one is set aside). */
  #counted(key: string, now: number): boolean {
    const window = this.#windows.get(key);
    if (window === undefined) return false;
    this.#windows.delete(key);
    if (now - window.openedAt >= this.#windowMs) {
      this.#close(window);
      return false;
    }
    window.count += 1;
    // Re-inserted: the Map's order is least recently refused first.
    this.#windows.set(key, window);
    return true;
  }

  #open(key: string, now: number): RefusalWindow {
    const window: RefusalWindow = { openedAt: now, count: 1, written: 0 };
    this.#windows.set(key, window);
    while (this.#windows.size > this.#maxWindows) {
      const [oldestKey, oldest] = this.#windows.entries().next().value!;
      this.#windows.delete(oldestKey);
      this.#close(oldest);
    }
    return window;
  }

  /** Sets a closed window aside for the next sweep, if its entry has a count to write. */
  #close(window: RefusalWindow): void {
    if (window.count > 1) this.#closed.push(window);
  }
}
