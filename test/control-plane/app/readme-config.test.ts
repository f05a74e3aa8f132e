/** The README's configuration table is the one generated from the configuration table. */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { configTableMarkdown, readmeConfigTable } from '../../../scripts/config-table.js';

it('documents every setting as control-plane/config.ts defines it', () => {
  const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
  // Run `npx tsx scripts/config-table.ts --write` after changing the configuration.
  expect(readmeConfigTable(readme)).toBe(configTableMarkdown());
});
