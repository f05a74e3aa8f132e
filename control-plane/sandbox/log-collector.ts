/**
 * Keeps an invocation's console lines up to its log budget. The harness
 * already bounds what it sends; this bound holds even if the harness is
 * subverted, so a flood costs the control plane no more than the budget:
 * every line is charged at least LOG_ENTRY_MIN_BYTES (an empty line is not
 * free to keep) and the number of lines is capped.
 */
import { LOG_ENTRY_MIN_BYTES } from '../../src/protocol/index.js';
import type { LogEntry } from './invocation.js';
import type { InvocationLimits } from './limits.js';

/** Room for the harness's own "limit reached" notice on top of the budget, in bytes. */
const HARNESS_NOTICE_SLACK_BYTES = 1024;

/** Collects log entries within budget, then one notice, then nothing. */
export class LogCollector {
  readonly entries: LogEntry[] = [];
  readonly #maxBytes: number;
  readonly #maxEntries: number;
  readonly #forward: ((entry: LogEntry) => void) | undefined;
  #bytes = 0;
  #dropped = false;

  /**
   * `limits`: the invocation's byte and line budgets; `forward` sees every kept
   * entry, after it is kept (a throw reaches the caller of `add`: the runner
   * connection, which ignores it).
   */
  constructor(
    limits: Pick<InvocationLimits, 'maxLogBytes' | 'maxLogEntries'>,
    forward?: (entry: LogEntry) => void,
  ) {
    // One line and its bytes beyond the budget: the harness's own notice when it stops.
    this.#maxBytes = limits.maxLogBytes + HARNESS_NOTICE_SLACK_BYTES;
    this.#maxEntries = limits.maxLogEntries + 1;
    this.#forward = forward;
  }

  /** True once lines were dropped (the notice is the last entry). */
  get truncated(): boolean {
    return this.#dropped;
  }

  /** Records (and forwards) one entry while within budget. */
  add(entry: LogEntry): void {
    if (this.#dropped) return;
    const size = Math.max(LOG_ENTRY_MIN_BYTES, Buffer.byteLength(entry.text, 'utf8'));
    if (this.#bytes + size > this.#maxBytes || this.entries.length >= this.#maxEntries) {
      this.#dropped = true;
      this.#keep({
        level: 'warn',
        text: `[mcphost] log limit reached (${this.#maxEntries - 1} lines or ${this.#maxBytes - HARNESS_NOTICE_SLACK_BYTES} bytes); later lines dropped`,
        at: entry.at,
      });
      return;
    }
    this.#bytes += size;
    this.#keep(entry);
  }

  #keep(entry: LogEntry): void {
    this.entries.push(entry);
    this.#forward?.(entry);
  }
}
