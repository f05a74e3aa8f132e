/**
 * The harness's stdout as an instance hands it on: bytes that arrive before
 * anyone listens (the `ready` line can beat the pool's subscription) are kept
 * and given to the first listener, then every chunk goes to every listener.
 */
export class StdoutFanout {
  #listeners: ((chunk: Buffer) => void)[] = [];
  #early: Buffer[] | undefined = [];

  /** Adds a listener; the first one also receives what arrived before it. */
  listen(listener: (chunk: Buffer) => void): void {
    this.#listeners.push(listener);
    const early = this.#early;
    if (early === undefined) return;
    this.#early = undefined;
    for (const chunk of early) listener(chunk);
  }

  /** Hands a chunk on; `copy` keeps a private copy while nobody listens (the source may reuse its buffer). */
  emit(chunk: Buffer, copy = false): void {
    if (this.#early !== undefined) {
      this.#early.push(copy ? Buffer.from(chunk) : chunk);
      return;
    }
    for (const listener of this.#listeners) listener(chunk);
  }
}
