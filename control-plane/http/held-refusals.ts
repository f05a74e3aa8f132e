/**
 * The answers a throttled network gets, held back a while before they are
 * sent. Refusing is cheap but not free: every request is still parsed and
 * answered, and a client that sends its next request as soon as the last is
 * answered (as flood tools do) would otherwise be answered as fast as the
 * control plane can refuse — on the event loop every tenant shares. Held
 * back, such a client is slowed to its connections per delay. At most
 * `maxHeld` answers wait at once (an open connection each); past that they
 * go at once, so holding never costs more than a bounded number of sockets.
 */
import type { ServerResponse } from 'node:http';

/** Options of HeldRefusals. */
export interface HeldRefusalsOptions {
  /** How long an answer is held, in ms; 0 answers at once. */
  delayMs: number;
  /** Answers held at once at most; more are sent at once. */
  maxHeld: number;
}

export class HeldRefusals {
  readonly #delayMs: number;
  readonly #maxHeld: number;
  #held = 0;

  constructor(options: HeldRefusalsOptions) {
    if (!Number.isInteger(options.delayMs) || options.delayMs < 0) {
      throw new TypeError('HeldRefusals: delayMs must be a non-negative integer');
    }
    if (!Number.isInteger(options.maxHeld) || options.maxHeld < 0) {
      throw new TypeError('HeldRefusals: maxHeld must be a non-negative integer');
    }
    this.#delayMs = options.delayMs;
    this.#maxHeld = options.maxHeld;
  }

  /** Runs `answer` (which writes the refusal on `res`) after the delay, or now when too many wait. */
  answer(res: ServerResponse, answer: () => void): void {
    if (this.#delayMs === 0 || this.#held >= this.#maxHeld) {
      answer();
      return;
    }
    this.#held += 1;
    let settled = false;
    const release = () => {
      if (settled) return;
      settled = true;
      this.#held -= 1;
      clearTimeout(timer);
    };
    // The client may leave first: its slot is free again, and nothing is written.
    res.once('close', release);
    const timer = setTimeout(() => {
      release();
      if (!res.destroyed) answer();
    }, this.#delayMs);
    // A held answer never keeps the process alive (a shutdown closes the connection).
    timer.unref();
  }

  /** Answers held now (for tests and metrics). */
  get held(): number {
    return this.#held;
  }
}
