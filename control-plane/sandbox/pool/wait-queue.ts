/**
 * A bounded FIFO of callers waiting for a container. Each waiter gives up on
 * its own after the wait limit or when its signal aborts; nobody hangs.
 */
import type { McphostError } from '../../errors.js';
import { cancelled } from '../sandbox-errors.js';

interface Waiter<T> {
  /** When it started waiting, in ms of the clock given to `wait`. */
  since: number;
  resolve(value: T): void;
  reject(error: McphostError): void;
  cleanup(): void;
}

/** FIFO of pending leases. */
export class WaitQueue<T> {
  readonly #waiters: Waiter<T>[] = [];

  readonly #now: () => number;

  /** `now`: milliseconds clock for `oldestSince`; default `Date.now`. */
  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  get length(): number {
    return this.#waiters.length;
  }

  /** When the oldest waiter started waiting; undefined when nobody waits. */
  oldestSince(): number | undefined {
    return this.#waiters[0]?.since;
  }

  /** Waits for `serve`; rejects with `onTimeout()` after `timeoutMs` ms, or ERR_CANCELLED on abort. */
  wait(timeoutMs: number, onTimeout: () => McphostError, signal?: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const waiter: Waiter<T> = {
        since: this.#now(),
        resolve,
        reject,
        cleanup: () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        },
      };
      const leave = (error: McphostError): void => {
        const index = this.#waiters.indexOf(waiter);
        if (index === -1) return;
        this.#waiters.splice(index, 1);
        waiter.cleanup();
        reject(error);
      };
      const onAbort = (): void => leave(cancelled());
      const timer = setTimeout(() => leave(onTimeout()), timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  /** Hands `value` to the oldest waiter; false when nobody waits. */
  serve(value: T): boolean {
    const waiter = this.#waiters.shift();
    if (!waiter) return false;
    waiter.cleanup();
    waiter.resolve(value);
    return true;
  }

  /** Fails the oldest waiter; false when nobody waits. */
  failOldest(error: McphostError): boolean {
    const waiter = this.#waiters.shift();
    if (!waiter) return false;
    waiter.cleanup();
    waiter.reject(error);
    return true;
  }

  /** Fails every waiter. */
  failAll(error: McphostError): void {
    while (this.failOldest(error));
  }
}
