/**
 * The seam between the db operations and a driver: a pool of connections to
 * one database (one set of connection parameters, of one server) that hands
 * out whole connections. An invocation holds one connection per database for
 * its whole run, so a transaction spans calls; the connection is reset before
 * anyone else gets it.
 */
import type { Statement } from './sql-statements.js';

/** What running a statement yields, before values are made JSON-safe. */
export interface StatementResult {
  rows: Record<string, unknown>[];
  /** Rows changed by INSERT/UPDATE/DELETE, or rows returned. */
  rowCount: number;
  /** MySQL's AUTO_INCREMENT value of an INSERT; 0 when none. */
  insertId?: number | string;
}

/** Runs bound statements on one connection; statements of one connection run in the order given. */
export interface StatementRunner {
  /** Runs one statement written with the driver's own placeholders (`$n` on PostgreSQL, `?` on MySQL). */
  run(statement: Statement): Promise<StatementResult>;
  /**
   * Runs one statement of tool code, written with `$1…$n` for both databases:
   * as it is on PostgreSQL, translated to `?` on MySQL under the session's sql_mode.
   */
  runWithNumberedPlaceholders(statement: Statement): Promise<StatementResult>;
}

/** One connection taken out of a pool; exactly one of `release`/`destroy` ends it. */
export interface PooledConnection extends StatementRunner {
  /**
   * Rolls back any open transaction, resets the session (temporary tables,
   * settings, locks, prepared statements) and returns the connection to the
   * pool; a connection that fails to reset is destroyed instead. Never throws.
   */
  release(): Promise<void>;
  /** Closes the connection without returning it (a reset hung or cannot be trusted). */
  destroy(): void;
  /**
   * Asks the database, over a connection of its own, to stop the statement
   * this connection runs now (PostgreSQL: a CancelRequest; MySQL: KILL QUERY).
   * Resolves once asked, within the connect timeout; never rejects. With no
   * statement running it does nothing — or stops the next one, whose failure
   * then makes `release` close the connection rather than pool it.
   */
  cancelStatement(): Promise<void>;
}

/** A connection pool for one database. */
export interface DatabasePool {
  /** Takes a connection, opening one when none is idle and the pool is below its limit. */
  acquire(): Promise<PooledConnection>;
  /** Connections currently open (busy or idle), for tests and metrics. */
  openConnections(): number;
  /** Closes every connection; the pool is unusable afterwards. */
  close(): Promise<void>;
}

/** Why no connection came: every one is held by invocations of the same server, which keep theirs until they end. */
export function allConnectionsHeldMessage(maxConnections: number, waitedMs: number): string {
  return `no connection free within ${waitedMs} ms: all ${maxConnections} connections to this database are held by running invocations of this server; try again shortly`;
}

/** Pool sizing and timeouts shared by both drivers. */
export interface DatabasePoolLimits {
  /** Connections per pool. */
  maxConnections: number;
  /** Idle connections close after this many milliseconds. */
  idleMs: number;
  /** Connect (TCP + authentication) limit, in milliseconds. */
  connectTimeoutMs: number;
  /** Statement limit, in milliseconds. */
  statementTimeoutMs: number;
}

/** Where a pool connects: the checked address, with the name the tool gave for TLS/diagnostics. */
export interface PoolTarget {
  /** Address the egress policy approved; the driver dials this, never the name. */
  address: string;
  host: string;
  port: number | undefined;
  database: string;
  user: string;
  password: string | undefined;
}
