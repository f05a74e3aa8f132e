/**
 * sdk.db on the control-plane side: select / insert / query against
 * PostgreSQL or MySQL through shared, bounded pools. The database host is
 * resolved and checked against the egress policy once per pool, and the pool
 * dials the checked address. Database failures become ERR_DB_FAILED carrying
 * the database's own message and code, with the password scrubbed.
 */
import type {
  DbConnection,
  DbInsertArgs,
  DbQueryArgs,
  DbSelectArgs,
} from '../../../src/protocol/index.js';
import { McphostError, isMcphostError } from '../../errors.js';
import type { EgressPolicy } from '../egress/egress-policy.js';
import { resolveCheckedAddress, type HostLookup } from '../egress/checked-resolver.js';
import type { DatabasePool, DatabasePoolLimits, StatementResult } from './database-pool.js';
import { toJsonSafe } from './json-safe.js';
import { createMysqlPool } from './mysql-pool.js';
import { translatePlaceholdersForMysql } from './mysql-placeholders.js';
import { createPgPool } from './pg-pool.js';
import { PoolRegistry } from './pool-registry.js';
import {
  buildInsert,
  buildSelect,
  quoteColumn,
  quoteTable,
  type Dialect,
  type Statement,
} from './sql-statements.js';

/** Limits of the database side of the broker. */
export interface DatabaseLimits {
  /** Connections per set of connection parameters. */
  maxConnectionsPerKey: number;
  /** Connections across all databases; bounds the number of pools. */
  maxConnectionsTotal: number;
  /** Idle connections and unused pools close after this many milliseconds. */
  idleMs: number;
  /** Resolve + connect + authenticate limit, in milliseconds. */
  connectTimeoutMs: number;
  /** Statement limit, in milliseconds. */
  statementTimeoutMs: number;
}

/** A row as tool code sees it: JSON values only. */
export type JsonRow = Record<string, unknown>;

/** Runs sdk.db operations for every invocation of this control plane. */
export class DatabaseBroker {
  private readonly registry: PoolRegistry;

  constructor(
    private readonly policy: EgressPolicy,
    private readonly lookup: HostLookup,
    private readonly limits: DatabaseLimits,
  ) {
    this.registry = new PoolRegistry({
      maxPools: Math.max(1, Math.floor(limits.maxConnectionsTotal / limits.maxConnectionsPerKey)),
      idleMs: limits.idleMs,
      open: (type, connection) => this.openPool(type, connection),
    });
  }

  /** Rows of `table` equal to every field of `where` (empty → all rows). */
  async select(args: DbSelectArgs, signal: AbortSignal): Promise<JsonRow[]> {
    const statement = buildSelect(args.type, args.table, args.where);
    const result = await this.run(args.type, args.connection, signal, (pool) =>
      pool.run(statement),
    );
    return result.rows.map((row) => toJsonSafe(row) as JsonRow);
  }

  /** Inserts `row` into `table` and returns the created row as the database stored it. */
  async insert(args: DbInsertArgs, signal: AbortSignal): Promise<JsonRow> {
    const statement = buildInsert(args.type, args.table, args.row);
    const created = await this.run(args.type, args.connection, signal, async (pool) => {
      const result = await pool.run(statement);
      if (args.type === 'pg') return result.rows[0];
      return (await this.readBackMysqlInsert(pool, args, result)) ?? args.row;
    });
    return toJsonSafe(created ?? {}) as JsonRow;
  }

  /** Runs `sql` with `$1…$n` placeholders bound to `values` (translated to `?` for MySQL). */
  async query(
    args: DbQueryArgs,
    signal: AbortSignal,
  ): Promise<{ rows: JsonRow[]; rowCount: number }> {
    const statement: Statement =
      args.type === 'mysql'
        ? translatePlaceholdersForMysql(args.sql, args.values)
        : { sql: args.sql, values: args.values };
    const result = await this.run(args.type, args.connection, signal, (pool) =>
      pool.run(statement),
    );
    return {
      rows: result.rows.map((row) => toJsonSafe(row) as JsonRow),
      rowCount: result.rowCount,
    };
  }

  /** Open connections across all pools (busy or idle). */
  openConnections(): Promise<number> {
    return this.registry.openConnections();
  }

  /** Closes every pool. */
  close(): Promise<void> {
    return this.registry.close();
  }

  private async run<T>(
    type: Dialect,
    connection: DbConnection,
    signal: AbortSignal,
    work: (pool: DatabasePool) => Promise<T>,
  ): Promise<T> {
    // A call cancelled while it waited for a pool must not reach the database
    // (an INSERT would commit after the tool was told it was cancelled).
    const guarded = (pool: DatabasePool) => {
      if (signal.aborted) throw new McphostError('ERR_CANCELLED', 'the invocation was cancelled');
      return work(pool);
    };
    try {
      return await raceAbort(this.registry.use(type, connection, guarded), signal);
    } catch (error) {
      throw translateDatabaseError(error, type, connection);
    }
  }

  private async openPool(type: Dialect, connection: DbConnection): Promise<DatabasePool> {
    const ip = await resolveCheckedAddress(connection.host, {
      policy: this.policy,
      lookup: this.lookup,
      timeoutMs: this.limits.connectTimeoutMs,
      timeoutCode: 'ERR_DB_FAILED',
      failureCode: 'ERR_DB_FAILED',
      purpose: 'database connection',
    });
    const poolLimits: DatabasePoolLimits = {
      maxConnections: this.limits.maxConnectionsPerKey,
      idleMs: this.limits.idleMs,
      connectTimeoutMs: this.limits.connectTimeoutMs,
      statementTimeoutMs: this.limits.statementTimeoutMs,
    };
    const target = {
      ...connection,
      address: ip.address,
      port: connection.port,
      password: connection.password,
    };
    return type === 'pg' ? createPgPool(target, poolLimits) : createMysqlPool(target, poolLimits);
  }

  /** MySQL has no RETURNING: read the row back by its AUTO_INCREMENT column. */
  private async readBackMysqlInsert(
    pool: DatabasePool,
    args: DbInsertArgs,
    result: StatementResult,
  ): Promise<Record<string, unknown> | undefined> {
    if (result.insertId === undefined || result.insertId === 0) return undefined;
    const [schema, table] = args.table.includes('.')
      ? args.table.split('.')
      : [undefined, args.table];
    const columns = await pool.run({
      sql:
        'SELECT COLUMN_NAME AS name FROM information_schema.COLUMNS ' +
        "WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ? AND EXTRA LIKE '%auto_increment%'",
      values: [schema ?? null, table],
    });
    const column = columns.rows[0]?.name;
    if (typeof column !== 'string') return { ...args.row };
    const readBack = await pool.run({
      sql: `SELECT * FROM ${quoteTable('mysql', args.table)} WHERE ${quoteColumn('mysql', column)} = ?`,
      values: [result.insertId],
    });
    return readBack.rows[0] ?? { ...args.row, [column]: result.insertId };
  }
}

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted)
    return Promise.reject(new McphostError('ERR_CANCELLED', 'database call was cancelled'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void =>
      reject(new McphostError('ERR_CANCELLED', 'database call was cancelled'));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

type DriverError = Error & {
  code?: unknown;
  errno?: unknown;
  sqlState?: unknown;
  sqlMessage?: unknown;
};

/** ERR_DB_FAILED naming the database, with the driver's message and codes and never the password. */
function translateDatabaseError(
  error: unknown,
  type: Dialect,
  connection: DbConnection,
): McphostError {
  const scrub = (text: string): string => scrubPassword(text, connection.password);
  if (isMcphostError(error)) {
    if (error.code !== 'ERR_DB_FAILED') return error;
    return new McphostError(error.code, scrub(error.message), { details: error.details });
  }
  const driver = (error instanceof Error ? error : new Error(String(error))) as DriverError;
  const message = typeof driver.sqlMessage === 'string' ? driver.sqlMessage : driver.message;
  const codes: string[] = [];
  const details: Record<string, unknown> = {};
  if (type === 'pg' && typeof driver.code === 'string' && /^[0-9A-Z]{5}$/.test(driver.code)) {
    codes.push(`SQLSTATE ${driver.code}`);
    details.sqlState = driver.code;
  } else {
    if (typeof driver.errno === 'number' && type === 'mysql') {
      codes.push(`errno ${driver.errno}`);
      details.errno = driver.errno;
    }
    if (typeof driver.code === 'string') {
      codes.push(driver.code);
      details.driverCode = driver.code;
    }
    if (typeof driver.sqlState === 'string') {
      codes.push(`SQLSTATE ${driver.sqlState}`);
      details.sqlState = driver.sqlState;
    }
  }
  const product = type === 'pg' ? 'PostgreSQL' : 'MySQL';
  const where = `${connection.host}:${connection.port ?? (type === 'pg' ? 5432 : 3306)}/${connection.database}`;
  const text = `${product} ${where}: ${message || 'connection failed'}${codes.length > 0 ? ` (${codes.join(', ')})` : ''}`;
  return new McphostError('ERR_DB_FAILED', scrub(text), { details });
}

// Drivers sometimes echo connection strings; a password must never reach tool code or logs.
function scrubPassword(text: string, password: string | undefined): string {
  if (password === undefined || password.length < 3) return text;
  return text.split(password).join('***');
}
