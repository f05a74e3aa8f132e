import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { freePort } from '../support/loopback-server.js';
import _ from 'lodash';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Broker, EgressPolicy } from '../../control-plane/broker/index.js';
import { brokerWithDefaults } from './broker-with-defaults.js';
import {
  openTestDatabase,
  uniqueTableName,
  type DatabaseType,
  type TestDatabase,
} from './database-targets.js';
import { context, failure } from './call-helpers.js';
import type { BrokerCallContext } from '../../control-plane/broker/broker.js';
import type { BrokerOperation } from '../../src/protocol/index.js';

/** One call as its own invocation: handled, then the invocation ends and its connection goes back. */
async function once(
  target: Broker,
  op: BrokerOperation,
  args: unknown,
  call: BrokerCallContext = context(),
): Promise<unknown> {
  try {
    return await target.handle(op, args, call);
  } finally {
    await target.endInvocation(call.invocation);
  }
}

const ddl = {
  pg: (table: string) =>
    `CREATE TABLE "${table}" (id serial PRIMARY KEY, name text NOT NULL, customer text, amount integer, ` +
    `created_at timestamptz NOT NULL DEFAULT '2026-01-02T03:04:05Z', note text)`,
  mysql: (table: string) =>
    `CREATE TABLE \`${table}\` (id int AUTO_INCREMENT PRIMARY KEY, name varchar(100) NOT NULL, customer varchar(100), ` +
    `amount int, created_at datetime NOT NULL DEFAULT '2026-01-02 03:04:05', note text)`,
};

describe.each<DatabaseType>(['pg', 'mysql'])('sdk.db on %s', (type) => {
  let database: TestDatabase;
  let broker: Broker;
  const table = uniqueTableName(`broker_${type}`);
  const quoted = type === 'pg' ? `"${table}"` : `\`${table}\``;
  const target = (): { type: DatabaseType; connection: TestDatabase['connection'] } => ({
    type,
    connection: database.connection,
  });

  beforeAll(async () => {
    database = await openTestDatabase(type);
    await database.admin(ddl[type](table));
    broker = brokerWithDefaults({
      egress: EgressPolicy.fromAllowList(['127.0.0.0/8', 'localhost']),
      db: { maxConnectionsPerKey: 3 },
    });
  });

  afterAll(async () => {
    await broker?.close();
    await database?.admin(`DROP TABLE IF EXISTS ${quoted}`);
    await database?.end();
  });

  it('inserts rows and returns them as stored, id and defaults included', async () => {
    const created = await once(
      broker,
      'db.insert',
      { ...target(), table, row: { name: 'ada', customer: 'acme', amount: 30 } },
      context(),
    );
    expect(created).toEqual({
      id: expect.any(Number),
      name: 'ada',
      customer: 'acme',
      amount: 30,
      created_at: '2026-01-02T03:04:05.000Z',
      note: null,
    });
    await once(
      broker,
      'db.insert',
      { ...target(), table, row: { name: 'bob', customer: 'acme', amount: 12 } },
      context(),
    );
    await once(
      broker,
      'db.insert',
      { ...target(), table, row: { name: 'cy', customer: 'globex', amount: 5, note: "it's $1" } },
      context(),
    );
  });

  it('selects with equality filters, or everything with an empty filter', async () => {
    const acme = (await once(
      broker,
      'db.select',
      { ...target(), table, where: { customer: 'acme' } },
      context(),
    )) as { name: string }[];
    expect(acme.map((row) => row.name).sort()).toEqual(['ada', 'bob']);
    expect(
      await once(
        broker,
        'db.select',
        { ...target(), table, where: { customer: 'acme', name: 'bob' } },
        context(),
      ),
    ).toHaveLength(1);
    expect(await once(broker, 'db.select', { ...target(), table }, context())).toHaveLength(3);
    expect(
      await once(broker, 'db.select', { ...target(), table, where: { note: null } }, context()),
    ).toHaveLength(2);
    expect(
      await once(broker, 'db.select', { ...target(), table, where: { name: 'nobody' } }, context()),
    ).toEqual([]);
  });

  it('supports the seed patterns: find a row or {found:false}; group and sum with lodash', async () => {
    const find = async (name: string): Promise<unknown> => {
      const rows = (await once(
        broker,
        'db.select',
        { ...target(), table, where: { name } },
        context(),
      )) as unknown[];
      return rows[0] ?? { found: false };
    };
    expect(await find('cy')).toMatchObject({ name: 'cy', customer: 'globex' });
    expect(await find('zed')).toEqual({ found: false });
    const rows = (await once(broker, 'db.select', { ...target(), table }, context())) as {
      customer: string;
      amount: number;
    }[];
    const totals = _.mapValues(_.groupBy(rows, 'customer'), (group) => _.sumBy(group, 'amount'));
    expect(totals).toEqual({ acme: 42, globex: 5 });
  });

  it('counts with count(*) as a number in rows[0]', async () => {
    const result = await once(
      broker,
      'db.query',
      { ...target(), sql: `SELECT count(*) AS n FROM ${quoted} WHERE amount > $1`, values: [10] },
      context(),
    );
    expect(result).toMatchObject({ rows: [{ n: 2 }] });
  });

  it('binds $n placeholders, reordered and repeated, and leaves $1 inside literals alone', async () => {
    const sql =
      `SELECT name, note, 'it''s $1' AS literal FROM ${quoted} ` +
      `WHERE (customer = $2 AND amount > $1) OR (note = 'it''s $1' AND amount < $1) ORDER BY name`;
    const result = (await once(
      broker,
      'db.query',
      { ...target(), sql, values: [10, 'acme'] },
      context(),
    )) as { rows: unknown[] };
    expect(result.rows).toEqual([
      { name: 'ada', note: null, literal: "it's $1" },
      { name: 'bob', note: null, literal: "it's $1" },
      { name: 'cy', note: "it's $1", literal: "it's $1" },
    ]);
  });

  it('returns JSON-safe values: ISO dates, exact big integers as strings, bytes as base64', async () => {
    const sql =
      type === 'pg'
        ? `SELECT '2026-05-06T07:08:09Z'::timestamptz AS at, '2026-05-06'::date AS day, 9007199254740993::int8 AS big, 42::int8 AS small, '\\x0102ff'::bytea AS bytes, 1.50::numeric AS price, '{"a":[1]}'::jsonb AS doc`
        : `SELECT CAST('2026-05-06 07:08:09' AS DATETIME) AS at, CAST('2026-05-06' AS DATE) AS day, CAST(9007199254740993 AS SIGNED) AS big, CAST(42 AS SIGNED) AS small, UNHEX('0102ff') AS bytes, CAST(1.50 AS DECIMAL(5,2)) AS price, JSON_OBJECT('a', JSON_ARRAY(1)) AS doc`;
    const result = (await once(broker, 'db.query', { ...target(), sql }, context())) as {
      rows: unknown[];
    };
    expect(result.rows).toEqual([
      {
        at: '2026-05-06T07:08:09.000Z',
        day: '2026-05-06',
        big: '9007199254740993',
        small: 42,
        bytes: 'AQL/',
        price: '1.50',
        doc: { a: [1] },
      },
    ]);
    expect(JSON.parse(JSON.stringify(result))).toEqual(result);
  });

  it('refuses identifiers that are not plain, and the table survives', async () => {
    for (const bad of [`${table}; drop table x`, `${table}" --`, 'a.b.c']) {
      expect(
        await failure(once(broker, 'db.select', { ...target(), table: bad }, context())),
      ).toMatchObject({
        code: 'ERR_DB_IDENTIFIER',
        message: expect.stringContaining('is not a plain identifier'),
      });
    }
    expect(
      await failure(
        once(
          broker,
          'db.insert',
          { ...target(), table, row: { 'name) VALUES (1); --': 'x' } },
          context(),
        ),
      ),
    ).toMatchObject({
      code: 'ERR_DB_IDENTIFIER',
    });
    expect(await once(broker, 'db.select', { ...target(), table }, context())).toHaveLength(3);
  });

  it('reports database errors with their code as ERR_DB_FAILED', async () => {
    const error = await failure(
      once(broker, 'db.query', { ...target(), sql: 'SELECT * FROM no_such_table_here' }, context()),
    );
    expect(error.code).toBe('ERR_DB_FAILED');
    expect(error.message).toContain(
      `${database.connection.host}:${database.connection.port}/${database.connection.database}`,
    );
    expect(error.message).toMatch(
      type === 'pg'
        ? /no_such_table_here.*\(SQLSTATE 42P01\)/
        : /no_such_table_here.*\(errno 1146, ER_NO_SUCH_TABLE, SQLSTATE 42S02\)/,
    );
  });

  it('rejects malformed arguments naming the field', async () => {
    expect(
      await failure(
        once(
          broker,
          'db.select',
          { type, connection: { ...database.connection, host: undefined }, table },
          context(),
        ),
      ),
    ).toMatchObject({
      code: 'ERR_INVALID_ARGUMENT',
      message: expect.stringMatching(/^sdk\.db select: connection\.host: /),
    });
    expect(
      await failure(
        once(broker, 'db.query', { ...target(), sql: 'SELECT 1', values: 'x' }, context()),
      ),
    ).toMatchObject({
      code: 'ERR_INVALID_ARGUMENT',
      message: expect.stringMatching(/^sdk\.db query: values: /),
    });
    expect(
      await failure(
        once(broker, 'db.select', { ...target(), table, where: { name: { $ne: 'x' } } }, context()),
      ),
    ).toMatchObject({
      code: 'ERR_INVALID_ARGUMENT',
      message:
        'where.name: must be a string, number, boolean or null (equality filter), not an object',
    });
  });

  it('refuses __proto__, constructor and prototype keys in where and row instead of dropping them', async () => {
    // As the runner sends them: parsed JSON, where `__proto__` is an own key.
    const select = JSON.parse(
      JSON.stringify({ ...target(), table }).replace(/}$/, ',"where":{"__proto__":"acme"}}'),
    ) as unknown;
    expect(await failure(once(broker, 'db.select', select))).toEqual(
      expect.objectContaining({
        code: 'ERR_INVALID_ARGUMENT',
        message: 'sdk.db select: where: "__proto__" is not accepted as a column name',
      }),
    );
    const insert = JSON.parse(
      JSON.stringify({ ...target(), table }).replace(
        /}$/,
        ',"row":{"name":"eve","__proto__":{"customer":"x"}}}',
      ),
    ) as unknown;
    expect(await failure(once(broker, 'db.insert', insert))).toMatchObject({
      code: 'ERR_INVALID_ARGUMENT',
      message: 'sdk.db insert: row: "__proto__" is not accepted as a column name',
    });
    for (const key of ['constructor', 'prototype']) {
      expect(
        await failure(once(broker, 'db.select', { ...target(), table, where: { [key]: 1 } })),
      ).toMatchObject({ code: 'ERR_INVALID_ARGUMENT', message: expect.stringContaining(key) });
    }
    expect(await once(broker, 'db.select', { ...target(), table })).toHaveLength(3);
  });

  it('reuses pooled connections instead of opening one per call', async () => {
    const sql =
      type === 'pg'
        ? 'SELECT pg_backend_pid() AS connection'
        : 'SELECT CONNECTION_ID() AS connection';
    const connectionOf = async (): Promise<unknown> =>
      (
        (await once(broker, 'db.query', { ...target(), sql }, context())) as {
          rows: { connection: unknown }[];
        }
      ).rows[0]?.connection;
    const sequential = new Set<unknown>();
    for (let index = 0; index < 20; index++) sequential.add(await connectionOf());
    expect(sequential.size).toBe(1);
    const parallel = new Set(await Promise.all(Array.from({ length: 12 }, connectionOf)));
    expect(parallel.size).toBeGreaterThan(0);
    expect(parallel.size).toBeLessThanOrEqual(3);
    expect(await broker.openDatabaseConnections()).toBeLessThanOrEqual(3);
  });

  // PostgreSQL's trust authentication accepts any password, so each password is a distinct pool key.
  it.runIf(type === 'pg')(
    'bounds connections across pools by evicting the least recently used idle pool',
    async () => {
      const bounded = brokerWithDefaults({
        egress: EgressPolicy.fromAllowList(['127.0.0.0/8']),
        db: { maxConnectionsPerKey: 2, maxConnectionsTotal: 4 },
      });
      try {
        const sql = 'SELECT pg_backend_pid() AS pid, pg_sleep(0.05)';
        const seen = new Set<unknown>();
        for (const password of ['first-pw', 'second-pw', 'third-pw', 'first-pw']) {
          const connection = { ...database.connection, password };
          const results = await Promise.all(
            Array.from({ length: 4 }, () =>
              once(bounded, 'db.query', { type, connection, sql }, context()),
            ),
          );
          for (const result of results)
            seen.add((result as { rows: { pid: unknown }[] }).rows[0]?.pid);
          expect(await bounded.openDatabaseConnections()).toBeLessThanOrEqual(4);
        }
        // Four pool openings of two connections each: the evicted first pool was reopened, not kept.
        expect(seen.size).toBe(8);
        const alive = (await database.admin(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid IN (${[...seen].join(',')})`,
        )) as { n: number }[];
        expect(alive[0]?.n).toBeLessThanOrEqual(4);
      } finally {
        await bounded.close();
      }
    },
  );

  it('limits statements to statementTimeoutMs', async () => {
    const quick = brokerWithDefaults({
      egress: EgressPolicy.fromAllowList(['127.0.0.0/8']),
      db: { statementTimeoutMs: 300 },
    });
    try {
      // A statement of 5 s fails only if the 300 ms limit ends it (the server's own error code says so).
      const sql = type === 'pg' ? 'SELECT pg_sleep(5)' : 'SELECT SLEEP(5)';
      const error = await failure(once(quick, 'db.query', { ...target(), sql }, context()));
      expect(error.code).toBe('ERR_DB_FAILED');
      expect(error.message).toMatch(type === 'pg' ? /SQLSTATE 57014/ : /errno (1969|3024)/);
    } finally {
      await quick.close();
    }
  });

  it('scrubs the password from every message', async () => {
    const password = 'Sup3rSecretPw';
    const wrong = {
      ...database.connection,
      password,
      ...(type === 'pg' ? { user: 'no_such_role_broker' } : {}),
    };
    const error = await failure(
      once(broker, 'db.query', { type, connection: wrong, sql: 'SELECT 1' }, context()),
    );
    expect(error.code).toBe('ERR_DB_FAILED');
    expect(error.message).toMatch(type === 'pg' ? /no_such_role_broker/ : /Access denied/);
    expect(error.message).not.toContain(password);
    // A message that would echo the password (here through a table name) is scrubbed too.
    const echo = await failure(
      once(
        broker,
        'db.query',
        {
          type,
          connection: { ...database.connection, password: database.connection.password ?? '' },
          sql: `SELECT * FROM ${table}_nope`,
        },
        context(),
      ),
    );
    expect(echo.message).toContain(`${table}_nope`);
    const scrubbing = brokerWithDefaults({ egress: EgressPolicy.fromAllowList(['127.0.0.0/8']) });
    try {
      const secret = `${table}_pw`;
      const connection = { ...database.connection, ...(type === 'pg' ? { password: secret } : {}) };
      if (type === 'pg') {
        const leaked = await failure(
          once(
            scrubbing,
            'db.query',
            { type, connection, sql: `SELECT * FROM ${secret}` },
            context(),
          ),
        );
        expect(leaked.message).toContain('***');
        expect(leaked.message).not.toContain(secret);
      }
    } finally {
      await scrubbing.close();
    }
  });

  it('applies the egress policy to the database host', async () => {
    const publicOnly = brokerWithDefaults({ egress: EgressPolicy.fromAllowList([]) });
    try {
      for (const host of [
        '169.254.169.254',
        '0xa9fea9fe',
        '2852039166',
        '::ffff:169.254.169.254',
      ]) {
        const error = await failure(
          once(
            broker,
            'db.query',
            { type, connection: { ...database.connection, host }, sql: 'SELECT 1' },
            context(),
          ),
        );
        expect(error).toMatchObject({
          code: 'ERR_EGRESS_DENIED',
          message: expect.stringContaining('169.254.169.254'),
        });
      }
      for (const host of [database.connection.host, 'localhost']) {
        const error = await failure(
          once(
            publicOnly,
            'db.query',
            { type, connection: { ...database.connection, host }, sql: 'SELECT 1' },
            context(),
          ),
        );
        expect(error.code).toBe('ERR_EGRESS_DENIED');
      }
      // Allowed by hostname: resolves to loopback and connects to the checked address.
      const value = await once(
        broker,
        'db.query',
        { type, connection: { ...database.connection, host: 'localhost' }, sql: 'SELECT 1 AS one' },
        context(),
      );
      expect(value).toMatchObject({ rows: [{ one: 1 }] });
    } finally {
      await publicOnly.close();
    }
  });

  it('fails clearly when the database host is unreachable or silent, within the connect timeout', async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const closedPort = await freePort();
    const impatient = brokerWithDefaults({
      egress: EgressPolicy.fromAllowList(['127.0.0.0/8']),
      db: { connectTimeoutMs: 500 },
    });
    try {
      const refused = await failure(
        once(
          impatient,
          'db.query',
          { type, connection: { ...database.connection, port: closedPort }, sql: 'SELECT 1' },
          context(),
        ),
      );
      expect(refused).toMatchObject({
        code: 'ERR_DB_FAILED',
        message: expect.stringContaining(`127.0.0.1:${closedPort}`),
      });
      expect(refused.message).toContain('ECONNREFUSED');
      // The silent server accepts and never speaks: only a connect timeout can end this.
      const started = Date.now();
      const port = (silent.address() as AddressInfo).port;
      const hung = await failure(
        once(
          impatient,
          'db.query',
          { type, connection: { ...database.connection, port }, sql: 'SELECT 1' },
          context(),
        ),
      );
      expect(hung).toMatchObject({
        code: 'ERR_DB_FAILED',
        message: expect.stringContaining(`127.0.0.1:${port}`),
      });
      expect(hung.message).toMatch(/connection timeout|ETIMEDOUT/);
      // Which timeout: the message does not say, so a bound far from both tells the configured
      // 500 ms from the 10 s default. Behaviour, not speed: generous on purpose.
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await impatient.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});
