/**
 * The statements behind db.select and db.insert, compiled by Kysely for the
 * dialect without a connection: Kysely quotes identifiers and emits each
 * dialect's placeholders, every value is bound, never spliced into the text.
 * Table and column names come from tool code, so they are accepted only as
 * plain identifiers (Kysely itself would read `a as b` as an alias and
 * `a.b.c` as `a.b`).
 */
import {
  DummyDriver,
  Kysely,
  MysqlAdapter,
  MysqlIntrospector,
  MysqlQueryCompiler,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type Dialect as KyselyDialect,
} from 'kysely';
import { McphostError } from '../../errors.js';

/** The two SQL dialects sdk.db speaks. */
export type Dialect = 'pg' | 'mysql';

/** A statement ready to run: text plus bound values in placeholder order. */
export interface Statement {
  sql: string;
  values: unknown[];
}

/** Any table of any database: names are checked at run time, not known to the type system. */
type UntypedDatabase = Record<string, Record<string, unknown>>;

// "Cold" instances: DummyDriver never connects; they only compile.
const compilers: Record<Dialect, Kysely<UntypedDatabase>> = {
  pg: compileOnly({
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  }),
  mysql: compileOnly({
    createAdapter: () => new MysqlAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new MysqlIntrospector(db),
    createQueryCompiler: () => new MysqlQueryCompiler(),
  }),
};

function compileOnly(dialect: KyselyDialect): Kysely<UntypedDatabase> {
  return new Kysely<UntypedDatabase>({ dialect });
}

const PLAIN_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `select * from table where a = $1 and b is null`; an empty filter selects every row. */
export function buildSelect(
  dialect: Dialect,
  table: string,
  where: Record<string, unknown>,
): Statement {
  let query = compilers[dialect].selectFrom(checkTable(table)).selectAll();
  for (const [column, value] of Object.entries(where)) {
    checkColumn(column);
    if (value === null) {
      query = query.where(column, 'is', null);
      continue;
    }
    // Kysely would expand an array into a list and treat an object as a value;
    // only an equality with one scalar is what a filter means here.
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw new McphostError(
        'ERR_INVALID_ARGUMENT',
        `where.${column}: must be a string, number, boolean or null (equality filter), not ${describeType(value)}`,
      );
    }
    query = query.where(column, '=', value);
  }
  return toStatement(query.compile());
}

/**
 * `insert into table (a, b) values ($1, $2)`, with `returning *` on
 * PostgreSQL; MySQL has no RETURNING, the broker reads the row back by its
 * insert id. Columns whose value is undefined are left out.
 */
export function buildInsert(
  dialect: Dialect,
  table: string,
  row: Record<string, unknown>,
): Statement {
  const insert = compilers[dialect].insertInto(checkTable(table));
  const present = Object.entries(row).filter(([, value]) => value !== undefined);
  for (const [column] of present) checkColumn(column);
  if (dialect === 'mysql') {
    // An empty row is `() values ()` on MySQL, which has no DEFAULT VALUES.
    return toStatement(insert.values(Object.fromEntries(present)).compile());
  }
  const filled =
    present.length === 0 ? insert.defaultValues() : insert.values(Object.fromEntries(present));
  return toStatement(filled.returningAll().compile());
}

function toStatement(compiled: { sql: string; parameters: readonly unknown[] }): Statement {
  return { sql: compiled.sql, values: [...compiled.parameters] };
}

/** The table name as given, when it is a plain identifier or `schema.table`; throws ERR_DB_IDENTIFIER otherwise. */
function checkTable(name: string): string {
  const parts = name.split('.');
  if (parts.length > 2 || !parts.every((part) => PLAIN_IDENTIFIER.test(part))) {
    throw new McphostError(
      'ERR_DB_IDENTIFIER',
      `table name ${JSON.stringify(name)} is not a plain identifier (letters, digits and _, optionally schema.table)`,
    );
  }
  return name;
}

function checkColumn(name: string): void {
  if (!PLAIN_IDENTIFIER.test(name)) {
    throw new McphostError(
      'ERR_DB_IDENTIFIER',
      `column name ${JSON.stringify(name)} is not a plain identifier (letters, digits and _, not starting with a digit)`,
    );
  }
}

function describeType(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : typeof value;
}
