/**
 * Keeps an invocation's console lines up to its log budget. The harness
 * already bounds what it sends; this bound holds even if the harness is
 * subverted, so a flood costs the control plane no more than the budget.
 */
import type { LogEntry } from './invocation.js';

/** Collects log entries up to `maxBytes` of text, then one notice, then nothing. */
export class LogCollector {
  readonly entries: LogEntry[] = [];
  readonly #maxBytes: number;
  readonly #forward: ((entry: LogEntry) => void) | undefined;
  #bytes = 0;
  #dropped = false;

  constructor(maxBytes: number, forward?: (entry: LogEntry) => void) {
    this.#maxBytes = maxBytes;
    this.#forward = forward;
  }

  /** Records (and forwards) one entry while within budget. */
  add(entry: LogEntry): void {
    if (this.#dropped) return;
    const size = Buffer.byteLength(entry.text, 'utf8');
    if (this.#bytes + size > this.#maxBytes) {
      this.#dropped = true;
      this.#keep({
        level: 'warn',
        text: `[log limit of ${this.#maxBytes} bytes reached; later lines dropped]`,
        at: entry.at,
      });
      return;
    }
    this.#bytes += size;
    this.#keep(entry);
  }

  #keep(entry: LogEntry): void {
    this.entries.push(entry);
    try {
      this.#forward?.(entry);
    } catch {
      // The caller's sink failing must not fail the invocation.
    }
  }
}
