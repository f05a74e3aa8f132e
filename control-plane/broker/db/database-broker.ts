/**
 * sdk.db on the control-plane side: select / insert / query against
 * PostgreSQL or MySQL through bounded pools of each server, on one connection
 * per database held for the whole invocation (InvocationConnections). The database host is
 * resolved and checked against the calling server's egress policy on every
 * call, and the pool (keyed by the checked address) dials that address.
 * Database failures become ERR_DB_FAILED carrying the database's own message
 * and code, with the password scrubbed.
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
import type {
  DatabasePool,
  DatabasePoolLimits,
  StatementResult,
  StatementRunner,
} from './database-pool.js';
import { InvocationConnections, type DatabaseCaller } from './invocation-connections.js';
import { toJsonSafe } from './json-safe.js';
import { createMysqlPool } from './mysql-pool.js';
import { createPgPool } from './pg-pool.js';
import { PoolRegistry } from './pool-registry.js';
import { buildInsert, buildSelect, type Dialect } from './sql-statements.js';

/** Limits of the database side of the broker. */
export interface DatabaseLimits {
  /** Connections per server and set of connection parameters. */
  maxConnectionsPerKey: number;
  /** Connections across all databases; bounds the number of pools (a server may hold half of them, rounded up). */
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
  private readonly connections: InvocationConnections;

  constructor(
    private readonly lookup: HostLookup,
    private readonly limits: DatabaseLimits,
  ) {
    const maxPools = Math.max(
      1,
      Math.floor(limits.maxConnectionsTotal / limits.maxConnectionsPerKey),
    );
    this.registry = new PoolRegistry({
      maxPools,
      // Fair share: no server may hold more than half of the connection budget,
      // so one busy tenant always leaves room for the others.
      maxPoolsPerServer: Math.ceil(maxPools / 2),
      idleMs: limits.idleMs,
      open: (type, connection) => this.openPool(type, connection),
    });
    this.connections = new InvocationConnections({
      registry: this.registry,
      maxConnectionsPerPool: limits.maxConnectionsPerKey,
      // Past the drivers' own connect timeout, so a silent server is reported as such.
      acquireTimeoutMs: limits.connectTimeoutMs + 1_000,
      // A statement still running when its invocation ends is cancelled: stopping
      // takes the database a round trip, so it gets as long as a connect does.
      drainTimeoutMs: limits.connectTimeoutMs,
    });
  }

  /** Rows of `table` equal to every field of `where` (empty → all rows). */
  async select(
    args: DbSelectArgs,
    caller: DatabaseCaller,
    egress: EgressPolicy,
  ): Promise<JsonRow[]> {
    const statement = buildSelect(args.type, args.table, args.where);
    const result = await this.run(args.type, args.connection, caller, egress, (session) =>
      session.run(statement),
    );
    return result.rows.map((row) => toJsonSafe(row) as JsonRow);
  }

  /** Inserts `row` into `table` and returns the created row as the database stored it. */
  async insert(args: DbInsertArgs, caller: DatabaseCaller, egress: EgressPolicy): Promise<JsonRow> {
    const statement = buildInsert(args.type, args.table, args.row);
    const created = await this.run(args.type, args.connection, caller, egress, async (session) => {
      const result = await session.run(statement);
      if (args.type === 'pg') return result.rows[0];
      return (await this.readBackMysqlInsert(session, args, result)) ?? args.row;
    });
    return toJsonSafe(created ?? {}) as JsonRow;
  }

  /** Runs `sql` with `$1…$n` placeholders bound to `values` (translated to `?` on MySQL's connection). */
  async query(
    args: DbQueryArgs,
    caller: DatabaseCaller,
    egress: EgressPolicy,
  ): Promise<{ rows: JsonRow[]; rowCount: number }> {
    const statement = { sql: args.sql, values: args.values };
    const result = await this.run(args.type, args.connection, caller, egress, (session) =>
      session.runWithNumberedPlaceholders(statement),
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

  /** Gives back the invocation's connections: statements still running cancelled, then rolled back and reset; never rejects. */
  endInvocation(invocation: string): Promise<void> {
    return this.connections.end(invocation);
  }

  /** Gives back every held connection, then closes every pool. */
  async close(): Promise<void> {
    await this.connections.endAll();
    await this.registry.close();
  }

  private async run<T>(
    type: Dialect,
    connection: DbConnection,
    caller: DatabaseCaller,
    egress: EgressPolicy,
    work: (session: StatementRunner) => Promise<T>,
  ): Promise<T> {
    try {
      // Checked on every call with the calling server's policy (a pool opened for
      // one server must not carry another past its own policy); the pool is
      // keyed by, and dials, the checked address.
      const ip = await resolveCheckedAddress(connection.host, {
        policy: egress,
        lookup: this.lookup,
        port: connection.port ?? (type === 'pg' ? 5432 : 3306),
        timeoutMs: this.limits.connectTimeoutMs,
        timeoutCode: 'ERR_DB_FAILED',
        failureCode: 'ERR_DB_FAILED',
        purpose: 'database connection',
      });
      const checked = { ...connection, host: ip.address };
      // The invocation's own connection to this (server, checked address, credentials).
      return await this.connections.run(caller, type, checked, work);
    } catch (error) {
      throw translateDatabaseError(error, type, connection);
    }
  }

  private async openPool(type: Dialect, connection: DbConnection): Promise<DatabasePool> {
    const poolLimits: DatabasePoolLimits = {
      maxConnections: this.limits.maxConnectionsPerKey,
      idleMs: this.limits.idleMs,
      connectTimeoutMs: this.limits.connectTimeoutMs,
      statementTimeoutMs: this.limits.statementTimeoutMs,
    };
    const target = {
      ...connection,
      address: connection.host, // the address run() checked
      port: connection.port,
      password: connection.password,
    };
    return type === 'pg' ? createPgPool(target, poolLimits) : createMysqlPool(target, poolLimits);
  }

  /** MySQL has no RETURNING: read the row back by its AUTO_INCREMENT column. */
  private async readBackMysqlInsert(
    session: StatementRunner,
    args: DbInsertArgs,
    result: StatementResult,
  ): Promise<Record<string, unknown> | undefined> {
    if (result.insertId === undefined || result.insertId === 0) return undefined;
    const [schema, table] = args.table.includes('.')
      ? args.table.split('.')
      : [undefined, args.table];
    const columns = await session.run({
      sql:
        'SELECT COLUMN_NAME AS name FROM information_schema.COLUMNS ' +
        "WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ? AND EXTRA LIKE '%auto_increment%'",
      values: [schema ?? null, table],
    });
    const column = columns.rows[0]?.name;
    if (typeof column !== 'string') return { ...args.row };
    const readBack = await session.run(
      buildSelect('mysql', args.table, { [column]: result.insertId }),
    );
    return readBack.rows[0] ?? { ...args.row, [column]: result.insertId };
  }
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
