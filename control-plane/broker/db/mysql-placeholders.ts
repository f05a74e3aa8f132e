/**
 * Tool code writes `$1, $2…` placeholders for both databases; MySQL wants
 * positional `?`. This scanner rewrites each `$n` outside string literals,
 * quoted identifiers and comments into `?` and lists the values in the order
 * the `?` appear, so `$2 … $1 … $1` binds [v2, v1, v1].
 *
 * It follows MySQL's default lexical rules: '…' and "…" are strings with
 * doubled-quote and backslash escapes, `…` is an identifier, and `#`, `-- `
 * and /* … *\/ start comments (the executable /*! … *\/ form is code).
 */
import { McphostError } from '../../errors.js';
import type { Statement } from './sql-statements.js';

const IDENTIFIER_CHAR = /[A-Za-z0-9_$\u0080-\uffff]/;

/** Rewrites `$n` placeholders to `?` and orders `values` to match; throws ERR_INVALID_ARGUMENT on a missing value. */
export function translatePlaceholdersForMysql(sql: string, values: readonly unknown[]): Statement {
  let output = '';
  const ordered: unknown[] = [];
  let index = 0;
  const copyUntil = (end: number): void => {
    output += sql.slice(index, end);
    index = end;
  };
  while (index < sql.length) {
    const char = sql[index] as string;
    const next = sql[index + 1];
    if (char === "'" || char === '"' || char === '`') {
      copyUntil(endOfQuoted(sql, index, char));
    } else if (
      char === '#' ||
      (char === '-' && next === '-' && isCommentDashFollower(sql[index + 2]))
    ) {
      const newline = sql.indexOf('\n', index);
      copyUntil(newline === -1 ? sql.length : newline);
    } else if (char === '/' && next === '*' && sql[index + 2] !== '!') {
      const close = sql.indexOf('*/', index + 2);
      copyUntil(close === -1 ? sql.length : close + 2);
    } else if (
      char === '$' &&
      /[0-9]/.test(next ?? '') &&
      !IDENTIFIER_CHAR.test(sql[index - 1] ?? ' ')
    ) {
      const digits = /^[0-9]+/.exec(sql.slice(index + 1))?.[0] ?? '';
      const position = Number(digits);
      if (position < 1 || position > values.length) {
        throw new McphostError(
          'ERR_INVALID_ARGUMENT',
          `values: the query uses $${digits} but ${values.length} value${values.length === 1 ? ' was' : 's were'} given`,
        );
      }
      ordered.push(values[position - 1]);
      output += '?';
      index += 1 + digits.length;
    } else if (char === '?') {
      // The driver would treat it as a placeholder of its own.
      throw new McphostError('ERR_INVALID_ARGUMENT', 'sql: use $1, $2… placeholders, not ?');
    } else {
      copyUntil(index + 1);
    }
  }
  return { sql: output, values: ordered };
}

/** Index just past the closing quote of the literal or identifier opening at `start`. */
function endOfQuoted(sql: string, start: number, quote: string): number {
  let index = start + 1;
  while (index < sql.length) {
    const char = sql[index];
    if (char === '\\' && quote !== '`') {
      index += 2;
    } else if (char === quote) {
      if (sql[index + 1] === quote) index += 2;
      else return index + 1;
    } else {
      index += 1;
    }
  }
  return sql.length;
}

// MySQL needs whitespace or a control character after `--` for it to be a comment.
function isCommentDashFollower(char: string | undefined): boolean {
  return char === undefined || /\s/.test(char) || char.charCodeAt(0) < 0x20;
}
