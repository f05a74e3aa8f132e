/**
 * Issue 28, finding 3: a client that cuts its response mid-call must not make
 * the control plane keep the answer. Real control planes (two replicas on one
 * PostgreSQL database; one on SQLite), real tools in Docker, raw fetch for the
 * cut connections, SQL for what the store holds.
 *
 * - A response cut before the client got any event id cannot be resumed by
 *   anyone: nothing of it is kept, and its call is cancelled.
 * - A resumable stream (its priming event went out) is kept only within the
 *   bounds: bytes per caller and per server; past one, the oldest streams go
 *   first, and a resume of one of them is refused.
 * - An answered stream is forgotten — memory and store — once the resume
 *   window passed.
 * - Another server's streams and calls are untouched.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgresServer, postgresUrl } from '../../store/store-targets.js';
import { connectSdkSession } from '../../support/sdk-session.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import {
  cutCall,
  errorCodeOf,
  requireRawSession,
  resumeRaw,
  toolCall,
  type RawSession,
} from '../../support/raw-mcp-session.js';

const MIB = 1024 * 1024;
/** Size of the answer each big call sends (under TOOL_MAX_RESULT_BYTES), in characters. */
const ANSWER_CHARACTERS = 900_000;
const RESUME_WINDOW_MS = 5000;
const PER_CALLER_BYTES = 4 * MIB;
const PER_SERVER_BYTES = 6 * MIB;

const TOOLS: Record<string, string> = {
  // Silent until its answer: the response is still undecided (no event id) when cut.
  big: `await new Promise((r) => setTimeout(r, params.ms)); return 'x'.repeat(${ANSWER_CHARACTERS});`,
  // A log line first: the response turns into a resumable stream at once.
  chatty_big: `console.log('started'); await new Promise((r) => setTimeout(r, params.ms)); return 'x'.repeat(${ANSWER_CHARACTERS});`,
  echo: 'return params.text;',
};

const PARAMETERS: Record<string, object[]> = {
  big: [{ name: 'ms', type: 'number', required: true }],
  chatty_big: [{ name: 'ms', type: 'number', required: true }],
  echo: [{ name: 'text', type: 'string', required: true }],
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

for (const dialect of ['postgres', 'sqlite'] as const) {
  describe(`cut response streams (${dialect})`, () => {
    const database = `mcphost_cut_streams_${randomBytes(6).toString('hex')}`;
    /** The replica every attack goes to, and (PostgreSQL) the one resumes go to. */
    let first: TestControlPlane;
    let second: TestControlPlane;
    let sql: pg.Client | undefined;
    let nextId = 100;

    /** What the store holds of these sessions' streams. */
    async function stored(sessions: RawSession[]): Promise<{ rows: number; bytes: number }> {
      if (!sql) return { rows: 0, bytes: 0 };
      const result = await sql.query(
        `select count(*)::int as rows, coalesce(sum(octet_length(message)), 0)::bigint as bytes
           from mcp_stream_events where session_id = any($1)`,
        [sessions.map((session) => session.id)],
      );
      return { rows: result.rows[0].rows, bytes: Number(result.rows[0].bytes) };
    }

    async function invocationErrors(server: string, tool: string): Promise<(string | null)[]> {
      const listed = await first.admin('GET', `/api/invocations?server=${server}&tool=${tool}`);
      return (listed.body.invocations as { errorCode?: string }[]).map(
        (row) => row.errorCode ?? null,
      );
    }

    beforeAll(async () => {
      const env: Record<string, string> = {
        MCP_RESUME_WINDOW_MS: String(RESUME_WINDOW_MS),
        MCP_RESUME_MAX_BYTES_PER_CALLER: String(PER_CALLER_BYTES),
        MCP_RESUME_MAX_BYTES_PER_SERVER: String(PER_SERVER_BYTES),
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
        for (const [name, code] of Object.entries(TOOLS)) {
          const saved = await first.admin('PUT', `/api/servers/${server}/tools/${name}`, {
            description: name,
            code,
            parameters: PARAMETERS[name],
          });
          expect(saved.status, JSON.stringify(saved.body)).toBe(201);
        }
      }
      // Both replicas serve the tools before the tests begin (the change feed is quick).
      for (let tries = 0; tries < 100; tries += 1) {
        const listed = await second.admin('GET', '/api/servers/victim/tools');
        if (listed.body.length === Object.keys(TOOLS).length) break;
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

    it('keeps nothing of a response cut before any event id, and cancels its call', async () => {
      const url = first.mcpUrl('attacker');
      const session = await requireRawSession(url, { client: '198.51.100.1' });
      const before = await stored([session]);
      await Promise.all(
        Array.from({ length: 4 }, () =>
          cutCall(url, session, toolCall(nextId++, 'big', { ms: 1500 }), { afterMs: 400 }),
        ),
      );
      // Past the moment the calls would have answered, and the archive's flush.
      await sleep(2500);
      const after = await stored([session]);
      console.log(
        `[figures ${dialect}] 4 calls cut before any event: stored ${before.bytes} → ${after.bytes} bytes (${after.rows} rows)`,
      );
      expect(after.bytes).toBe(0);
      // One container runs them in turn: by now every call would have answered. None
      // did; those that started were cancelled (those still queued may be only counted).
      await sleep(4000);
      const outcomes = await invocationErrors('attacker', 'big');
      expect(outcomes.length).toBeGreaterThan(0);
      expect(
        outcomes.every((code) => code === 'ERR_CANCELLED'),
        String(outcomes),
      ).toBe(true);
    }, 60_000);

    it('bounds what one caller keeps of resumable streams, dropping its oldest first', async () => {
      const url = first.mcpUrl('attacker');
      const session = await requireRawSession(url, { client: '198.51.100.2' });
      const cuts = 6;
      const primingIds: string[] = [];
      // One after the other: the order they were cut in is the order they age in.
      for (let index = 0; index < cuts; index += 1) {
        const id = nextId++;
        const primed = await cutCall(url, session, toolCall(id, 'chatty_big', { ms: 1500 }), {
          events: 2,
        });
        expect(primed).toBeDefined();
        primingIds.push(primed!);
      }
      await sleep(2500);
      const held = await stored([session]);
      console.log(
        `[figures ${dialect}] ${cuts} resumable streams of ~${ANSWER_CHARACTERS} bytes cut by one caller: stored ${held.bytes} bytes (${held.rows} rows), bound ${PER_CALLER_BYTES}`,
      );
      expect(held.bytes).toBeLessThanOrEqual(PER_CALLER_BYTES);
      // Resumed on the other replica (PostgreSQL): the newest is there, the oldest is not.
      const resumeUrl = second.mcpUrl('attacker');
      const newest = await resumeRaw(resumeUrl, session, primingIds[cuts - 1]!);
      expect(newest.status).toBe(200);
      expect(newest.body).toContain('xxxxxxxxxx');
      const oldest = await resumeRaw(resumeUrl, session, primingIds[0]!);
      expect(oldest.status).toBe(400);
      expect(errorCodeOf(oldest.body)).toBe('ERR_STREAM_NOT_FOUND');
    }, 60_000);

    it("bounds a server's streams over all its callers, and leaves another server's alone", async () => {
      const attackerUrl = first.mcpUrl('attacker');
      const victimUrl = first.mcpUrl('victim');
      // The victim's own resumable stream, cut first (the oldest of all).
      const victim = await requireRawSession(victimUrl, { client: '192.0.2.10' });
      const victimPriming = await cutCall(
        victimUrl,
        victim,
        toolCall(nextId++, 'chatty_big', { ms: 12_000 }),
        { events: 2 },
      );
      expect(victimPriming).toBeDefined();
      const sdk = await connectSdkSession(first.mcpUrl('victim'));
      const victimCall = async () => {
        const started = performance.now();
        await sdk.client.callTool({ name: 'echo', arguments: { text: 'hi' } });
        return performance.now() - started;
      };
      const idle: number[] = [];
      for (let index = 0; index < 10; index += 1) idle.push(await victimCall());

      // Four callers of the attacker's server, three cut streams each.
      const attackers: RawSession[] = [];
      for (let index = 0; index < 4; index += 1) {
        attackers.push(
          await requireRawSession(attackerUrl, { client: `198.51.100.${20 + index}` }),
        );
      }
      const underAttack: number[] = [];
      const flood = (async () => {
        for (let round = 0; round < 3; round += 1) {
          await Promise.all(
            attackers.map((session) =>
              cutCall(attackerUrl, session, toolCall(nextId++, 'chatty_big', { ms: 1000 }), {
                events: 2,
              }),
            ),
          );
        }
      })();
      while (underAttack.length < 10) underAttack.push(await victimCall());
      await flood;
      await sleep(2000);
      const server = await stored(attackers);
      console.log(
        `[figures ${dialect}] 12 resumable streams cut by 4 callers of one server: stored ${server.bytes} bytes (${server.rows} rows), bound ${PER_SERVER_BYTES}; victim echo median ${median(idle).toFixed(1)} ms idle, ${median(underAttack).toFixed(1)} ms under attack`,
      );
      expect(server.bytes).toBeLessThanOrEqual(PER_SERVER_BYTES);
      // The victim's stream, older than every attacker's, is still resumable.
      const resumed = await resumeRaw(second.mcpUrl('victim'), victim, victimPriming!);
      expect(resumed.status).toBe(200);
      expect(resumed.body).toContain('xxxxxxxxxx');
      await sdk.client.close();
    }, 90_000);

    it('forgets an answered stream once the resume window passed', async () => {
      const url = first.mcpUrl('attacker');
      const session = await requireRawSession(url, { client: '198.51.100.3' });
      const priming = await cutCall(url, session, toolCall(nextId++, 'chatty_big', { ms: 300 }), {
        events: 2,
      });
      expect(priming).toBeDefined();
      if (sql) {
        // Archived while the window runs: another replica could resume it.
        await expect.poll(async () => (await stored([session])).bytes).toBeGreaterThan(0);
      }
      await sleep(RESUME_WINDOW_MS + 1500);
      const after = await stored([session]);
      console.log(
        `[figures ${dialect}] one answered stream, ${RESUME_WINDOW_MS} ms window + 1.5 s later: stored ${after.bytes} bytes (${after.rows} rows)`,
      );
      expect(after.rows).toBe(0);
      const late = await resumeRaw(second.mcpUrl('attacker'), session, priming!);
      expect(late.status).toBe(400);
      expect(errorCodeOf(late.body)).toBe('ERR_STREAM_NOT_FOUND');
    }, 60_000);
  });
}
