import { describe, expect, it } from 'vitest';
import { buildInsert, buildSelect } from '../../control-plane/broker/db/sql-statements.js';

describe('sql statements', () => {
  it('builds equality filters with bound values and IS NULL', () => {
    expect(buildSelect('pg', 'public.users', { name: 'a', age: 3, gone: null })).toEqual({
      sql: 'select * from "public"."users" where "name" = $1 and "age" = $2 and "gone" is null',
      values: ['a', 3],
    });
    expect(buildSelect('mysql', 'users', {})).toEqual({ sql: 'select * from `users`', values: [] });
  });

  it('builds inserts per dialect', () => {
    expect(buildInsert('pg', 'users', { name: 'a', skip: undefined, meta: { x: 1 } })).toEqual({
      sql: 'insert into "users" ("name", "meta") values ($1, $2) returning *',
      values: ['a', { x: 1 }],
    });
    expect(buildInsert('mysql', 'users', { name: 'a' })).toEqual({
      sql: 'insert into `users` (`name`) values (?)',
      values: ['a'],
    });
    expect(buildInsert('pg', 'users', {}).sql).toBe(
      'insert into "users" default values returning *',
    );
    expect(buildInsert('mysql', 'users', { skip: undefined })).toEqual({
      sql: 'insert into `users` () values ()',
      values: [],
    });
  });

  it.each(['users; drop table x', 'a"b', 'a`b', '1users', 'a.b.c', '', 'users ', 'sch.'])(
    'refuses the table name %j with ERR_DB_IDENTIFIER',
    (name) => {
      expect(() => buildSelect('pg', name, {})).toThrow(
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
