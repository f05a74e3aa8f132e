/**
 * MySQL / MariaDB through mysql2. BIGINT comes back as a number when exact
 * (else a string), DATETIME/TIMESTAMP are read as UTC, DATE stays
 * 'YYYY-MM-DD' text; statements are limited server-side; objects and arrays are bound as JSON text so that no
 * driver-specific expansion (`a = 1, b = 2`, `1, 2, 3`) happens behind the
 * tool's back.
 */
import mysql from 'mysql2/promise';
import type { DatabasePool, DatabasePoolLimits, PoolTarget } from './database-pool.js';

/** A mysql2 pool for one database. */
export function createMysqlPool(target: PoolTarget, limits: DatabasePoolLimits): DatabasePool {
  const pool = mysql.createPool({
    host: target.address,
    port: target.port ?? 3306,
    database: target.database,
    user: target.user,
    password: target.password ?? '',
    connectionLimit: limits.maxConnections,
    maxIdle: limits.maxConnections,
    idleTimeout: limits.idleMs,
    connectTimeout: limits.connectTimeoutMs,
    waitForConnections: true,
    queueLimit: 0,
    supportBigNumbers: true,
    bigNumberStrings: false,
    dateStrings: ['DATE'],
    timezone: 'Z',
    multipleStatements: false,
  });
  pool.on('connection', (connection) => {
    // Idle connections the server closes are replaced by the pool; never crash on them.
    connection.on('error', () => undefined);
    // Server-side statement limit, so a timed-out statement stops running too: MariaDB
    // knows max_statement_time (seconds), MySQL max_execution_time (ms, SELECT only).
    // Each server rejects the other's variable; commands run in order, so these precede any query.
    const core = connection as unknown as { query(sql: string, callback: () => void): void };
    core.query(
      `SET SESSION max_statement_time = ${limits.statementTimeoutMs / 1000}`,
      () => undefined,
    );
    core.query(`SET SESSION max_execution_time = ${limits.statementTimeoutMs}`, () => undefined);
    // Dates travel as UTC both ways (the driver's timezone 'Z' only covers the client side).
    core.query(`SET SESSION time_zone = '+00:00'`, () => undefined);
  });
  return {
    async run(statement) {
      const values = statement.values.map(bindableValue);
      // execute(): a server-side prepared statement, so values are truly bound.
      // query() would splice them into the SQL text escaped with backslashes, which
      // a server in NO_BACKSLASH_ESCAPES mode reads as quotes: an injection.
      // The client-side timeout is a backstop for a server that stops answering.
      const [result] = await pool.execute({
        sql: statement.sql,
        values,
        timeout: limits.statementTimeoutMs + 5_000,
      });
      if (Array.isArray(result)) {
        return { rows: result as Record<string, unknown>[], rowCount: result.length };
      }
      const header = result as mysql.ResultSetHeader;
      return { rows: [], rowCount: header.affectedRows, insertId: header.insertId };
    },
    openConnections: () => countOpenConnections(pool),
    close: () => pool.end(),
  };
}

function bindableValue(value: unknown): unknown {
  if (value !== null && typeof value === 'object') return JSON.stringify(value);
  return value;
}

// mysql2 exposes no public counter; its pool keeps every connection in `_allConnections`.
function countOpenConnections(pool: mysql.Pool): number {
  const inner = (pool as unknown as { pool?: { _allConnections?: { length: number } } }).pool;
  return inner?._allConnections?.length ?? 0;
}
