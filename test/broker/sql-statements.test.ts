import { describe, expect, it } from 'vitest';
import {
  buildInsert,
  buildSelect,
  quoteTable,
} from '../../control-plane/broker/db/sql-statements.js';

describe('sql statements', () => {
  it('builds equality filters with bound values and IS NULL', () => {
    expect(buildSelect('pg', 'public.users', { name: 'a', age: 3, gone: null })).toEqual({
      sql: 'SELECT * FROM "public"."users" WHERE "name" = $1 AND "age" = $2 AND "gone" IS NULL',
      values: ['a', 3],
    });
    expect(buildSelect('mysql', 'users', {})).toEqual({ sql: 'SELECT * FROM `users`', values: [] });
  });

  it('builds inserts per dialect', () => {
    expect(buildInsert('pg', 'users', { name: 'a', skip: undefined, meta: { x: 1 } })).toEqual({
      sql: 'INSERT INTO "users" ("name", "meta") VALUES ($1, $2) RETURNING *',
      values: ['a', { x: 1 }],
    });
    expect(buildInsert('mysql', 'users', { name: 'a' })).toEqual({
      sql: 'INSERT INTO `users` (`name`) VALUES (?)',
      values: ['a'],
    });
    expect(buildInsert('pg', 'users', {}).sql).toBe(
      'INSERT INTO "users" DEFAULT VALUES RETURNING *',
    );
  });

  it.each(['users; drop table x', 'a"b', 'a`b', '1users', 'a.b.c', '', 'users ', 'sch.'])(
    'refuses the table name %j with ERR_DB_IDENTIFIER',
    (name) => {
      expect(() => quoteTable('pg', name)).toThrow(
        expect.objectContaining({
          code: 'ERR_DB_IDENTIFIER',
          message: expect.stringContaining(JSON.stringify(name)),
        }),
      );
    },
  );

  it('refuses injected column names and non-scalar filters', () => {
    expect(() => buildSelect('mysql', 'users', { 'id = 1 OR 1': 1 })).toThrow(
      expect.objectContaining({ code: 'ERR_DB_IDENTIFIER' }),
    );
    expect(() => buildInsert('pg', 'users', { 'name"); drop': 1 })).toThrow(
      expect.objectContaining({ code: 'ERR_DB_IDENTIFIER' }),
    );
    expect(() => buildSelect('pg', 'users', { tags: ['a'] })).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_ARGUMENT',
        message:
          'where.tags: must be a string, number, boolean or null (equality filter), not an array',
      }),
    );
  });
});
