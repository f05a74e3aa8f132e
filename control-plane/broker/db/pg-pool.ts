/**
 * PostgreSQL through node-postgres. int8 (bigint, count(*)) comes back as a
 * number when exact, `date` as its 'YYYY-MM-DD' text (a Date would shift it
 * by the server's time zone), statements are limited server-side by
 * statement_timeout and client-side a little later in case the server hangs.
 */
import pg from 'pg';
import {
  allConnectionsHeldMessage,
  type DatabasePool,
  type DatabasePoolLimits,
  type PoolTarget,
  type PooledConnection,
  type StatementResult,
} from './database-pool.js';
import { parseInt8Text } from './json-safe.js';
import { backendKeyOf, sendPgCancelRequest } from './pg-cancel.js';
import type { Statement } from './sql-statements.js';

const INT8_OID = 20;
const DATE_OID = 1082;
const TIMESTAMP_OID = 1114;

const typeParsers = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): (text: string) => unknown {
    if (oid === INT8_OID) return parseInt8Text;
    if (oid === DATE_OID) return (text: string) => text;
    // timestamp without time zone: read as UTC, not in the control plane's own zone.
    if (oid === TIMESTAMP_OID) return (text: string) => new Date(`${text.replace(' ', 'T')}Z`);
    return pg.types.getTypeParser(oid, format ?? 'text') as (text: string) => unknown;
  },
};

/** A node-postgres Pool for one database. */
export function createPgPool(target: PoolTarget, limits: DatabasePoolLimits): DatabasePool {
  const pool = new pg.Pool({
    host: target.address,
    port: target.port ?? 5432,
    database: target.database,
    user: target.user,
    password: target.password ?? '',
    max: limits.maxConnections,
    idleTimeoutMillis: limits.idleMs,
    connectionTimeoutMillis: limits.connectTimeoutMs,
    statement_timeout: limits.statementTimeoutMs,
    query_timeout: limits.statementTimeoutMs + 5_000,
    application_name: 'mcphost-broker',
    types: typeParsers,
    allowExitOnIdle: true,
  });
  // An idle connection dropped by the server must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  // Sent to the address the pool dials, which the egress policy approved.
  const cancelStatementOf = async (client: pg.PoolClient): Promise<void> => {
    const key = backendKeyOf(client);
    if (key === undefined) return;
    const backend = { address: target.address, port: target.port ?? 5432, ...key };
    await sendPgCancelRequest(backend, limits.connectTimeoutMs);
  };
  return {
    async acquire() {
      try {
        const client = await pool.connect();
        return pooledConnection(client, () => cancelStatementOf(client));
      } catch (error) {
        // pg's wait for a free client ends with "timeout exceeded when trying to connect".
        if (pool.totalCount < limits.maxConnections) throw error;
        throw new Error(allConnectionsHeldMessage(limits.maxConnections, limits.connectTimeoutMs));
      }
    },
    openConnections: () => pool.totalCount,
    close: () => pool.end(),
  };
}

function pooledConnection(
  client: pg.PoolClient,
  cancelStatement: () => Promise<void>,
): PooledConnection {
  let returned = false;
  // pg removes its own listener while a client is checked out, and an invocation
  // holds one for its whole run: a server-side disconnect must not crash us.
  let broken: Error | undefined;
  const onError = (error: Error): void => {
    broken = error;
  };
  client.on('error', onError);
  // Exactly once: pg throws when a client is released twice.
  const giveBack = (error?: Error): void => {
    if (returned) return;
    returned = true;
    client.removeListener('error', onError);
    // A destroyed client may still report its socket closing.
    if (error !== undefined) client.on('error', () => undefined);
    client.release(error);
  };
  const run = async (statement: Statement): Promise<StatementResult> => {
    if (broken !== undefined) throw broken;
    let result: pg.QueryResult;
    try {
      // Extended protocol always: one statement per call, even without values.
      result = await client.query({
        text: statement.sql,
        values: statement.values,
        queryMode: 'extended',
      } as pg.QueryConfig);
    } catch (error) {
      // node-postgres answers COPY … FROM STDIN with CopyFail; in the extended
      // protocol the server then waits for a Sync that never comes, and every
      // later statement on the connection would hang. Close it instead.
      if (error instanceof Error && error.message.includes('No source stream defined')) {
        broken = new Error(
          'COPY … FROM STDIN is not supported by sdk.db (use insert, or INSERT … VALUES); the connection was closed',
        );
        throw broken;
      }
      throw error;
    }
    return {
      rows: result.rows as Record<string, unknown>[],
      rowCount: result.rowCount ?? result.rows.length,
    };
  };
  return {
    run,
    // `$n` is PostgreSQL's own placeholder syntax.
    runWithNumberedPlaceholders: run,
    async release() {
      if (broken !== undefined) return giveBack(broken);
      try {
        // DISCARD ALL refuses to run inside a transaction block: roll back first
        // (outside one, ROLLBACK only warns). DISCARD ALL drops temporary tables,
        // prepared statements, advisory locks, LISTENs and every SET, back to the
        // values of the connection's start (statement_timeout stays ours).
        await client.query('ROLLBACK');
        await client.query('DISCARD ALL');
        giveBack();
      } catch (error) {
        // Passing an error makes pg close the connection instead of pooling it.
        giveBack(error instanceof Error ? error : new Error('session reset failed'));
      }
    },
    destroy() {
      giveBack(new Error('connection destroyed'));
    },
    cancelStatement,
  };
}
