/** A bounded memory of the last bytes a process wrote to stderr, for exit diagnostics. */

/** Default number of stderr bytes kept: 8 KiB. */
export const DEFAULT_STDERR_TAIL_BYTES = 8 * 1024;

/** Keeps the last `maxBytes` bytes pushed into it. */
export class StderrTail {
  readonly #maxBytes: number;
  #chunks: Buffer[] = [];
  #bytes = 0;

  /** `maxBytes`: how much to keep, in bytes; default 8 KiB. */
  constructor(maxBytes: number = DEFAULT_STDERR_TAIL_BYTES) {
    if (!Number.isInteger(maxBytes) || maxBytes <= 0)
      throw new TypeError('StderrTail: maxBytes must be a positive integer');
    this.#maxBytes = maxBytes;
  }

  /** Remembers a chunk (copied: the caller may reuse its memory). */
  push(chunk: Buffer): void {
    this.#chunks.push(Buffer.from(chunk));
    this.#bytes += chunk.length;
    // Compact only when well over the bound, so a chatty stderr costs O(1) per chunk.
    if (this.#bytes > 2 * this.#maxBytes) this.#compact();
  }

  /** The kept bytes as text (a multi-byte character cut at the start shows as U+FFFD). */
  text(): string {
    this.#compact();
    return Buffer.concat(this.#chunks).toString('utf8');
  }

  #compact(): void {
    if (this.#bytes <= this.#maxBytes) return;
    const all = Buffer.concat(this.#chunks);
    const kept = all.subarray(all.length - this.#maxBytes);
    this.#chunks = [kept];
    this.#bytes = kept.length;
  }
}
