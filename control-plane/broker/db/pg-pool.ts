/**
 * PostgreSQL through node-postgres. int8 (bigint, count(*)) comes back as a
 * number when exact, `date` as its 'YYYY-MM-DD' text (a Date would shift it
 * by the server's time zone), statements are limited server-side by
 * statement_timeout and client-side a little later in case the server hangs.
 */
import pg from 'pg';
import type { DatabasePool, DatabasePoolLimits, PoolTarget } from './database-pool.js';
import { parseInt8Text } from './json-safe.js';

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
  return {
    async run(statement) {
      // Extended protocol always: one statement per call, even without values.
      const result = await pool.query({
        text: statement.sql,
        values: statement.values,
        queryMode: 'extended',
      } as pg.QueryConfig);
      return {
        rows: result.rows as Record<string, unknown>[],
        rowCount: result.rowCount ?? result.rows.length,
      };
    },
    openConnections: () => pool.totalCount,
    close: () => pool.end(),
  };
}
