/** The README's table of Prometheus series is the one generated from the registry. */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { metricsTableMarkdown, readmeMetricsTable } from '../../../scripts/metrics-table.js';

it('documents every series control-plane/metrics registers, with its labels', () => {
  const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
  // Run `npx tsx scripts/metrics-table.ts --write` after adding or changing a series.
  expect(readmeMetricsTable(readme)).toBe(metricsTableMarkdown());
});

it('names each series of a real scrape', async () => {
  const { Metrics } = await import('../../../control-plane/metrics/index.js');
  const metrics = new Metrics(
    () => [],
    () => [],
  );
  metrics.watchModernEra(
    () => new Map(),
    () => new Map(),
  );
  const { body } = await metrics.scrape();
  const scraped = [...body.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1]!);
  const table = metricsTableMarkdown();
  for (const name of scraped) {
    if (name.startsWith('mcphost_process_')) continue;
    expect(table).toContain(`| \`${name}\``);
  }
  expect(table).toContain('`mcphost_process_*`');
});
