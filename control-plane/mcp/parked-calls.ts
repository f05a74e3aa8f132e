/**
 * The modern-era calls of this replica that wait for their client's answers
 * (input-exchange.ts): each holds a running invocation and its leased
 * container, so they are bounded per caller and per server, and each leaves
 * as soon as its invocation ends — by its outcome in a round, or at the
 * tool's time limit when the client never came back (the container then
 * returns to its pool). A retry claims its call for one round: the round in
 * its state must be the one outstanding, and no other retry may hold it,
 * which makes every `requestState` single use.
 */
import { randomUUID } from 'node:crypto';
import { McphostError } from '../errors.js';
import type { InputExchange } from './input-exchange.js';
import type { RequestStateBinding } from './request-state.js';

/** One parked call. */
export interface ParkedCall {
  readonly id: string;
  readonly binding: RequestStateBinding;
  /** The quota key of its caller (caller-identity.ts): what per-caller bounds count. */
  readonly quotaKey: string;
  readonly exchange: InputExchange<unknown>;
  /** Ends the invocation (the client closed a round's response). */
  readonly cancel: AbortController;
  /** When its state expires at the latest (epoch ms); the invocation ends at its own limit before. */
  readonly deadline: number;
  /** The round whose state the client holds. */
  round: number;
  /** True while a retry of this call is being served. */
  claimed: boolean;
}

export interface ParkedCallsOptions {
  /** Most calls one caller may have parked on one server at once. */
  maxPerCaller: number;
  /** Most calls parked on one server at once, across its callers. */
  maxPerServer: number;
}

/** What claiming a parked call for a retry came to. */
export type Claim =
  { ok: true; call: ParkedCall } | { ok: false; reason: 'unknown' | 'stale-round' | 'in-use' };

export class ParkedCalls {
  readonly #options: ParkedCallsOptions;
  readonly #calls = new Map<string, ParkedCall>();
  readonly #perServer = new Map<string, number>();
  readonly #perCaller = new Map<string, number>();

  constructor(options: ParkedCallsOptions) {
    for (const [name, value] of Object.entries(options)) {
      if (!Number.isInteger(value) || value < 1) {
        throw new TypeError(`ParkedCalls: ${name} must be a positive integer`);
      }
    }
    this.#options = options;
  }

  /** Calls parked here now. */
  get size(): number {
    return this.#calls.size;
  }

  /**
   * Parks a call that just answered its first `input_required`, held until
   * `ended` settles (its invocation's outcome). Over a bound it throws
   * ERR_INPUT_QUOTA and parks nothing: the caller ends the invocation.
   */
  park(fields: Omit<ParkedCall, 'id' | 'round' | 'claimed'>, ended: Promise<unknown>): ParkedCall {
    const server = fields.binding.server;
    const callerKey = `${server}\u0000${fields.quotaKey}`;
    const { maxPerCaller, maxPerServer } = this.#options;
    if ((this.#perCaller.get(callerKey) ?? 0) >= maxPerCaller) {
      throw new McphostError(
        'ERR_INPUT_QUOTA',
        `this caller already has ${maxPerCaller} calls of this server waiting for input; answer or abandon some first`,
      );
    }
    if ((this.#perServer.get(server) ?? 0) >= maxPerServer) {
      throw new McphostError(
        'ERR_INPUT_QUOTA',
        `this server already has ${maxPerServer} calls waiting for input; retry once some are answered`,
      );
    }
    const call: ParkedCall = { ...fields, id: randomUUID(), round: 1, claimed: false };
    this.#calls.set(call.id, call);
    increment(this.#perServer, server, 1);
    increment(this.#perCaller, callerKey, 1);
    void ended.finally(() => {
      if (this.#calls.get(call.id) !== call) return;
      this.#calls.delete(call.id);
      increment(this.#perServer, server, -1);
      increment(this.#perCaller, callerKey, -1);
    });
    return call;
  }

  /** Takes the call for a retry of `round`; `release` gives it back for the next round. */
  claim(id: string, round: number): Claim {
    const call = this.#calls.get(id);
    if (call === undefined) return { ok: false, reason: 'unknown' };
    if (call.claimed) return { ok: false, reason: 'in-use' };
    if (call.round !== round) return { ok: false, reason: 'stale-round' };
    call.claimed = true;
    return { ok: true, call };
  }

  /** Spends the claimed round's state: from now on only the next round's state resumes the call. */
  spend(call: ParkedCall): void {
    call.round += 1;
  }

  /**
   * Gives a claimed call back. A retry refused before anything reached the
   * code did not spend its round: the rightful state still works.
   */
  release(call: ParkedCall): void {
    call.claimed = false;
  }

  /** Parked calls per server, for metrics. */
  countsByServer(): ReadonlyMap<string, number> {
    return this.#perServer;
  }
}

function increment(counts: Map<string, number>, key: string, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}
