/**
 * Prints the configuration table as Markdown, for the README: the README's
 * table is generated from `CONFIG_TABLE`, never written by hand.
 * `npx tsx scripts/config-table.ts`
 */
import { CONFIG_TABLE } from '../control-plane/config.js';

const rows = Object.values(CONFIG_TABLE).map(
  (entry) =>
    `| \`${entry.env}\` | ${entry.doc.replaceAll('|', '\\|')} | ${entry.default === undefined ? 'unset' : entry.default === '' ? 'empty' : `\`${entry.default}\``} |`,
);
console.log(['| variable | meaning | default |', '|---|---|---|', ...rows].join('\n'));
