/**
 * Tool code writes `$1, $2…` placeholders for both databases; MySQL wants
 * positional `?`. This scanner rewrites each `$n` outside string literals,
 * quoted identifiers and comments into `?` and lists the values in the order
 * the `?` appear, so `$2 … $1 … $1` binds [v2, v1, v1].
 *
 * No library we have does this: mysql2's named-placeholders knows `:name` and
 * `?` only, skips neither backticks nor comments and ignores sql_mode; Kysely
 * builds SQL but never reads it; full SQL parsers refuse SQL they do not know.
 *
 * It follows MySQL's lexical rules, which the session's sql_mode changes:
 * '…' is a string; "…" is a string too, or an identifier under ANSI_QUOTES;
 * `…` is an identifier; a quote is escaped by doubling it, and inside strings
 * by a backslash unless NO_BACKSLASH_ESCAPES; `#`, `-- ` and /* … *\/ start
 * comments (the executable /*! … *\/ form is code). The caller passes the
 * session's mode (see mysql-numbered-statements.ts for how it is known).
 */
import { McphostError } from '../../errors.js';
import type { Statement } from './sql-statements.js';

/** The parts of a session's sql_mode that change how its SQL is read. */
export interface MysqlLexicalMode {
  /** ANSI_QUOTES: "…" is a quoted identifier, not a string. */
  ansiQuotes: boolean;
  /** NO_BACKSLASH_ESCAPES: a backslash in a string is an ordinary character. */
  noBackslashEscapes: boolean;
}

/** The lexical rules of MySQL's and MariaDB's default sql_mode (neither flag set). */
export const DEFAULT_LEXICAL_MODE: Readonly<MysqlLexicalMode> = Object.freeze({
  ansiQuotes: false,
  noBackslashEscapes: false,
});

/**
 * The lexical mode of a `@@sql_mode` value. The server lists combination
 * modes expanded (`ANSI` reads `REAL_AS_FLOAT,PIPES_AS_CONCAT,ANSI_QUOTES,…`),
 * so looking for the two flags themselves is enough.
 */
export function lexicalModeOf(sqlMode: string): MysqlLexicalMode {
  const flags = new Set(sqlMode.toUpperCase().split(','));
  return {
    ansiQuotes: flags.has('ANSI_QUOTES'),
    noBackslashEscapes: flags.has('NO_BACKSLASH_ESCAPES'),
  };
}

/**
 * Whether running `sql` may change the session's sql_mode. Through the
 * prepared-statement protocol the broker uses, only a statement naming the
 * variable can (`SET sql_mode`, `SET @@SESSION.sql_mode`, `SET STATEMENT
 * sql_mode=… FOR`, also inside /*! *\/): PREPARE, EXECUTE and EXECUTE
 * IMMEDIATE are refused by that protocol, and a stored routine's own mode is
 * restored when it returns. A statement that merely mentions it costs one
 * extra read of the mode.
 */
export function mayChangeSqlMode(sql: string): boolean {
  return /sql_mode/i.test(sql);
}

/**
 * Whether the session's mode can change how `sql` is read: ANSI_QUOTES only
 * changes what `"` opens, NO_BACKSLASH_ESCAPES only what `\` does in a
 * string; text with neither reads the same under every mode.
 */
export function lexingDependsOnMode(sql: string): boolean {
  return /["\\]/.test(sql);
}

/** Version gates below MySQL 5.7.0 run on every MySQL and MariaDB in use. */
const ALL_SERVERS_RUN_BELOW = 50700;

const IDENTIFIER_CHAR = /[A-Za-z0-9_$\u0080-\uffff]/;

/**
 * Rewrites `$n` placeholders to `?` and orders `values` to match, reading the
 * text under `mode` (default: the server's default sql_mode); throws
 * ERR_INVALID_ARGUMENT on a missing value or a bare `?`.
 */
export function translatePlaceholdersForMysql(
  sql: string,
  values: readonly unknown[],
  mode: MysqlLexicalMode = DEFAULT_LEXICAL_MODE,
): Statement {
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
      const isString = char === "'" || (char === '"' && !mode.ansiQuotes);
      const backslashEscapes = isString && !mode.noBackslashEscapes;
      copyUntil(endOfQuoted(sql, index, char, backslashEscapes));
    } else if (
      char === '#' ||
      (char === '-' && next === '-' && isCommentDashFollower(sql[index + 2]))
    ) {
      const newline = sql.indexOf('\n', index);
      copyUntil(newline === -1 ? sql.length : newline);
    } else if (char === '/' && next === '*') {
      const close = sql.indexOf('*/', index + 2);
      const end = close === -1 ? sql.length : close + 2;
      const runsAnywhere = executedByEveryServer(sql.slice(index, end));
      if (runsAnywhere) {
        // Code on every server: read on, its placeholders count.
        copyUntil(index + 3);
        continue;
      }
      if (runsAnywhere === false && /\?|\$[0-9]/.test(sql.slice(index, end))) {
        throw new McphostError(
          'ERR_INVALID_ARGUMENT',
          'sql: no placeholders inside a version-gated or MariaDB-only comment (/*!NNNNN … */, /*M! … */): whether the server runs it depends on the server',
        );
      }
      copyUntil(end);
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
function endOfQuoted(sql: string, start: number, quote: string, backslashEscapes: boolean): number {
  let index = start + 1;
  while (index < sql.length) {
    const char = sql[index];
    if (char === '\\' && backslashEscapes) {
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

// MySQL needs whitespace or a control character (DEL included) after `--` for it to be a comment.
function isCommentDashFollower(char: string | undefined): boolean {
  if (char === undefined || /\s/.test(char)) return true;
  const code = char.charCodeAt(0);
  return code < 0x20 || code === 0x7f;
}

/**
 * What servers make of the comment `text` (from its `/*`): true when every
 * MySQL and MariaDB runs it as code (`/*!` alone, or gated on a version below
 * 5.7.0, which both run); false when it depends on the server (a higher
 * version gate — MariaDB skips MySQL 5.7+ gates — or `/*M!`, which MySQL
 * skips); undefined for a plain comment.
 */
function executedByEveryServer(text: string): boolean | undefined {
  if (text.startsWith('/*M!')) return false;
  if (!text.startsWith('/*!')) return undefined;
  const gate = /^\/\*!([0-9]{5,6})/.exec(text)?.[1];
  return gate === undefined || Number(gate) < ALL_SERVERS_RUN_BELOW;
}
