/**
 * The statements behind db.select and db.insert. Table and column names come
 * from tool code, so they are accepted only as plain identifiers and quoted
 * for the dialect; every value is bound, never spliced into the text.
 */
import { McphostError } from '../../errors.js';

/** The two SQL dialects sdk.db speaks. */
export type Dialect = 'pg' | 'mysql';

/** A statement ready to run: text plus bound values in placeholder order. */
export interface Statement {
  sql: string;
  values: unknown[];
}

const PLAIN_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Quotes a column name; throws ERR_DB_IDENTIFIER unless it is a plain identifier. */
export function quoteColumn(dialect: Dialect, name: string): string {
  if (!PLAIN_IDENTIFIER.test(name)) {
    throw new McphostError(
      'ERR_DB_IDENTIFIER',
      `column name ${JSON.stringify(name)} is not a plain identifier (letters, digits and _, not starting with a digit)`,
    );
  }
  return dialect === 'pg' ? `"${name}"` : `\`${name}\``;
}

/** Quotes a table name, optionally `schema.table`; throws ERR_DB_IDENTIFIER otherwise. */
export function quoteTable(dialect: Dialect, name: string): string {
  const parts = name.split('.');
  if (parts.length > 2 || !parts.every((part) => PLAIN_IDENTIFIER.test(part))) {
    throw new McphostError(
      'ERR_DB_IDENTIFIER',
      `table name ${JSON.stringify(name)} is not a plain identifier (letters, digits and _, optionally schema.table)`,
    );
  }
  return parts.map((part) => (dialect === 'pg' ? `"${part}"` : `\`${part}\``)).join('.');
}

function placeholder(dialect: Dialect, position: number): string {
  return dialect === 'pg' ? `$${position}` : '?';
}

/** `SELECT * FROM table WHERE a = $1 AND b IS NULL`; an empty filter selects every row. */
export function buildSelect(
  dialect: Dialect,
  table: string,
  where: Record<string, unknown>,
): Statement {
  const conditions: string[] = [];
  const values: unknown[] = [];
  for (const [column, value] of Object.entries(where)) {
    const quoted = quoteColumn(dialect, column);
    if (value === null) {
      conditions.push(`${quoted} IS NULL`);
      continue;
    }
    if (!['string', 'number', 'boolean'].includes(typeof value)) {
      throw new McphostError(
        'ERR_INVALID_ARGUMENT',
        `where.${column}: must be a string, number, boolean or null (equality filter), not ${describeType(value)}`,
      );
    }
    values.push(value);
    conditions.push(`${quoted} = ${placeholder(dialect, values.length)}`);
  }
  const filter = conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`;
  return { sql: `SELECT * FROM ${quoteTable(dialect, table)}${filter}`, values };
}

/** `INSERT INTO table (a, b) VALUES ($1, $2)`, with `RETURNING *` on PostgreSQL. */
export function buildInsert(
  dialect: Dialect,
  table: string,
  row: Record<string, unknown>,
): Statement {
  const quotedTable = quoteTable(dialect, table);
  const entries = Object.entries(row).filter(([, value]) => value !== undefined);
  const columns = entries.map(([column]) => quoteColumn(dialect, column));
  const values = entries.map(([, value]) => value);
  const returning = dialect === 'pg' ? ' RETURNING *' : '';
  if (entries.length === 0) {
    const empty = dialect === 'pg' ? 'DEFAULT VALUES' : '() VALUES ()';
    return { sql: `INSERT INTO ${quotedTable} ${empty}${returning}`, values };
  }
  const marks = values.map((_, index) => placeholder(dialect, index + 1));
  return {
    sql: `INSERT INTO ${quotedTable} (${columns.join(', ')}) VALUES (${marks.join(', ')})${returning}`,
    values,
  };
}

function describeType(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : typeof value;
}
