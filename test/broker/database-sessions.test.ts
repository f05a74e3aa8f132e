/**
 * sdk.db connections belong to one invocation of one server: a handle keeps
 * one connection for the whole invocation (transactions span calls), no
 * connection is shared between servers, and a connection is rolled back and
 * reset before the next invocation gets it. Against the real PostgreSQL and
 * MariaDB.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Broker, EgressPolicy } from '../../control-plane/broker/index.js';
import { brokerWithDefaults } from './broker-with-defaults.js';
import type { BrokerCallContext } from '../../control-plane/broker/broker.js';
import type { BrokerOperation } from '../../src/protocol/index.js';
import {
  openTestDatabase,
  uniqueTableName,
  type DatabaseType,
  type TestDatabase,
} from './database-targets.js';
import { context, failure } from './call-helpers.js';

const ddl = {
  pg: (table: string) => `CREATE TABLE "${table}" (id serial PRIMARY KEY, name text NOT NULL)`,
  mysql: (table: string) =>
    `CREATE TABLE \`${table}\` (id int AUTO_INCREMENT PRIMARY KEY, name varchar(100) NOT NULL) ENGINE=InnoDB`,
};

describe.each<DatabaseType>(['pg', 'mysql'])('sdk.db sessions on %s', (type) => {
  let database: TestDatabase;
  let broker: Broker;
  const table = uniqueTableName(`sessions_${type}`);
  const quoted = type === 'pg' ? `"${table}"` : `\`${table}\``;
  const target = () => ({ type, connection: database.connection });
  /** An invocation of `server`: its calls share one context, `end()` ends it. */
  const invocation = (server: string) => {
    const call: BrokerCallContext = context({ server });
    return {
      call: (op: BrokerOperation, args: object) =>
        broker.handle(op, { ...target(), ...args }, call),
      query: async (sql: string, values: unknown[] = []) =>
        (
          (await broker.handle('db.query', { ...target(), sql, values }, call)) as {
            rows: Record<string, unknown>[];
          }
        ).rows,
      end: () => broker.endInvocation(call.invocation),
    };
  };
  /** Whether the database is running `sql` (a constant without quotes) now, on any connection. */
  const statementRunning = async (sql: string): Promise<boolean> => {
    const rows = (await database.admin(
      type === 'pg'
        ? `SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query = '${sql}'`
        : `SELECT count(*) AS n FROM information_schema.processlist WHERE info = '${sql}'`,
    )) as { n: number | string }[];
    return Number(rows[0]?.n) > 0;
  };
  const names = async (): Promise<string[]> =>
    ((await database.admin(`SELECT name FROM ${quoted} ORDER BY id`)) as { name: string }[]).map(
      (row) => row.name,
    );

  beforeAll(async () => {
    database = await openTestDatabase(type);
    await database.admin(ddl[type](table));
    broker = brokerWithDefaults({ egress: EgressPolicy.fromAllowList(['127.0.0.0/8']) });
  });

  afterAll(async () => {
    await broker?.close();
    await database?.admin(`DROP TABLE IF EXISTS ${quoted}`);
    await database?.end();
  });

  it("never shows one server's temporary table to another server or to the next invocation", async () => {
    const items = uniqueTableName('items');
    const a = invocation('server-a');
    await a.query(`CREATE TEMPORARY TABLE ${items} (id int, name varchar(20))`);
    await a.call('db.insert', { table: items, row: { id: 1, name: 'secret of a' } });
    expect(await a.call('db.select', { table: items, where: {} })).toEqual([
      { id: 1, name: 'secret of a' },
    ]);
    // While A's invocation runs, and after it ended: B has no such table.
    const b = invocation('server-b');
    expect(await failure(b.call('db.select', { table: items, where: {} }))).toMatchObject({
      code: 'ERR_DB_FAILED',
      message: expect.stringContaining(items),
    });
    await b.end();
    await a.end();
    for (const server of ['server-b', 'server-a']) {
      const next = invocation(server);
      expect(await failure(next.call('db.select', { table: items, where: {} }))).toMatchObject({
        code: 'ERR_DB_FAILED',
      });
      await next.end();
    }
  });

  it("keeps another server's insert when a transaction is rolled back, and rolls back only its own work", async () => {
    await database.admin(`DELETE FROM ${quoted}`);
    const a = invocation('server-a');
    await a.query('BEGIN');
    await a.call('db.insert', { table, row: { name: 'a-uncommitted' } });
    const b = invocation('server-b');
    const inserted = (await b.call('db.insert', { table, row: { name: 'b-row' } })) as {
      id: number;
    };
    expect(inserted.id).toEqual(expect.any(Number));
    await b.end();
    await a.query('ROLLBACK');
    await a.end();
    expect(await names()).toEqual(['b-row']);
  });

  it('rolls back an invocation that ends between BEGIN and COMMIT, and the connection is clean for the next one', async () => {
    await database.admin(`DELETE FROM ${quoted}`);
    const a = invocation('server-a');
    await a.query('BEGIN');
    await a.call('db.insert', { table, row: { name: 'a-never-committed' } });
    const b = invocation('server-b');
    await b.call('db.insert', { table, row: { name: 'b-row' } });
    await b.end();
    await a.end(); // the tool threw (or timed out) before COMMIT
    expect(await names()).toEqual(['b-row']);
    // The same server's next invocation is not inside a leftover transaction: autocommit again.
    const next = invocation('server-a');
    await next.call('db.insert', { table, row: { name: 'a-next' } });
    await next.end();
    expect(await names()).toEqual(['b-row', 'a-next']);
  });

  it('keeps BEGIN … COMMIT over several calls on one connection, even with other invocations busy', async () => {
    await database.admin(`DELETE FROM ${quoted}`);
    const a = invocation('server-a');
    await a.query('BEGIN');
    // Another invocation of the same server is busy meanwhile: with a connection per
    // call, it would take the connection in the transaction and A's inserts would
    // land outside it, committed at once.
    const busy = invocation('server-a');
    const busySql = type === 'pg' ? 'SELECT pg_sleep(1)' : 'SELECT SLEEP(1)';
    const sleeping = busy.query(busySql);
    await expect.poll(() => statementRunning(busySql)).toBe(true);
    await a.call('db.insert', { table, row: { name: 'first' } });
    await a.call('db.insert', { table, row: { name: 'second' } });
    expect(await names()).toEqual([]);
    expect(await a.call('db.select', { table, where: {} })).toHaveLength(2);
    await a.query('COMMIT');
    expect(await names()).toEqual(['first', 'second']);
    await sleeping;
    await Promise.all([a.end(), busy.end()]);
  });

  it('resets session settings between invocations and keeps the broker own ones', async () => {
    const a = invocation('server-a');
    if (type === 'pg') {
      await a.query(`SET TIME ZONE 'Asia/Tokyo'`);
      await a.query('SET statement_timeout = 0');
    } else {
      await a.query(`SET @probe = 'leaked'`);
      await a.query(`SET SESSION time_zone = '+05:00'`);
      await a.query('SET SESSION max_statement_time = 0');
      await a.query('USE mysql');
    }
    await a.end();
    const next = invocation('server-a');
    const sql =
      type === 'pg'
        ? `SELECT current_setting('TimeZone') AS tz, current_setting('statement_timeout') AS limit`
        : 'SELECT @probe AS probe, @@session.time_zone AS tz, @@session.max_statement_time AS `limit`, DATABASE() AS db';
    const [settings] = await next.query(sql);
    await next.end();
    if (type === 'pg') {
      expect(settings).toMatchObject({ limit: '30s' });
      expect(settings?.tz).not.toBe('Asia/Tokyo');
    } else {
      expect(settings).toMatchObject({
        probe: null,
        tz: '+00:00',
        db: database.connection.database,
      });
      expect(Number(settings?.limit)).toBe(30);
    }
  });

  it('gives a later invocation a working connection when the last one was killed', async () => {
    const a = invocation('server-a');
    const [{ id } = {}] = await a.query(
      type === 'pg' ? 'SELECT pg_backend_pid() AS id' : 'SELECT CONNECTION_ID() AS id',
    );
    await database.admin(
      type === 'pg' ? `SELECT pg_terminate_backend(${Number(id)})` : `KILL ${Number(id)}`,
    );
    await failure(a.query('SELECT 1'));
    await a.end();
    const next = invocation('server-a');
    expect(await next.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    await next.end();
  });

  it('waits for a statement still running when its invocation ends, then reuses the connection', async () => {
    const controller = new AbortController();
    const call: BrokerCallContext = context({ server: 'server-a', signal: controller.signal });
    const sql = type === 'pg' ? 'SELECT pg_sleep(1)' : 'SELECT SLEEP(1)';
    const running = broker.handle('db.query', { ...target(), sql }, call);
    await expect.poll(() => statementRunning(sql)).toBe(true);
    controller.abort();
    expect(await failure(running)).toMatchObject({ code: 'ERR_CANCELLED' });
    await broker.endInvocation(call.invocation);
    const next = invocation('server-a');
    expect(await next.query('SELECT 2 AS two')).toEqual([{ two: 2 }]);
    await next.end();
  });

  it.runIf(type === 'pg')(
    'fails COPY FROM STDIN at once',
    async () => {
      // "At once": a COPY waiting for data would hang until the 10 s test timeout.
      const a = invocation('server-a');
      expect(await failure(a.query(`COPY ${quoted} (name) FROM STDIN`))).toMatchObject({
        code: 'ERR_DB_FAILED',
        message: expect.stringContaining('COPY … FROM STDIN is not supported by sdk.db'),
      });
      // The stuck connection is used again neither by this invocation nor by the next.
      expect(await failure(a.query('SELECT 3 AS three'))).toMatchObject({ code: 'ERR_DB_FAILED' });
      await a.end();
      const next = invocation('server-a');
      expect(await next.query('SELECT 3 AS three')).toEqual([{ three: 3 }]);
      await next.end();
    },
    10_000,
  );

  it.runIf(type === 'mysql')(
    'fails LOAD DATA LOCAL INFILE at once',
    async () => {
      // "At once": a load waiting for the file would hang until the 10 s test timeout.
      const a = invocation('server-a');
      const error = await failure(
        a.query(`LOAD DATA LOCAL INFILE '/etc/hostname' INTO TABLE ${quoted}`),
      );
      expect(error).toMatchObject({
        code: 'ERR_DB_FAILED',
        message: expect.stringMatching(/local infile/i),
      });
      // The connection is still good.
      expect(await a.query('SELECT 3 AS three')).toEqual([{ three: 3 }]);
      await a.end();
    },
    10_000,
  );

  it('holds a connection for the whole invocation: a full pool makes others wait, then fail clearly', async () => {
    const narrow = brokerWithDefaults({
      egress: EgressPolicy.fromAllowList(['127.0.0.0/8']),
      db: { maxConnectionsPerKey: 1, connectTimeoutMs: 300 },
    });
    try {
      const args = { ...target(), sql: 'SELECT 1 AS one' };
      const holder = context({ server: 'server-a' });
      await narrow.handle('db.query', args, holder);
      const waiting = await failure(
        narrow.handle('db.query', args, context({ server: 'server-a' })),
      );
      // It waited the configured 300 ms connect timeout (pg's own pool), or the broker's
      // backstop a second later (mysql2), then gave up.
      expect(waiting).toMatchObject({
        code: 'ERR_DB_FAILED',
        message: expect.stringMatching(
          /no connection free within (300|1300) ms: all 1 connections to this database are held by running invocations of this server/,
        ),
      });
      // Another server has its own pool, so it is not kept waiting.
      const other = context({ server: 'server-b' });
      expect(await narrow.handle('db.query', args, other)).toMatchObject({ rows: [{ one: 1 }] });
      await narrow.endInvocation(other.invocation);
      // The connection comes back when its invocation ends, and serves the next one.
      const queued = context({ server: 'server-a' });
      const next = narrow.handle('db.query', args, queued);
      await narrow.endInvocation(holder.invocation);
      expect(await next).toMatchObject({ rows: [{ one: 1 }] });
      await narrow.endInvocation(queued.invocation);
    } finally {
      await narrow.close();
    }
  });

  it('gives every connection back when invocations end', async () => {
    // Twice as many invocations as the pool has connections (5): the second half only
    // gets connections because the first half gave theirs back.
    for (let round = 0; round < 2; round++) {
      const calls = Array.from({ length: 5 }, () => invocation('server-c'));
      await Promise.all(calls.map((each) => each.query('SELECT 1')));
      await Promise.all(calls.map((each) => each.end()));
    }
  });
});
