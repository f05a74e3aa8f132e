/**
 * The `$n` lexer under the sql_mode flags that change MySQL's lexical rules,
 * and the per-connection runner that learns the session's mode from the
 * server. The session here is a stand-in that, like a server, applies
 * commands in the order they are sent; the real server is in
 * mysql-sql-mode-database.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { StatementResult } from '../../control-plane/broker/db/database-pool.js';
import { numberedStatementRunner } from '../../control-plane/broker/db/mysql-numbered-statements.js';
import {
  lexicalModeOf,
  lexingDependsOnMode,
  mayChangeSqlMode,
  translatePlaceholdersForMysql,
} from '../../control-plane/broker/db/mysql-placeholders.js';
import type { Statement } from '../../control-plane/broker/db/sql-statements.js';

const ansiQuotes = { ansiQuotes: true, noBackslashEscapes: false };
const noBackslashEscapes = { ansiQuotes: false, noBackslashEscapes: true };
const both = { ansiQuotes: true, noBackslashEscapes: true };

describe('lexicalModeOf', () => {
  it('finds the two flags in a @@sql_mode value, combination modes included', () => {
    expect(lexicalModeOf('STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION')).toEqual({
      ansiQuotes: false,
      noBackslashEscapes: false,
    });
    expect(lexicalModeOf('REAL_AS_FLOAT,PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,ANSI')).toEqual(
      ansiQuotes,
    );
    expect(lexicalModeOf('no_backslash_escapes')).toEqual(noBackslashEscapes);
    expect(lexicalModeOf('ANSI_QUOTES,NO_BACKSLASH_ESCAPES')).toEqual(both);
    expect(lexicalModeOf('')).toEqual({ ansiQuotes: false, noBackslashEscapes: false });
  });

  it('knows which statements may change the mode', () => {
    expect(mayChangeSqlMode("SET sql_mode = 'ANSI_QUOTES'")).toBe(true);
    expect(mayChangeSqlMode("SET @@SESSION.SQL_MODE = 'ANSI'")).toBe(true);
    expect(mayChangeSqlMode("/*!40101 SET SQL_MODE='' */")).toBe(true);
    expect(mayChangeSqlMode('SELECT $1')).toBe(false);
  });
});

describe('translatePlaceholdersForMysql under ANSI_QUOTES', () => {
  it.each([
    // A backslash does not escape inside a quoted identifier.
    ['SELECT 1 AS "a\\", $1 AS v', 'SELECT 1 AS "a\\", ? AS v'],
    ['SELECT "say ""$1""", $1 FROM t', 'SELECT "say ""$1""", ? FROM t'],
    ["SELECT 'it\\'s $1', $1", "SELECT 'it\\'s $1', ?"],
  ])('reads "…" as an identifier: %s', (sql, expected) => {
    expect(translatePlaceholdersForMysql(sql, ['v'], ansiQuotes).sql).toBe(expected);
  });

  it('differs from the default rules where a backslash ends an identifier', () => {
    // Under the default rules `"a\", $1 AS v` is one unterminated string.
    expect(translatePlaceholdersForMysql('SELECT 1 AS "a\\", $1 AS v', ['v']).sql).toBe(
      'SELECT 1 AS "a\\", $1 AS v',
    );
  });
});

describe('translatePlaceholdersForMysql under NO_BACKSLASH_ESCAPES', () => {
  it.each([
    ["SELECT 'C:\\' AS path, $1 AS v", "SELECT 'C:\\' AS path, ? AS v"],
    ['SELECT "C:\\" AS path, $1 AS v', 'SELECT "C:\\" AS path, ? AS v'],
    ["SELECT 'it''s $1', $1", "SELECT 'it''s $1', ?"],
    ['SELECT `a\\`, $1', 'SELECT `a\\`, ?'],
  ])('reads a backslash as an ordinary character: %s', (sql, expected) => {
    expect(translatePlaceholdersForMysql(sql, ['v'], noBackslashEscapes).sql).toBe(expected);
  });

  it('differs from the default rules where a string ends in a backslash', () => {
    expect(translatePlaceholdersForMysql("SELECT 'C:\\' AS path, $1 AS v", ['v']).sql).toBe(
      "SELECT 'C:\\' AS path, $1 AS v",
    );
  });

  it('combines with ANSI_QUOTES', () => {
    expect(
      translatePlaceholdersForMysql(`SELECT 'x\\' AS "y\\", $2, $1`, ['a', 'b'], both),
    ).toEqual({ sql: `SELECT 'x\\' AS "y\\", ?, ?`, values: ['b', 'a'] });
  });
});

/** A session that, like a server, applies `SET sql_mode` and answers reads in the order they are sent. */
function recordingSession(initialMode: string): {
  sent: string[];
  reads: () => number;
  run: (statement: Statement) => Promise<StatementResult>;
  readSqlMode: () => Promise<string>;
} {
  let mode = initialMode;
  const sent: string[] = [];
  let reads = 0;
  return {
    sent,
    reads: () => reads,
    run: (statement) => {
      sent.push(statement.sql);
      const set = /^SET sql_mode = '([^']*)'$/.exec(statement.sql);
      if (set !== null) mode = set[1] as string;
      return Promise.resolve({ rows: [], rowCount: 0 });
    },
    readSqlMode: () => {
      reads += 1;
      return Promise.resolve(mode);
    },
  };
}

describe('numberedStatementRunner', () => {
  const ansiStatement = { sql: 'SELECT 1 AS "a\\", $1 AS v', values: ['x'] };
  const translated = 'SELECT 1 AS "a\\", ? AS v';

  it('asks the server once, then again only after a statement that may change the mode', async () => {
    const session = recordingSession('ANSI_QUOTES');
    const run = numberedStatementRunner(session);
    await run(ansiStatement);
    await run(ansiStatement);
    expect(session.reads()).toBe(1);
    await run({ sql: "SET sql_mode = ''", values: [] });
    expect(session.reads()).toBe(1);
    await run(ansiStatement);
    expect(session.reads()).toBe(2);
    expect(session.sent).toEqual([translated, translated, "SET sql_mode = ''", ansiStatement.sql]);
  });

  it('does not ask for text that reads the same under every mode', async () => {
    const session = recordingSession('ANSI_QUOTES');
    const run = numberedStatementRunner(session);
    await run({ sql: "SELECT 'a' AS `b`, $1 -- c", values: ['x'] });
    expect(session.reads()).toBe(0);
    expect(session.sent).toEqual(["SELECT 'a' AS `b`, ? -- c"]);
    expect(lexingDependsOnMode('SELECT "a"')).toBe(true);
    expect(lexingDependsOnMode("SELECT 'a\\'")).toBe(true);
  });

  it('reads a statement sent right after SET sql_mode, without waiting, under the new mode', async () => {
    const session = recordingSession('');
    const run = numberedStatementRunner(session);
    await Promise.all([
      run({ sql: "SET sql_mode = 'ANSI_QUOTES'", values: [] }),
      run(ansiStatement),
    ]);
    expect(session.sent).toEqual(["SET sql_mode = 'ANSI_QUOTES'", translated]);
  });

  it('refuses a statement without sending it, and goes on with the next', async () => {
    const session = recordingSession('');
    const run = numberedStatementRunner(session);
    await expect(run({ sql: 'SELECT $2', values: ['a'] })).rejects.toMatchObject({
      code: 'ERR_INVALID_ARGUMENT',
      message: 'values: the query uses $2 but 1 value was given',
    });
    await run({ sql: 'SELECT $1', values: ['a'] });
    expect(session.sent).toEqual(['SELECT ?']);
  });
});
