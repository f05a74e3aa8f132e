/**
 * The README's table of error codes, generated from `ERROR_REGISTRY` so the
 * two never drift: `npx tsx scripts/error-table.ts --write` rewrites the part
 * of README.md between the error-table markers; without `--write` it prints
 * it. A test checks that the README is current.
 */
import { fileURLToPath } from 'node:url';
import { readmeSection, writeOrPrintSection } from './readme-section.js';
import { ERROR_REGISTRY } from '../control-plane/errors.js';

/** The table as Markdown, in the registry's order (the stdio wire's codes first). */
export function errorTableMarkdown(): string {
  const cell = (text: string) => text.replaceAll('|', '\\|');
  const rows = Object.entries(ERROR_REGISTRY).map(([code, spec]) => {
    const meaning = spec.exposable
      ? spec.meaning
      : `${spec.meaning} Clients see a generic message.`;
    return `| \`${code}\` | ${spec.status} | ${spec.jsonRpc} | ${cell(meaning)} |`;
  });
  return ['| code | HTTP | JSON-RPC | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

/** The README's current table, or undefined without its markers. */
export function readmeErrorTable(readme: string): string | undefined {
  return readmeSection(readme, 'error-table');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeOrPrintSection('error-table', errorTableMarkdown(), process.argv);
}
