import { describe, expect, it } from 'vitest';
import { translatePlaceholdersForMysql } from '../../control-plane/broker/db/mysql-placeholders.js';

describe('translatePlaceholdersForMysql', () => {
  it('rewrites $n in order and reorders and repeats values', () => {
    expect(
      translatePlaceholdersForMysql('SELECT * FROM t WHERE a = $2 AND (b = $1 OR c = $1)', [
        'x',
        'y',
      ]),
    ).toEqual({
      sql: 'SELECT * FROM t WHERE a = ? AND (b = ? OR c = ?)',
      values: ['y', 'x', 'x'],
    });
  });

  it('handles two-digit placeholders', () => {
    const values = Array.from({ length: 12 }, (_, index) => index + 1);
    expect(translatePlaceholdersForMysql('SELECT $12, $1, $10', values)).toEqual({
      sql: 'SELECT ?, ?, ?',
      values: [12, 1, 10],
    });
  });

  it.each([
    ["SELECT 'it''s $1', $1", "SELECT 'it''s $1', ?"],
    ["SELECT 'a\\'$1', $1", "SELECT 'a\\'$1', ?"],
    ["SELECT 'a\\\\', $1", "SELECT 'a\\\\', ?"],
    ['SELECT "say ""$1""", $1', 'SELECT "say ""$1""", ?'],
    [
      'SELECT `col$1`, `we``ird $1` FROM t WHERE x = $1',
      'SELECT `col$1`, `we``ird $1` FROM t WHERE x = ?',
    ],
    ['SELECT $1 -- $1 here\n, 2', 'SELECT ? -- $1 here\n, 2'],
    ['SELECT $1 # $1 here\n, 2', 'SELECT ? # $1 here\n, 2'],
    ['SELECT $1 /* $1 ? */ + 1', 'SELECT ? /* $1 ? */ + 1'],
    ['SELECT 5--$1', 'SELECT 5--?'],
    ['SELECT a$1 FROM t WHERE b = $1', 'SELECT a$1 FROM t WHERE b = ?'],
    ['SELECT /*!40000 $1 */ 1', 'SELECT /*!40000 ? */ 1'],
    ['SELECT /*! $1 */ 1', 'SELECT /*! ? */ 1'],
    ['SELECT $1 --\x7f $1 here\n, 2', 'SELECT ? --\x7f $1 here\n, 2'],
    ['SELECT $1 /*!99999 plain text */', 'SELECT ? /*!99999 plain text */'],
  ])('leaves literals, identifiers and comments alone: %s', (sql, expected) => {
    expect(translatePlaceholdersForMysql(sql, ['v']).sql).toBe(expected);
  });

  it.each([
    'SELECT /*!99999 $1 AS x, */ 2',
    'SELECT /*M! ? AS a, */ 1',
    'SELECT /*M!100500 $1 */ 1',
  ])('refuses a placeholder in a comment only some servers run: %s', (sql) => {
    expect(() => translatePlaceholdersForMysql(sql, ['v'])).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }),
    );
  });

  it('passes an unterminated literal through for the server to reject', () => {
    expect(translatePlaceholdersForMysql("SELECT $1, 'oops $1", ['v'])).toEqual({
      sql: "SELECT ?, 'oops $1",
      values: ['v'],
    });
  });

  it('names a placeholder without a value', () => {
    expect(() => translatePlaceholdersForMysql('SELECT $1, $3', ['a', 'b'])).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_ARGUMENT',
        message: 'values: the query uses $3 but 2 values were given',
      }),
    );
    expect(() => translatePlaceholdersForMysql('SELECT $0', ['a'])).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }),
    );
  });

  it('refuses bare ? placeholders, which the driver would bind', () => {
    expect(() => translatePlaceholdersForMysql('SELECT ?', ['a'])).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_ARGUMENT',
        message: 'sql: use $1, $2… placeholders, not ?',
      }),
    );
    expect(translatePlaceholdersForMysql("SELECT '?'", []).sql).toBe("SELECT '?'");
  });
});
