/**
 * `npx tsx bench/cut-stream-flood-bench.ts`: what one caller of an open server
 * leaves in PostgreSQL by cutting its responses mid-call (issue 28, finding 3)
 * and by opening sessions (finding 5), at the default settings, and what that
 * costs another tenant's calls. One control plane on a fresh PostgreSQL
 * database. The attacker makes CUTS (default 150) calls of ~900 kB answers,
 * four at once, half cut before any event id and half once their stream is
 * resumable; the store's bytes of its streams are sampled throughout. Then
 * INITIALIZES (default 200) initializes from one caller: the rows stored, and
 * how many of those sessions still answer. Another server's client (the
 * official SDK) calls a tool alone, then during the cut calls. Not a test:
 * the figures are printed.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { readSetting } from '../control-plane/config.js';
import { ensureRunnerImage } from '../control-plane/image-build/ensure-runner-image.js';
import { onPostgresServer, postgresUrl } from '../test/store/store-targets.js';
import { startTestControlPlane } from '../test/support/control-plane.js';
import {
  cutCall,
  openRawSession,
  postRaw,
  requireRawSession,
  toolCall,
  type RawSession,
} from '../test/support/raw-mcp-session.js';
import { connectSdkSession } from '../test/support/sdk-session.js';

const CUTS = Number(process.env.CUTS ?? 150);
const INITIALIZES = Number(process.env.INITIALIZES ?? 200);
const AT_ONCE = 4;
const ANSWER_CHARACTERS = 900_000;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

async function main(): Promise<void> {
  process.env.MCPHOST_TEST_RUNNER_IMAGE ??= await ensureRunnerImage({
    base: readSetting('runnerBase'),
    log: () => undefined,
  });
  const database = `mcphost_cut_bench_${randomBytes(6).toString('hex')}`;
  await onPostgresServer(`CREATE DATABASE ${database}`);
  const plane = await startTestControlPlane({
    DATABASE_URL: postgresUrl(database),
    TRUSTED_PROXIES: '127.0.0.1',
    RATE_LIMIT_BURST: '100000',
    RATE_LIMIT_PER_MINUTE: '1000000',
  });
  const sql = new pg.Client({ connectionString: postgresUrl(database) });
  await sql.connect();
  try {
    for (const server of ['attacker', 'victim']) {
      await plane.admin('POST', '/api/servers', { subdomain: server });
      for (const [name, code] of Object.entries({
        big: `await new Promise((r) => setTimeout(r, 1000)); return 'x'.repeat(${ANSWER_CHARACTERS});`,
        chatty_big: `console.log('started'); await new Promise((r) => setTimeout(r, 1000)); return 'x'.repeat(${ANSWER_CHARACTERS});`,
        echo: 'return "echo";',
      })) {
        const saved = await plane.admin('PUT', `/api/servers/${server}/tools/${name}`, {
          description: name,
          code,
          parameters: [],
        });
        if (saved.status !== 201) throw new Error(JSON.stringify(saved.body));
      }
    }
    const victim = await connectSdkSession(plane.mcpUrl('victim'));
    const victimCall = async () => {
      const started = performance.now();
      await victim.client.callTool({ name: 'echo', arguments: {} });
      return performance.now() - started;
    };
    for (let index = 0; index < 10; index += 1) await victimCall(); // warm
    const alone: number[] = [];
    for (let index = 0; index < 30; index += 1) alone.push(await victimCall());

    const url = plane.mcpUrl('attacker');
    const sessions: RawSession[] = [];
    for (let index = 0; index < AT_ONCE; index += 1) {
      sessions.push(await requireRawSession(url, { client: '198.51.100.7' }));
    }
    const storedBytes = async () => {
      const result = await sql.query(
        'select coalesce(sum(octet_length(message)), 0)::bigint as bytes from mcp_stream_events where session_id = any($1)',
        [sessions.map((session) => session.id)],
      );
      return Number(result.rows[0].bytes);
    };
    let peak = 0;
    let attacking = true;
    const sampler = (async () => {
      while (attacking) {
        peak = Math.max(peak, await storedBytes());
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();
    const during: number[] = [];
    const victimLoop = (async () => {
      while (attacking) during.push(await victimCall());
    })();
    const started = performance.now();
    let nextId = 1000;
    for (let done = 0; done < CUTS; done += AT_ONCE) {
      await Promise.all(
        sessions.map((session, index) =>
          (done / AT_ONCE + index) % 2 === 0
            ? cutCall(url, session, toolCall(nextId++, 'big'), { afterMs: 300 })
            : cutCall(url, session, toolCall(nextId++, 'chatty_big'), { events: 2 }),
        ),
      );
    }
    const attackMs = performance.now() - started;
    // Every call answered by now (one second each), and the archive flushed.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const afterAnswers = await storedBytes();
    attacking = false;
    await Promise.all([sampler, victimLoop]);

    const flooder = '198.51.100.8';
    const opened: RawSession[] = [];
    for (let index = 0; index < INITIALIZES; index += 1) {
      const each = await openRawSession(url, { client: flooder });
      if (!('refused' in each)) opened.push(each);
    }
    const rows = Number(
      (
        await sql.query(
          'select count(*)::int as rows from mcp_sessions where subdomain = $1 and quota_key = $2',
          ['attacker', JSON.stringify(['ip', flooder])],
        )
      ).rows[0].rows,
    );
    let answering = 0;
    for (const session of opened) {
      const response = await postRaw(url, session, {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
      });
      await response.text();
      if (response.status === 200) answering += 1;
    }

    console.log(`cut calls: ${CUTS} (${AT_ONCE} at once) in ${(attackMs / 1000).toFixed(1)} s`);
    console.log(
      `  attacker's streams in the store: peak ${mb(peak)}, after the answers ${mb(afterAnswers)}`,
    );
    console.log(
      `  victim echo median: ${median(alone).toFixed(1)} ms alone, ${median(during).toFixed(1)} ms during (${during.length} calls)`,
    );
    console.log(
      `initializes of one caller: ${INITIALIZES}; ${opened.length} opened, ${rows} rows stored, ${answering} still answer`,
    );
    await victim.client.close();
  } finally {
    await sql.end();
    await plane.close();
    await onPostgresServer(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  }
}

await main();
