/**
 * The seam between the db operations and a driver: a pool of connections to
 * one database (one set of connection parameters) that runs bound statements.
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

/** A connection pool for one database. */
export interface DatabasePool {
  /** Runs one statement on a pooled connection. */
  run(statement: Statement): Promise<StatementResult>;
  /** Connections currently open (busy or idle), for tests and metrics. */
  openConnections(): number;
  /** Closes every connection; the pool is unusable afterwards. */
  close(): Promise<void>;
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
