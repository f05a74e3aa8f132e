/**
 * A generated part of README.md between two HTML-comment markers (the config
 * table, the error table): read it for the tests that hold the README current,
 * rewrite it from a script's `--write`.
 */
import { readFileSync, writeFileSync } from 'node:fs';

/** The markers `<!-- {name}:start -->` and `<!-- {name}:end -->` around one section. */
function markers(name: string): { start: string; end: string } {
  return { start: `<!-- ${name}:start -->`, end: `<!-- ${name}:end -->` };
}

/** The section's current text, or undefined when the README lacks its markers. */
export function readmeSection(readme: string, name: string): string | undefined {
  const { start, end } = markers(name);
  const from = readme.indexOf(start);
  const to = readme.indexOf(end);
  return from === -1 || to === -1 ? undefined : readme.slice(from + start.length, to).trim();
}

/** A script's command line: `--write` puts `text` into README.md's section, otherwise prints it. */
export function writeOrPrintSection(name: string, text: string, argv: readonly string[]): void {
  if (!argv.includes('--write')) {
    console.log(text);
    return;
  }
  const { start, end } = markers(name);
  const path = new URL('../README.md', import.meta.url);
  const readme = readFileSync(path, 'utf8');
  const from = readme.indexOf(start);
  const to = readme.indexOf(end);
  if (from === -1 || to === -1) throw new Error(`README.md has no ${start} … ${end} markers`);
  writeFileSync(path, `${readme.slice(0, from + start.length)}\n${text}\n${readme.slice(to)}`);
}
