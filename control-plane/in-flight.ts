/**
 * Work in flight, counted so that shutdown can wait for it: invocations
 * (tool-invoker.ts), and admin answers held for their audit entry
 * (admin-api.ts), whose connections must not be cut before they are sent.
 */
export class InFlight {
  #count = 0;
  #idleWaiters: (() => void)[] = [];

  /** How many run now. */
  get count(): number {
    return this.#count;
  }

  /** Runs `work`, counted while it runs. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    this.#count++;
    try {
      return await work();
    } finally {
      if (--this.#count === 0) for (const wake of this.#idleWaiters.splice(0)) wake();
    }
  }

  /** Resolves when nothing runs, or after `timeoutMs` (shutdown's grace period). */
  whenIdle(timeoutMs: number): Promise<void> {
    if (this.#count === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.#idleWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
