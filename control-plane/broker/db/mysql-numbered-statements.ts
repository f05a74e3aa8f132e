/**
 * Runs tool SQL written with `$1…$n` on one MySQL connection, translated
 * under the sql_mode the session has when the statement reaches the server.
 *
 * The mode is the server's to say: the global default can differ between
 * servers and change at any time, and tool code may run `SET sql_mode` on the
 * connection it holds. So the mode is asked of the server (`@@SESSION.sql_mode`)
 * the first time it is needed after the connection is checked out (a checkout
 * follows a reset, which restores the global default), and asked again after
 * any statement that may have changed it. It is needed only for text with a
 * `"` or a `\`, so most statements cost no extra round trip (one is ~0.6 ms
 * on a local MariaDB). Statements are translated one at a time in the order
 * they are sent, so a statement sent right after a `SET sql_mode` (even
 * without waiting for it) is read under the new mode.
 */
import type { StatementResult } from './database-pool.js';
import {
  DEFAULT_LEXICAL_MODE,
  lexicalModeOf,
  lexingDependsOnMode,
  mayChangeSqlMode,
  translatePlaceholdersForMysql,
  type MysqlLexicalMode,
} from './mysql-placeholders.js';
import type { Statement } from './sql-statements.js';

/** What a numbered-statement runner needs from its connection. */
export interface MysqlSession {
  /** The session's current `@@SESSION.sql_mode`, read after every statement already sent. */
  readSqlMode(): Promise<string>;
  /** Sends a statement with `?` placeholders; must queue it before its promise's first await. */
  run(statement: Statement): Promise<StatementResult>;
}

/** A `run` for `$n` statements on one checked-out connection. */
export function numberedStatementRunner(
  session: MysqlSession,
): (statement: Statement) => Promise<StatementResult> {
  // Undefined until read, and again after a statement that may change it.
  let mode: MysqlLexicalMode | undefined;
  // Settles once the previous statement has been queued on the connection.
  let previousSent: Promise<unknown> = Promise.resolve();
  return async (statement) => {
    const queued = previousSent.then(async () => {
      const lexing = lexingDependsOnMode(statement.sql)
        ? (mode ??= lexicalModeOf(await session.readSqlMode()))
        : DEFAULT_LEXICAL_MODE;
      const translated = translatePlaceholdersForMysql(statement.sql, statement.values, lexing);
      if (mayChangeSqlMode(statement.sql)) mode = undefined;
      // Wrapped so that awaiting `queued` does not wait for the statement to finish.
      return { running: session.run(translated) };
    });
    previousSent = queued.catch(() => undefined);
    const { running } = await queued;
    return running;
  };
}
