/**
 * A bounded FIFO of callers waiting for a container. Each waiter gives up on
 * its own after the wait limit or when its signal aborts; nobody hangs.
 */
import { McphostError } from '../../errors.js';

interface Waiter<T> {
  resolve(value: T): void;
  reject(error: McphostError): void;
  cleanup(): void;
}

/** FIFO of pending leases. */
export class WaitQueue<T> {
  readonly #waiters: Waiter<T>[] = [];

  get length(): number {
    return this.#waiters.length;
  }

  /** Waits for `serve`; rejects with `onTimeout()` after `timeoutMs` ms, or ERR_CANCELLED on abort. */
  wait(timeoutMs: number, onTimeout: () => McphostError, signal?: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const waiter: Waiter<T> = {
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
      const onAbort = (): void =>
        leave(new McphostError('ERR_CANCELLED', 'the invocation was cancelled'));
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
