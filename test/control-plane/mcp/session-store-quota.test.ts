/**
 * Issue 28, finding 5: the session quotas (MCP_MAX_SESSIONS_PER_CALLER,
 * MCP_MAX_SESSIONS_PER_SERVER) count the sessions the store holds, over every
 * replica, so a caller cannot keep more by spreading its initializes — or by
 * coming back to sessions a replica dropped from memory. Two control planes on
 * one PostgreSQL database (and one on SQLite, whose sessions live in memory
 * only), raw fetch for the flood, SQL for what the store holds, the official
 * SDK client for the victims.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgresServer, postgresUrl } from '../../store/store-targets.js';
import { connectSdkSession } from '../../support/sdk-session.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import {
  openRawSession,
  postRaw,
  requireRawSession,
  toolCall,
  type RawSession,
} from '../../support/raw-mcp-session.js';

const PER_CALLER = 5;
const PER_SERVER = 12;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

for (const dialect of ['postgres', 'sqlite'] as const) {
  describe(`session quotas count stored sessions (${dialect})`, () => {
    const database = `mcphost_session_quota_${randomBytes(6).toString('hex')}`;
    let first: TestControlPlane;
    let second: TestControlPlane;
    let sql: pg.Client | undefined;
    let nextId = 10;

    /** The replica for the `index`th request: alternating on PostgreSQL. */
    const replica = (index: number) => (index % 2 === 0 ? first : second);

    /** Rows the store holds for a server, or one caller (by client address) of it; NaN on SQLite (sessions live in memory). */
    async function storedRows(server: string, client?: string): Promise<number> {
      if (!sql) return NaN;
      const result = await sql.query(
        `select count(*)::int as rows from mcp_sessions
          where subdomain = $1 and ($2::text is null or quota_key = $2)`,
        [server, client === undefined ? null : JSON.stringify(['ip', client])],
      );
      return result.rows[0].rows;
    }

    /** The ids of a caller's sessions the store holds on a server. */
    async function storedIds(server: string, client: string): Promise<string[]> {
      const result = await sql!.query(
        'select id from mcp_sessions where subdomain = $1 and quota_key = $2',
        [server, JSON.stringify(['ip', client])],
      );
      return result.rows.map((row: { id: string }) => row.id);
    }

    /** The status a `tools/list` of the session gets from a replica. */
    async function listStatus(plane: TestControlPlane, server: string, session: RawSession) {
      const response = await postRaw(plane.mcpUrl(server), session, {
        jsonrpc: '2.0',
        id: nextId++,
        method: 'tools/list',
      });
      await response.text();
      return response.status;
    }

    beforeAll(async () => {
      const env: Record<string, string> = {
        MCP_MAX_SESSIONS_PER_CALLER: String(PER_CALLER),
        MCP_MAX_SESSIONS_PER_SERVER: String(PER_SERVER),
        TRUSTED_PROXIES: '127.0.0.1',
        RATE_LIMIT_BURST: '1000',
        RATE_LIMIT_PER_MINUTE: '100000',
      };
      if (dialect === 'postgres') {
        await onPostgresServer(`CREATE DATABASE ${database}`);
        env.DATABASE_URL = postgresUrl(database);
        first = await startTestControlPlane(env);
        second = await startTestControlPlane(env);
        sql = new pg.Client({ connectionString: postgresUrl(database) });
        await sql.connect();
      } else {
        first = await startTestControlPlane(env);
        second = first;
      }
      for (const server of ['attacker', 'victim']) {
        expect((await first.admin('POST', '/api/servers', { subdomain: server })).status).toBe(201);
        for (const [name, code] of [
          ['echo', 'return params.text ?? "echo";'],
          ['slow', 'await new Promise((r) => setTimeout(r, 3000)); return "slow answer";'],
        ] as const) {
          const saved = await first.admin('PUT', `/api/servers/${server}/tools/${name}`, {
            description: name,
            code,
            parameters: name === 'echo' ? [{ name: 'text', type: 'string', required: false }] : [],
          });
          expect(saved.status, JSON.stringify(saved.body)).toBe(201);
        }
      }
      for (let tries = 0; tries < 100; tries += 1) {
        if ((await second.admin('GET', '/api/servers/victim/tools')).body.length === 2) break;
        await sleep(100);
      }
    }, 180_000);

    afterAll(async () => {
      await sql?.end();
      await Promise.all([first?.close(), second !== first ? second?.close() : undefined]);
      if (dialect === 'postgres') {
        await onPostgresServer(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      }
    });

    it("keeps at most a caller's quota of sessions, and the ones replaced answer on no replica", async () => {
      const client = '198.51.100.1';
      const before = await storedRows('attacker', client);
      const sessions: RawSession[] = [];
      for (let index = 0; index < 20; index += 1) {
        sessions.push(await requireRawSession(replica(index).mcpUrl('attacker'), { client }));
      }
      const after = await storedRows('attacker', client);
      console.log(
        `[figures ${dialect}] 20 initializes of one caller over the replicas: stored rows ${before} → ${after} (quota ${PER_CALLER})`,
      );
      if (sql) expect(after).toBe(PER_CALLER);
      // The quota's worth answer on every replica, the ones replaced on none. (Which
      // ones went is by last use, as the replicas wrote it: not always the first made.)
      const answering: string[] = [];
      for (const [index, session] of sessions.entries()) {
        const statuses = [
          await listStatus(first, 'attacker', session),
          await listStatus(second, 'attacker', session),
        ];
        expect(statuses[0], `session ${index}: ${statuses}`).toBe(statuses[1]);
        expect([200, 404]).toContain(statuses[0]);
        if (statuses[0] === 200) answering.push(session.id);
      }
      expect(answering).toHaveLength(PER_CALLER);
      // The newest session is one of them: a new session never replaces itself.
      expect(answering).toContain(sessions[sessions.length - 1]!.id);
      if (sql) expect((await storedIds('attacker', client)).sort()).toEqual(answering.sort());
    }, 60_000);

    it('holds the quota when initializes race on every replica', async () => {
      const client = '198.51.100.2';
      const opened = await Promise.all(
        Array.from({ length: 30 }, (_, index) =>
          openRawSession(replica(index).mcpUrl('attacker'), { client }),
        ),
      );
      const sessions = opened.filter((each): each is RawSession => !('refused' in each));
      // The others were refused (the caller's sessions on that replica were all
      // being initialized) or replaced by a newer one before they were initialized.
      for (const each of opened) {
        if ('refused' in each) expect(each.body).toMatch(/ERR_SESSION_QUOTA|ERR_SESSION_NOT_FOUND/);
      }
      const rows = await storedRows('attacker', client);
      let answering = 0;
      for (const [index, session] of sessions.entries()) {
        if ((await listStatus(replica(index), 'attacker', session)) === 200) answering += 1;
      }
      console.log(
        `[figures ${dialect}] 30 parallel initializes of one caller: ${sessions.length} answered, ${answering} still answer, stored rows ${rows} (quota ${PER_CALLER})`,
      );
      if (sql) expect(rows).toBeLessThanOrEqual(PER_CALLER);
      expect(answering).toBeLessThanOrEqual(PER_CALLER);
      expect(answering).toBeGreaterThan(0);
    }, 60_000);

    it("keeps at most a server's quota over all its callers, and another server's sessions live on", async () => {
      const victim = await connectSdkSession(second.mcpUrl('victim'));
      const victimCall = async () => {
        const started = performance.now();
        await victim.client.callTool({ name: 'echo', arguments: { text: 'hi' } });
        return performance.now() - started;
      };
      const idle: number[] = [];
      for (let index = 0; index < 10; index += 1) idle.push(await victimCall());
      const underAttack: number[] = [];
      const refusals: number[] = [];
      const flood = (async () => {
        for (let round = 0; round < 3; round += 1) {
          const opened = await Promise.all(
            Array.from({ length: 8 }, (_, index) =>
              openRawSession(replica(index).mcpUrl('attacker'), {
                client: `203.0.113.${index + 1}`,
              }),
            ),
          );
          for (const each of opened) if ('refused' in each) refusals.push(each.status);
        }
      })();
      let done = false;
      void flood.finally(() => (done = true));
      while (!done || underAttack.length < 10) underAttack.push(await victimCall());
      await flood;
      const rows = await storedRows('attacker');
      console.log(
        `[figures ${dialect}] 24 initializes of 8 callers on one server: stored rows ${rows} (quota ${PER_SERVER}), ${refusals.length} refused; victim echo median ${median(idle).toFixed(1)} ms idle, ${median(underAttack).toFixed(1)} ms under attack`,
      );
      if (sql) {
        expect(rows).toBeLessThanOrEqual(PER_SERVER);
        // Full of sessions used moments ago: newcomers are refused, not let in over them.
        expect(refusals.length).toBeGreaterThan(0);
        expect(new Set(refusals)).toEqual(new Set([429]));
      }
      const listed = await victim.client.listTools();
      expect(listed.tools.length).toBe(2);
      await victim.client.close();
    }, 60_000);

    it('lets a running call finish when its session is replaced', async () => {
      const client = '198.51.100.3';
      // On the server the flood above left alone (the attacker's is full of sessions in use).
      const busy = await requireRawSession(first.mcpUrl('victim'), { client });
      const running = postRaw(first.mcpUrl('victim'), busy, toolCall(nextId++, 'slow')).then(
        (response) => response.text(),
      );
      await sleep(300);
      for (let index = 0; index < PER_CALLER + 2; index += 1) {
        await requireRawSession(replica(index + 1).mcpUrl('victim'), { client });
      }
      expect(await running).toContain('slow answer');
      if (sql) {
        expect(await storedRows('victim', client)).toBe(PER_CALLER);
        // Replaced while it answered: once its call ended it is gone everywhere.
        for (const plane of [first, second]) {
          expect(await listStatus(plane, 'victim', busy)).toBe(404);
        }
      } else {
        // One process knows it is answering: an idle session was replaced instead.
        expect(await listStatus(first, 'victim', busy)).toBe(200);
      }
    }, 60_000);
  });
}
