/**
 * The README's table of Prometheus series, generated from the registry the
 * service itself builds (control-plane/metrics/), so the two never drift:
 * `npx tsx scripts/metrics-table.ts --write` rewrites the part of README.md
 * between the metrics-table markers; without `--write` it prints it. A test
 * checks that the README is current.
 */
import { fileURLToPath } from 'node:url';
import { readmeSection, writeOrPrintSection } from './readme-section.js';
import { Metrics } from '../control-plane/metrics/index.js';

/** prom-client's default process metrics carry this prefix: one row stands for them all. */
const PROCESS_PREFIX = 'mcphost_process_';

/** What the table reads of a registered metric (prom-client keeps `labelNames` untyped). */
interface RegisteredMetric {
  name: string;
  help: string;
  type: string;
  labelNames?: readonly string[];
}

/** Every series of a control plane's registry, in registration order (the pool and engine figures included). */
function registeredMetrics(): RegisteredMetric[] {
  // No pools or engines are needed: their gauges are registered whether or not they have samples.
  const metrics = new Metrics(
    () => [],
    () => [],
  );
  metrics.watchModernEra(
    () => new Map(),
    () => new Map(),
  );
  return metrics.registry.getMetricsAsArray() as unknown as RegisteredMetric[];
}

/** The table as Markdown. */
export function metricsTableMarkdown(): string {
  const cell = (text: string) => text.replaceAll('|', '\\|');
  const all = registeredMetrics();
  const own = all.filter((metric) => !metric.name.startsWith(PROCESS_PREFIX));
  const processMetrics = all.filter((metric) => metric.name.startsWith(PROCESS_PREFIX));
  const rows = own.map((metric) => {
    const labels = (metric.labelNames ?? []).map((label) => `\`${label}\``).join(', ') || '—';
    const suffixes = metric.type === 'histogram' ? ' (`_bucket`, `_sum`, `_count`)' : '';
    return `| \`${metric.name}\`${suffixes} | ${metric.type} | ${labels} | ${cell(metric.help)} |`;
  });
  rows.push(
    `| \`${PROCESS_PREFIX}*\` | — | — | the Node.js process: prom-client's default series (CPU, memory, file descriptors, event-loop lag, heap, garbage collection), e.g. \`${processMetrics[0]?.name ?? `${PROCESS_PREFIX}process_cpu_seconds_total`}\` |`,
  );
  return ['| series | type | labels | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

/** The README's current table, or undefined without its markers. */
export function readmeMetricsTable(readme: string): string | undefined {
  return readmeSection(readme, 'metrics-table');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeOrPrintSection('metrics-table', metricsTableMarkdown(), process.argv);
}
