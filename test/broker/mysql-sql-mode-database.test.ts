/**
 * sdk.db on the real MariaDB after tool code changes the session's sql_mode:
 * `$n` placeholders are found under the mode the session has, statements
 * built by db.select/db.insert still run, and the next invocation starts
 * from the server's default again. Each `$n` statement here is one that a
 * lexer reading the default rules gets wrong.
 */
import { lookup } from 'node:dns/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokerLimitsFrom } from '../../control-plane/app/component-settings.js';
import { Broker, EgressPolicy } from '../../control-plane/broker/index.js';
import type { BrokerCallContext } from '../../control-plane/broker/broker.js';
import { defaultConfig } from '../../control-plane/config.js';
import type { BrokerOperation } from '../../src/protocol/index.js';
import { openTestDatabase, uniqueTableName, type TestDatabase } from './database-targets.js';
import { context } from './call-helpers.js';

describe('sdk.db on mysql under the session sql_mode', () => {
  let database: TestDatabase;
  let broker: Broker;
  // An address, not a name: with no lookup in between, the calls of one
  // invocation reach its connection in the order they are made.
  let address: string;
  const table = uniqueTableName('sql_mode');
  /** An invocation: its calls share one context (and so one connection); `end()` ends it. */
  const invocation = () => {
    const call: BrokerCallContext = context();
    const target = { type: 'mysql', connection: { ...database.connection, host: address } };
    return {
      call: (op: BrokerOperation, args: object) => broker.handle(op, { ...target, ...args }, call),
      query: async (sql: string, values: unknown[] = []) =>
        (
          (await broker.handle('db.query', { ...target, sql, values }, call)) as {
            rows: Record<string, unknown>[];
          }
        ).rows,
      end: () => broker.endInvocation(call.invocation),
    };
  };

  beforeAll(async () => {
    database = await openTestDatabase('mysql');
    address = (await lookup(database.connection.host)).address;
    await database.admin(
      `CREATE TABLE \`${table}\` (id int AUTO_INCREMENT PRIMARY KEY, note varchar(100))`,
    );
    // One connection: every invocation gets the connection the previous one used.
    const limits = brokerLimitsFrom(defaultConfig());
    broker = new Broker({
      ...limits,
      egress: EgressPolicy.fromAllowList(['127.0.0.0/8']),
      db: { ...limits.db, maxConnectionsPerKey: 1 },
    });
  });

  afterAll(async () => {
    await broker?.close();
    await database?.admin(`DROP TABLE IF EXISTS \`${table}\``);
    await database?.end();
  });

  it('reads "…" as an identifier under ANSI_QUOTES', async () => {
    const session = invocation();
    try {
      await session.query("SET sql_mode = 'ANSI_QUOTES'");
      // The alias is the identifier a\ : the $1 after it is a placeholder.
      expect(await session.query('SELECT 1 AS "a\\", $1 AS v', ['x'])).toEqual([
        { 'a\\': 1, v: 'x' },
      ]);
    } finally {
      await session.end();
    }
  });

  it('reads a backslash as an ordinary character under NO_BACKSLASH_ESCAPES', async () => {
    const session = invocation();
    try {
      await session.query("SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES'");
      expect(await session.query("SELECT 'C:\\' AS path, $1 AS v", ['x'])).toEqual([
        { path: 'C:\\', v: 'x' },
      ]);
    } finally {
      await session.end();
    }
  });

  it('lexes a statement sent without waiting for the SET before it under the new mode', async () => {
    const session = invocation();
    try {
      const [, rows] = await Promise.all([
        session.query("SET @@SESSION.sql_mode = 'ANSI_QUOTES,NO_BACKSLASH_ESCAPES'"),
        session.query(`SELECT 'C:\\' AS "p\\", $2 AS v, $1 AS w`, ['a', 'b']),
      ]);
      expect(rows).toEqual([{ 'p\\': 'C:\\', v: 'b', w: 'a' }]);
    } finally {
      await session.end();
    }
  });

  it('builds select and insert that run under both modes', async () => {
    const session = invocation();
    try {
      await session.query("SET sql_mode = 'ANSI_QUOTES,NO_BACKSLASH_ESCAPES'");
      const note = `it's "C:\\"`;
      const created = await session.call('db.insert', { table, row: { note } });
      expect(created).toEqual({ id: expect.any(Number), note });
      expect(await session.call('db.select', { table, where: { note } })).toEqual([created]);
    } finally {
      await session.end();
    }
  });

  it('starts the next invocation from the default mode', async () => {
    const changing = invocation();
    try {
      await changing.query("SET sql_mode = 'ANSI_QUOTES'");
    } finally {
      await changing.end();
    }
    const next = invocation();
    try {
      // Under the default rules this is one string, and $1 inside it is text.
      expect(await next.query('SELECT "a\\" AS q, $1 AS v" AS s', ['x'])).toEqual([
        { s: 'a" AS q, $1 AS v' },
      ]);
    } finally {
      await next.end();
    }
  });
});
