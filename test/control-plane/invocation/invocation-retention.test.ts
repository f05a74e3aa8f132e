/**
 * The invocation log is kept per server: an attacker server flooded with
 * calls refused for their arguments (anonymous, free to make), unknown tools
 * and hundreds of real calls does not push a victim server's history out of
 * the log. Refused calls are counted per server and code, not stored a row
 * each, and the counts add up across replicas. On SQLite (one control plane)
 * and PostgreSQL (two replicas sharing it), real containers, the official
 * MCP client.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgresServer, postgresUrl } from '../../store/store-targets.js';
import { loopbackFetch } from '../../support/loopback-fetch.js';
import { postInitialize } from '../../support/mcp-requests.js';
import { connectSdkSession } from '../../support/sdk-session.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';

/** The log as a whole keeps 200 rows; each server at least its newest 50. */
const RETENTION = 200;
const RETENTION_PER_SERVER = 50;
const VICTIM_CALLS = 30;
const REFUSED_FLOOD = 230;
const UNKNOWN_TOOL_FLOOD = 20;
const REAL_FLOOD = 300;
const METRICS_TOKEN = 'metrics-reader-token-0123456789';

interface Backend {
  name: string;
  replicas: number;
  env(): Promise<Record<string, string>>;
  /** Rows of the invocation log per server, read from the database itself. */
  rowsByServer(plane: TestControlPlane): Promise<Record<string, number>>;
  /** Stored rows of a server with this error code. */
  rowsWithCode(plane: TestControlPlane, server: string, code: string): Promise<number>;
  teardown(): Promise<void>;
}

const ROWS_BY_SERVER = 'SELECT server, COUNT(*) AS n FROM invocations GROUP BY server';
const ROWS_WITH_CODE =
  'SELECT COUNT(*) AS n FROM invocations WHERE server = $1 AND error_code = $2';

function sqlite(): Backend {
  const read = <T>(plane: TestControlPlane, work: (db: SqliteDatabase.Database) => T): T => {
    const db = new SqliteDatabase(path.join(plane.dataDir, 'mcphost.db'), { readonly: true });
    try {
      return work(db);
    } finally {
      db.close();
    }
  };
  return {
    name: 'SQLite',
    replicas: 1,
    env: async () => ({}),
    rowsByServer: async (plane) =>
      read(plane, (db) =>
        Object.fromEntries(
          (db.prepare(ROWS_BY_SERVER).all() as { server: string; n: number }[]).map((row) => [
            row.server,
            Number(row.n),
          ]),
        ),
      ),
    rowsWithCode: async (plane, server, code) =>
      read(plane, (db) =>
        Number(
          (
            db.prepare(ROWS_WITH_CODE.replace('$1', '?').replace('$2', '?')).get(server, code) as {
              n: number;
            }
          ).n,
        ),
      ),
    teardown: async () => undefined,
  };
}

function postgres(): Backend {
  const database = `mcphost_retention_${randomBytes(6).toString('hex')}`;
  const query = async <T extends pg.QueryResultRow>(sql: string, values: unknown[] = []) => {
    const client = new pg.Client({ connectionString: postgresUrl(database) });
    await client.connect();
    try {
      return (await client.query<T>(sql, values)).rows;
    } finally {
      await client.end();
    }
  };
  return {
    name: 'PostgreSQL',
    replicas: 2,
    env: async () => {
      await onPostgresServer(`CREATE DATABASE ${database}`);
      return { DATABASE_URL: postgresUrl(database) };
    },
    rowsByServer: async () =>
      Object.fromEntries(
        (await query<{ server: string; n: string }>(ROWS_BY_SERVER)).map((row) => [
          row.server,
          Number(row.n),
        ]),
      ),
    rowsWithCode: async (_plane, server, code) =>
      Number((await query<{ n: string }>(ROWS_WITH_CODE, [server, code]))[0]?.n),
    teardown: () => onPostgresServer(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`),
  };
}

/** Runs `work` for 0…count-1, `parallel` at a time. */
async function inBatches(
  count: number,
  parallel: number,
  work: (index: number) => Promise<void>,
): Promise<void> {
  for (let start = 0; start < count; start += parallel) {
    await Promise.all(
      Array.from({ length: Math.min(parallel, count - start) }, (_, offset) =>
        work(start + offset),
      ),
    );
  }
}

describe.each([sqlite(), postgres()])('the invocation log under a flood ($name)', (backend) => {
  const planes: TestControlPlane[] = [];
  const clients: Client[] = [];

  const connect = async (plane: TestControlPlane, server: string): Promise<Client> => {
    const { client } = await connectSdkSession(plane.mcpUrl(server));
    clients.push(client);
    return client;
  };
  const invocationsOf = async (server: string) =>
    (await planes[0]!.admin('GET', `/api/invocations?server=${server}&limit=1000`)).body as {
      invocations: { id: string; ok: boolean; errorCode: string | null }[];
      refused: { server: string; code: string; count: number }[];
    };

  beforeAll(async () => {
    const env = {
      ...(await backend.env()),
      INVOCATION_RETENTION: String(RETENTION),
      INVOCATION_RETENTION_PER_SERVER: String(RETENTION_PER_SERVER),
      METRICS_TOKEN,
    };
    for (let replica = 0; replica < backend.replicas; replica++) {
      planes.push(await startTestControlPlane(env));
    }
    const first = planes[0]!;
    for (const subdomain of ['victim', 'attacker', 'gated', 'slow']) {
      expect((await first.admin('POST', '/api/servers', { subdomain })).status).toBe(201);
    }
    for (const subdomain of ['victim', 'attacker']) {
      // The flood here is of calls, not of requests: no rate limit in the way.
      const settings = await first.admin('PATCH', `/api/servers/${subdomain}/settings`, {
        rateLimit: { perMinute: 1_000_000, burst: 100_000 },
      });
      expect(settings.status, JSON.stringify(settings.body)).toBe(200);
      const saved = await first.admin('PUT', `/api/servers/${subdomain}/tools/echo`, {
        description: 'Says it back.',
        code: 'return params.text;',
        parameters: [{ name: 'text', type: 'string', required: true }],
      });
      expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    }
    expect(
      (await first.admin('PATCH', '/api/servers/gated/settings', { securityMode: 'apikey' }))
        .status,
    ).toBe(200);
    expect(
      (
        await first.admin('PATCH', '/api/servers/slow/settings', {
          rateLimit: { perMinute: 1, burst: 1 },
        })
      ).status,
    ).toBe(200);
  }, 240_000);

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await Promise.all(planes.map((plane) => plane.close()));
    await backend.teardown();
  });

  it("keeps the victim's history through a flood of refused and real calls on another server", async () => {
    const victim = await connect(planes[0]!, 'victim');
    for (let index = 0; index < VICTIM_CALLS; index++) {
      const result = (await victim.callTool({
        name: 'echo',
        arguments: { text: `victim-${index}` },
      })) as CallToolResult;
      expect(result.isError ?? false).toBe(false);
    }
    const before = (await invocationsOf('victim')).invocations.map((entry) => entry.id);
    expect(before).toHaveLength(VICTIM_CALLS);

    // The attacker's anonymous clients, one per replica; calls alternate between them.
    const attackers = await Promise.all(planes.map((plane) => connect(plane, 'attacker')));
    const attacker = (index: number) => attackers[index % attackers.length]!;
    const started = Date.now();
    let refusedAnswers = 0;
    await inBatches(REFUSED_FLOOD, 10, async (index) => {
      // A required argument left out: refused before any container is touched.
      const result = (await attacker(index).callTool({
        name: 'echo',
        arguments: {},
      })) as CallToolResult;
      if (result.isError) refusedAnswers++;
    });
    expect(refusedAnswers).toBe(REFUSED_FLOOD);
    let unknownAnswers = 0;
    await inBatches(UNKNOWN_TOOL_FLOOD, 10, async (index) => {
      await attacker(index)
        .callTool({ name: `nothing-${index}`, arguments: {} })
        .catch((error: unknown) => {
          if (error instanceof McpError) unknownAnswers++;
        });
    });
    expect(unknownAnswers).toBe(UNKNOWN_TOOL_FLOOD);
    const refusedMs = Date.now() - started;
    await inBatches(REAL_FLOOD, 10, async (index) => {
      const result = (await attacker(index).callTool({
        name: 'echo',
        arguments: { text: `attacker-${index}` },
      })) as CallToolResult;
      expect(result.isError ?? false).toBe(false);
    });
    const floodMs = Date.now() - started;

    // Closing a control plane writes what it holds and prunes the log: every replica, then once more.
    for (const plane of planes) await plane.restart();
    const rows = await backend.rowsByServer(planes[0]!);
    console.log(
      `[${backend.name}] flood: ${REFUSED_FLOOD} refused in ${refusedMs} ms, ${REAL_FLOOD} real calls by ${floodMs} ms; rows kept per server: ${JSON.stringify(rows)}`,
    );

    const after = await invocationsOf('victim');
    expect(after.invocations.map((entry) => entry.id)).toEqual(before);
    expect(after.refused).toEqual([]);
    // The attacker's rows are its real calls only, pruned to what the bound leaves it.
    expect(await backend.rowsWithCode(planes[0]!, 'attacker', 'ERR_INVALID_ARGUMENT')).toBe(0);
    expect(rows.attacker).toBe(RETENTION - VICTIM_CALLS);
    expect(rows.victim).toBe(VICTIM_CALLS);
    // Counted instead, across replicas.
    const attackerLog = await invocationsOf('attacker');
    expect(attackerLog.refused).toEqual([
      expect.objectContaining({
        server: 'attacker',
        code: 'ERR_INVALID_ARGUMENT',
        count: REFUSED_FLOOD,
      }),
      expect.objectContaining({
        server: 'attacker',
        code: 'ERR_UNKNOWN_TOOL',
        count: UNKNOWN_TOOL_FLOOD,
      }),
    ]);
    const buckets = await planes[0]!.admin('GET', '/api/invocations/refusals?server=attacker');
    expect(buckets.status).toBe(200);
    const byCode = (code: string) =>
      (buckets.body.refusals as { code: string; count: number }[])
        .filter((bucket) => bucket.code === code)
        .reduce((sum, bucket) => sum + bucket.count, 0);
    expect(byCode('ERR_INVALID_ARGUMENT')).toBe(REFUSED_FLOOD);
    expect(buckets.body.bucketSeconds).toBe(60);
  }, 300_000);

  it('counts requests refused before the endpoint: missing credentials, a caller past its rate', async () => {
    const plane = planes[0]!;
    const unauthenticated = await Promise.all(
      Array.from({ length: 12 }, () => postInitialize(plane.mcpUrl('gated'))),
    );
    expect(unauthenticated.map((response) => response.status)).toEqual(Array(12).fill(401));
    let limited = 0;
    for (let index = 0; index < 8; index++) {
      const response = await postInitialize(plane.mcpUrl('slow'));
      await response.body?.cancel();
      if (response.status === 429) limited++;
    }
    expect(limited).toBeGreaterThan(0);
    const totals = async (server: string) =>
      Object.fromEntries(
        (await invocationsOf(server)).refused.map((total) => [total.code, total.count]),
      );
    expect(await totals('gated')).toEqual({ ERR_UNAUTHORIZED: 12 });
    expect(await totals('slow')).toEqual({ ERR_RATE_LIMITED: limited });
    const metrics = await loopbackFetch(`${plane.adminUrl}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(await metrics.text()).toMatch(
      /mcphost_refusals_total\{server="gated",code="ERR_UNAUTHORIZED"\} 12/,
    );
  });
});
