/**
 * How much schema-check worker time each server has used lately: the
 * measure by which schema-check lanes (schema-check-lane.ts) pick whose
 * check runs next. Time used decays by half every USAGE_HALF_LIFE_MS, so a
 * server's past weighs less the longer ago it was, and a server that keeps
 * the workers busy always weighs more than one that checks now and then.
 */

/** Half-life of recorded worker time, in ms: long against a check (≤ the deadline), short against a flood. */
export const USAGE_HALF_LIFE_MS = 10_000;
/** Servers remembered before those whose time has decayed to nothing are forgotten (then twice as many as are left). */
const REMEMBERED_SERVERS = 1024;
/** Recorded time below which a server is forgotten, in ms. */
const FORGOTTEN_BELOW_MS = 0.01;

interface Recorded {
  ms: number;
  at: number;
}

export class ServerUsage {
  readonly #recorded = new Map<string, Recorded>();
  readonly #now: () => number;
  /** Servers recorded past which the forgotten are dropped (a sweep costs one look at each). */
  #sweepAbove = REMEMBERED_SERVERS;

  /** `now`: the clock, in ms (performance.now by default). */
  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /** Worker time `server` has used, decayed to now, in ms (0 for a server never seen). */
  of(server: string): number {
    const recorded = this.#recorded.get(server);
    return recorded === undefined ? 0 : decayed(recorded, this.#now());
  }

  /** Adds `ms` of worker time to `server`. */
  charge(server: string, ms: number): void {
    const now = this.#now();
    const recorded = this.#recorded.get(server);
    this.#recorded.set(server, {
      ms: (recorded === undefined ? 0 : decayed(recorded, now)) + ms,
      at: now,
    });
    if (this.#recorded.size > this.#sweepAbove) this.#forget(now);
  }

  #forget(now: number): void {
    for (const [server, recorded] of this.#recorded) {
      if (decayed(recorded, now) < FORGOTTEN_BELOW_MS) this.#recorded.delete(server);
    }
    this.#sweepAbove = Math.max(REMEMBERED_SERVERS, 2 * this.#recorded.size);
  }
}

function decayed(recorded: Recorded, now: number): number {
  return recorded.ms * 2 ** (-(now - recorded.at) / USAGE_HALF_LIFE_MS);
}
