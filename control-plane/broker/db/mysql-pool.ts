/**
 * MySQL / MariaDB through mysql2. BIGINT comes back as a number when exact
 * (else a string), DATETIME/TIMESTAMP are read as UTC, DATE stays
 * 'YYYY-MM-DD' text; statements are limited server-side; objects and arrays are bound as JSON text so that no
 * driver-specific expansion (`a = 1, b = 2`, `1, 2, 3`) happens behind the
 * tool's back.
 */
import mysql from 'mysql2/promise';
import type {
  DatabasePool,
  DatabasePoolLimits,
  PoolTarget,
  PooledConnection,
  StatementResult,
} from './database-pool.js';
import { numberedStatementRunner } from './mysql-numbered-statements.js';
import type { Statement } from './sql-statements.js';

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
    // Never offer LOAD DATA LOCAL INFILE: the server then refuses it at once
    // (without the flag, a prepared LOAD DATA LOCAL hangs the connection until
    // the statement backstop), and no file of the control plane is ever read.
    flags: ['-LOCAL_FILES'],
  });
  pool.on('connection', (connection) => {
    // Idle connections the server closes are replaced by the pool; never crash on them.
    connection.on('error', () => undefined);
    // Commands run in order, so these precede any query.
    const core = connection as unknown as { query(sql: string, callback: () => void): void };
    for (const sql of sessionSettings(limits)) core.query(sql, () => undefined);
  });
  const killQuery = queryKiller(target, limits);
  return {
    async acquire() {
      const connection = await pool.getConnection();
      return pooledConnection(connection, target.database, limits, () =>
        killQuery(connection.threadId),
      );
    },
    openConnections: () => countOpenConnections(pool),
    close: () => pool.end(),
  };
}

/**
 * Our session settings, applied on connect and again after every reset. Server-side
 * statement limit, so a timed-out statement stops running too: MariaDB knows
 * max_statement_time (seconds), MySQL max_execution_time (ms, SELECT only); each
 * server rejects the other's variable, so failures are ignored. Dates travel as
 * UTC both ways (the driver's timezone 'Z' only covers the client side).
 */
function sessionSettings(limits: DatabasePoolLimits): string[] {
  return [
    `SET SESSION max_statement_time = ${limits.statementTimeoutMs / 1000}`,
    `SET SESSION max_execution_time = ${limits.statementTimeoutMs}`,
    `SET SESSION time_zone = '+00:00'`,
  ];
}

/**
 * `KILL QUERY <thread>` for the pool's connections, each on a short-lived
 * connection of its own with the pool's credentials (a user may stop its own
 * threads; the pool's connections may all be busy). One at a time per pool,
 * so a flood of ended invocations opens at most one extra connection to the
 * database. The returned function never rejects.
 */
function queryKiller(
  target: PoolTarget,
  limits: DatabasePoolLimits,
): (threadId: number) => Promise<void> {
  let previous = Promise.resolve();
  const kill = async (threadId: number): Promise<void> => {
    if (!Number.isSafeInteger(threadId) || threadId <= 0) return;
    let control: mysql.Connection | undefined;
    try {
      control = await mysql.createConnection({
        host: target.address,
        port: target.port ?? 3306,
        user: target.user,
        password: target.password ?? '',
        connectTimeout: limits.connectTimeoutMs,
        flags: ['-LOCAL_FILES'],
      });
      // A socket error once done must not crash the process.
      control.on('error', () => undefined);
      await control.query({ sql: `KILL QUERY ${threadId}`, timeout: limits.connectTimeoutMs });
    } catch {
      // The statement may have ended already (unknown thread), or the database is gone:
      // either way the caller closes the connection if it still does not answer.
    } finally {
      // KILL has done its work once answered; a polite QUIT would only wait on the server.
      control?.destroy();
    }
  };
  return (threadId) => {
    const next = previous.then(() => kill(threadId));
    previous = next;
    return next;
  };
}

function pooledConnection(
  connection: mysql.PoolConnection,
  database: string,
  limits: DatabasePoolLimits,
  cancelStatement: () => Promise<void>,
): PooledConnection {
  let returned = false;
  const giveBack = (destroy: boolean): void => {
    if (returned) return;
    returned = true;
    if (destroy) connection.destroy();
    else connection.release();
  };
  const run = async (statement: Statement): Promise<StatementResult> => {
    const values = statement.values.map(bindableValue);
    // execute(): a server-side prepared statement, so values are truly bound.
    // query() would splice them into the SQL text escaped with backslashes, which
    // a server in NO_BACKSLASH_ESCAPES mode reads as quotes: an injection.
    // The client-side timeout is a backstop for a server that stops answering.
    const [result] = await connection.execute({
      sql: statement.sql,
      values,
      timeout: limits.statementTimeoutMs + 5_000,
    });
    if (Array.isArray(result)) {
      return { rows: result as Record<string, unknown>[], rowCount: result.length };
    }
    const header = result as mysql.ResultSetHeader;
    return { rows: [], rowCount: header.affectedRows, insertId: header.insertId };
  };
  return {
    run,
    runWithNumberedPlaceholders: numberedStatementRunner({
      run,
      async readSqlMode() {
        const [rows] = await connection.query('SELECT @@SESSION.sql_mode AS mode');
        return String((rows as { mode?: unknown }[])[0]?.mode ?? '');
      },
    }),
    async release() {
      try {
        // COM_RESET_CONNECTION: rolls back, drops temporary tables, releases locks,
        // clears user variables and prepared statements (mysql2 forgets its cache
        // too) and returns every session variable to the server default, so ours
        // are applied again. A server without it (MySQL < 5.7.3) fails here, and the
        // connection is then closed rather than reused.
        await connection.reset();
        // The reset keeps the current database, which MariaDB lets a prepared `USE` change.
        await connection.query(`USE \`${database.replaceAll('`', '``')}\``);
        const [timeout, executionTime, timeZone] = sessionSettings(limits);
        await connection.query(timeout!).catch(() => undefined);
        await connection.query(executionTime!).catch(() => undefined);
        await connection.query(timeZone!);
        giveBack(false);
      } catch {
        giveBack(true);
      }
    },
    destroy() {
      giveBack(true);
    },
    cancelStatement,
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
