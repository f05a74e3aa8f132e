/**
 * The README's configuration table, generated from `CONFIG_TABLE` so the two
 * never drift: `npx tsx scripts/config-table.ts --write` rewrites the part of
 * README.md between the config-table markers; without `--write` it prints it.
 * A test checks that the README is current.
 */
import { fileURLToPath } from 'node:url';
import { readmeSection, writeOrPrintSection } from './readme-section.js';
import { CONFIG_TABLE } from '../control-plane/config.js';

/** The table as Markdown. */
export function configTableMarkdown(): string {
  const cell = (text: string) => text.replaceAll('|', '\\|');
  const rows = Object.values(CONFIG_TABLE).map((entry) => {
    const fallback =
      entry.default === undefined
        ? 'unset'
        : entry.default === ''
          ? 'empty'
          : `\`${entry.default}\``;
    return `| \`${entry.env}\` | ${cell(entry.doc)} | ${fallback} |`;
  });
  return ['| variable | meaning | default |', '|---|---|---|', ...rows].join('\n');
}

/** The README's current table, or undefined without its markers. */
export function readmeConfigTable(readme: string): string | undefined {
  return readmeSection(readme, 'config-table');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeOrPrintSection('config-table', configTableMarkdown(), process.argv);
}
