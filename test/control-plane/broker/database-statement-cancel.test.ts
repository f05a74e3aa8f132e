/**
 * A database statement ends with its invocation: a tool whose call is cut
 * off by its time limit, cancelled by its client, or that returns while a
 * statement of its own still runs, leaves nothing running on the database
 * (real PostgreSQL and MariaDB, real runner containers, the official MCP
 * client). The statement sleeps 20 s; it must be gone long before that.
 */
import { randomBytes } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODE_META_KEY } from '../../../control-plane/mcp/tool-result.js';
import {
  openTestDatabase,
  testConnection,
  type DatabaseType,
  type TestDatabase,
} from '../../broker/database-targets.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { connectSdkSession } from '../../support/sdk-session.js';

const SERVER = 'sleepy';
/** Seconds the statement sleeps: far past every deadline below. */
const SLEEP_SECONDS = 20;
/** How long after the call's answer the statement may still be seen: generous, and well under the sleep. */
const GONE_WITHIN_MS = 8_000;

let plane: TestControlPlane;
let client: Client;

beforeAll(async () => {
  plane = await startTestControlPlane();
  expect((await plane.admin('POST', '/api/servers', { subdomain: SERVER })).status).toBe(201);
  client = (await connectSdkSession(plane.mcpUrl(SERVER))).client;
}, 180_000);

afterAll(async () => {
  await client?.close();
  await plane?.close();
});

/** The SQL that sleeps, marked so that the test finds exactly this statement. */
function sleepingStatement(type: DatabaseType, marker: string): string {
  return type === 'pg'
    ? `SELECT pg_sleep(${SLEEP_SECONDS}) /* ${marker} */`
    : `SELECT SLEEP(${SLEEP_SECONDS}) /* ${marker} */`;
}

describe.each<DatabaseType>(['pg', 'mysql'])(
  'sdk.db (%s) statements of an ended invocation',
  (type) => {
    let database: TestDatabase;

    /** Sessions of the database running the marked statement now (the checking one excluded). */
    const running = async (marker: string): Promise<number> => {
      const rows =
        type === 'pg'
          ? await database.admin(
              `select pid from pg_stat_activity where state = 'active' and pid <> pg_backend_pid() and query like '%${marker}%'`,
            )
          : await database.admin(
              `select ID from information_schema.PROCESSLIST where ID <> CONNECTION_ID() and COMMAND <> 'Sleep' and INFO like '%${marker}%'`,
            );
      return rows.length;
    };

    /** Polls until the marked statement shows up; resolves true when it did within `ms`. */
    const seenRunning = async (marker: string, ms = 30_000): Promise<boolean> => {
      const deadline = Date.now() + ms;
      while (Date.now() < deadline) {
        if ((await running(marker)) > 0) return true;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return false;
    };

    const saveTool = async (name: string, body: string, timeoutMs?: number) => {
      const db = `const db = sdk.db({ type: '${type}', connection: ${JSON.stringify(testConnection(type))} });`;
      const saved = await plane.admin('PUT', `/api/servers/${SERVER}/tools/${name}_${type}`, {
        description: name,
        code: `${db}\n${body}`,
        parameters: [{ name: 'sql', type: 'string', required: true }],
        ...(timeoutMs === undefined ? {} : { limits: { timeoutMs } }),
      });
      expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    };

    beforeAll(async () => {
      database = await openTestDatabase(type);
      await saveTool('sleep_past_limit', `await db.query(params.sql, []); return 'woke';`, 2_000);
      await saveTool('sleep_until_cancelled', `await db.query(params.sql, []); return 'woke';`);
      // Returns while its statement still runs: the tool never awaits it.
      await saveTool(
        'leave_running',
        `await db.query('SELECT 1', []);
db.query(params.sql, []).catch(() => undefined);
await new Promise((resolve) => setTimeout(resolve, 1500));
return 'returned';`,
      );
    }, 60_000);

    afterAll(async () => {
      await database?.end();
    });

    it('cancels the statement of an invocation past its time limit (ERR_TOOL_TIMEOUT)', async () => {
      const marker = `timeout_${type}_${randomBytes(6).toString('hex')}`;
      const call = client.callTool({
        name: `sleep_past_limit_${type}`,
        arguments: { sql: sleepingStatement(type, marker) },
      }) as Promise<CallToolResult>;
      expect(await seenRunning(marker)).toBe(true);
      const result = await call;
      expect(result.isError).toBe(true);
      expect(result._meta?.[ERROR_CODE_META_KEY]).toBe('ERR_TOOL_TIMEOUT');
      const answered = Date.now();
      await expect.poll(() => running(marker), { timeout: GONE_WITHIN_MS, interval: 100 }).toBe(0);
      console.log(`[${type}] timeout: statement gone ${Date.now() - answered} ms after the answer`);
    }, 60_000);

    it('cancels the statement of an invocation its client cancelled', async () => {
      const marker = `cancel_${type}_${randomBytes(6).toString('hex')}`;
      const abort = new AbortController();
      const call = client
        .callTool(
          {
            name: `sleep_until_cancelled_${type}`,
            arguments: { sql: sleepingStatement(type, marker) },
          },
          undefined,
          { signal: abort.signal },
        )
        .catch((error: unknown) => error);
      expect(await seenRunning(marker)).toBe(true);
      abort.abort();
      await call;
      const cancelled = Date.now();
      await expect.poll(() => running(marker), { timeout: GONE_WITHIN_MS, interval: 100 }).toBe(0);
      console.log(`[${type}] cancel: statement gone ${Date.now() - cancelled} ms after the cancel`);
    }, 60_000);

    it('cancels a statement still running when its invocation returned', async () => {
      const marker = `left_${type}_${randomBytes(6).toString('hex')}`;
      const call = client.callTool({
        name: `leave_running_${type}`,
        arguments: { sql: sleepingStatement(type, marker) },
      }) as Promise<CallToolResult>;
      expect(await seenRunning(marker)).toBe(true);
      const result = await call;
      expect(result.isError ?? false).toBe(false);
      const answered = Date.now();
      await expect.poll(() => running(marker), { timeout: GONE_WITHIN_MS, interval: 100 }).toBe(0);
      console.log(`[${type}] return: statement gone ${Date.now() - answered} ms after the answer`);
    }, 60_000);

    it('gives the connection back clean: the next invocation of the server is served', async () => {
      await saveTool('quick', `return (await db.query(params.sql, [])).rows.length;`);
      const result = (await client.callTool({
        name: `quick_${type}`,
        arguments: { sql: 'SELECT 1 AS one' },
      })) as CallToolResult;
      expect(result.isError ?? false, JSON.stringify(result)).toBe(false);
    });
  },
);
