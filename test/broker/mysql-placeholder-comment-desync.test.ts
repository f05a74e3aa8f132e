/**
 * sdk.db.query on the real MariaDB with comments the `$n` translator reads
 * differently from the server. Each statement must either bind every value
 * where its `$n` says, or be refused with ERR_INVALID_ARGUMENT; a statement
 * whose `?` count differs from the server's makes mysql2 send a malformed
 * COM_STMT_EXECUTE (the server then reads the values misaligned: "" and
 * garbage), and a `?` the translator never counted takes another's value.
 *
 * - `--` followed by DEL (0x7F): a comment to MariaDB (a control character),
 *   code to the translator (which only knows < 0x20 and \s).
 * - `/*M! … *\/`: code on MariaDB, a plain comment to the translator, so a
 *   bare `?` inside it passes the "use $n, not ?" guard.
 * - `/*!99999 … *\/`: a version-gated executable comment MariaDB 10.11 skips,
 *   code to the translator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokerLimitsFrom } from '../../control-plane/app/component-settings.js';
import { Broker, EgressPolicy } from '../../control-plane/broker/index.js';
import { defaultConfig } from '../../control-plane/config.js';
import { openTestDatabase, type TestDatabase } from './database-targets.js';
import { context } from './call-helpers.js';

describe('sdk.db.query on mysql: comments the server reads as code, or code it skips', () => {
  let database: TestDatabase;
  let broker: Broker;

  beforeAll(async () => {
    database = await openTestDatabase('mysql');
    const limits = brokerLimitsFrom(defaultConfig());
    broker = new Broker({ ...limits, egress: EgressPolicy.fromAllowList(['127.0.0.0/8']) });
  });

  afterAll(async () => {
    await broker?.close();
    await database?.end();
  });

  /** The rows of `sql`, or the code it was refused with. */
  const outcome = async (sql: string, values: unknown[]): Promise<unknown> => {
    const call = context();
    const target = { type: 'mysql', connection: database.connection };
    try {
      const result = (await broker.handle('db.query', { ...target, sql, values }, call)) as {
        rows: unknown[];
      };
      return result.rows;
    } catch (error) {
      return { refused: (error as { code: string }).code };
    } finally {
      await broker.endInvocation(call.invocation);
    }
  };

  it('`--` then DEL is a comment: the $2 inside it is not bound', async () => {
    const result = await outcome('SELECT $1 AS a --\x7F, $2 AS b\n, $3 AS c', ['v1', 'v2', 'v3']);
    expect([[{ a: 'v1', c: 'v3' }], { refused: 'ERR_INVALID_ARGUMENT' }]).toContainEqual(result);
  });

  it('a bare ? inside /*M! */ is refused, not given $1’s value', async () => {
    // The skipped /*!99999 */ balanced the count: before the fix, a = 'for-b', b = 'not-bound'.
    const result = await outcome('SELECT /*M! ? AS a, */ $1 AS b /*!99999 , $2 */', [
      'for-b',
      'not-bound',
    ]);
    expect(result).toEqual({ refused: 'ERR_INVALID_ARGUMENT' });
  });

  it('a $n inside a /*!99999 */ the server skips does not shift the others', async () => {
    const result = await outcome('SELECT /*!99999 $1 AS x, */ $2 AS b', ['v1', 'v2']);
    expect([[{ b: 'v2' }], { refused: 'ERR_INVALID_ARGUMENT' }]).toContainEqual(result);
  });
});
