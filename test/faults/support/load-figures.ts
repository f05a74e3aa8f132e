/**
 * The figures a load run reports: counts by kind, latency percentiles, wall
 * time, and one example message per error kind (so "clear error" can be read,
 * not just counted).
 */

/** Counts and timings of a finished load. */
export interface LoadFigures {
  calls: number;
  ok: number;
  /** Outcomes other than `ok`, by kind. */
  errorsByKind: Record<string, number>;
  /** One message per error kind, as the client saw it. */
  exampleMessages: Record<string, string>;
  /** Latency of every call, in ms. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  wallMs: number;
}

/** The `p`-th percentile (0–100) of `values` by nearest rank; 0 for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] ?? 0;
}

/** Collects outcomes as they arrive. */
export class FigureCollector {
  readonly #latencies: number[] = [];
  readonly #byKind: Record<string, number> = {};
  readonly #examples: Record<string, string> = {};
  #ok = 0;

  /** Records one settled call. */
  add(kind: string, latencyMs: number, message?: string): void {
    this.#latencies.push(latencyMs);
    if (kind === 'ok') {
      this.#ok += 1;
      return;
    }
    this.#byKind[kind] = (this.#byKind[kind] ?? 0) + 1;
    if (message !== undefined && this.#examples[kind] === undefined) this.#examples[kind] = message;
  }

  /** Calls recorded so far. */
  get count(): number {
    return this.#latencies.length;
  }

  /** The figures, with `wallMs` measured by the caller. */
  figures(wallMs: number): LoadFigures {
    return {
      calls: this.#latencies.length,
      ok: this.#ok,
      errorsByKind: { ...this.#byKind },
      exampleMessages: { ...this.#examples },
      p50Ms: Math.round(percentile(this.#latencies, 50) * 10) / 10,
      p99Ms: Math.round(percentile(this.#latencies, 99) * 10) / 10,
      maxMs: Math.round(percentile(this.#latencies, 100) * 10) / 10,
      wallMs: Math.round(wallMs),
    };
  }
}

/** One printable block for the test output (the closing report quotes it). */
export function formatFigures(title: string, figures: LoadFigures): string {
  const kinds = Object.entries(figures.errorsByKind)
    .sort((a, b) => b[1] - a[1])
    .map(([kind, count]) => `    ${kind}: ${count}  e.g. "${figures.exampleMessages[kind] ?? ''}"`);
  return [
    `[faults] ${title}`,
    `  calls ${figures.calls}, ok ${figures.ok}, errors ${figures.calls - figures.ok}`,
    ...kinds,
    `  latency p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms, max ${figures.maxMs} ms; wall ${(figures.wallMs / 1000).toFixed(1)} s (${Math.round((figures.calls * 1000) / Math.max(1, figures.wallMs))} calls/s)`,
  ].join('\n');
}
