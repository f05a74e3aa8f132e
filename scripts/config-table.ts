/**
 * The README's configuration table, generated from `CONFIG_TABLE` so the two
 * never drift: `npx tsx scripts/config-table.ts --write` rewrites the part of
 * README.md between the config-table markers; without `--write` it prints it.
 * A test checks that the README is current.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CONFIG_TABLE } from '../control-plane/config.js';

const START = '<!-- config-table:start -->';
const END = '<!-- config-table:end -->';

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

/** The README's current table (between the markers). */
export function readmeConfigTable(readme: string): string | undefined {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  return start === -1 || end === -1 ? undefined : readme.slice(start + START.length, end).trim();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const table = configTableMarkdown();
  if (process.argv.includes('--write')) {
    const path = new URL('../README.md', import.meta.url);
    const readme = readFileSync(path, 'utf8');
    const start = readme.indexOf(START);
    const end = readme.indexOf(END);
    if (start === -1 || end === -1) throw new Error(`README.md has no ${START} … ${END} markers`);
    writeFileSync(path, `${readme.slice(0, start + START.length)}\n${table}\n${readme.slice(end)}`);
  } else console.log(table);
}
