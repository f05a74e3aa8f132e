/**
 * What a large tool catalogue costs the replicas and the other tenants
 * (issue 28, finding 2). Two control planes as separate processes on one
 * PostgreSQL database (replica A takes the saves, replica B serves), real
 * containers:
 * - an attacker saves TOOLS tools of ~1 MiB code with large schemas through A
 *   (how many are accepted, the save time), then saves one tool 30 times
 *   (save time on A, time until B serves it, bytes kept in the tool's history);
 * - B's resident memory before and after (VmRSS, and its peak VmHWM);
 * - the size of B's `tools/list` (its first answer, and all pages);
 * - a victim server's `tools/call` median on B, alone and while three
 *   listers walk the attacker's `tools/list` (without a rate limit, or with
 *   the default one: `BENCH_LISTER_LIMIT=default`).
 *
 * `npx tsx bench/tool-catalogue-bench.ts` measures this checkout;
 * `MCPHOST_ROOT=/path/to/other/checkout` measures another (its
 * `control-plane/main.ts` is started); `BENCH_ENV='{"SERVER_ENTRIES_MAX_BYTES":"..."}'`
 * adds settings to both replicas.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { request } from 'undici';
import { readSetting } from '../control-plane/config.js';
import { ensureRunnerImage } from '../control-plane/image-build/ensure-runner-image.js';
import { freePort } from '../test/support/loopback-server.js';
import { onPostgresServer, postgresUrl } from '../test/store/store-targets.js';
import { benchAgent, RawMcpSession } from './raw-mcp-session.js';
import { percentile } from './stats.js';

const TOOLS = Number(process.env.BENCH_TOOLS ?? 150);
const CODE_CHARACTERS = 1_000_000;
const VICTIM_CALLS = 100;
const LISTERS = 3;
const TOKEN = 'bench-admin-token-0123456789abcdef';
const ROOT = resolve(process.env.MCPHOST_ROOT ?? '.');

interface Replica {
  process: ChildProcess;
  port: number;
  dataDir: string;
}

function memoryOf(child: ChildProcess): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)![1]) / 1024;
  return { rssMb: Math.round(field('VmRSS')), peakMb: Math.round(field('VmHWM')) };
}

async function startReplica(databaseUrl: string, image: string): Promise<Replica> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'mcphost-catalogue-bench-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'control-plane/main.ts'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      LISTEN_HOST: '127.0.0.1',
      BASE_DOMAIN: 'localhost',
      PUBLIC_URL_TEMPLATE: `http://{subdomain}.localhost:${port}`,
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      ADMIN_TOKEN: TOKEN,
      MASTER_KEY: Buffer.alloc(32, 9).toString('base64'),
      PLANE_NAME: `catalogue-bench-${port}`,
      RUNNER_IMAGE: image,
      GENERIC_POOL_SIZE: '1',
      POOL_MIN_WARM: '1',
      RATE_LIMIT_PER_MINUTE: '1000000',
      RATE_LIMIT_BURST: '100000',
      LOG_LEVEL: 'warn',
      ...(JSON.parse(process.env.BENCH_ENV ?? '{}') as Record<string, string>),
    },
  });
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      const answer = await request(`http://127.0.0.1:${port}/healthz`, { dispatcher: benchAgent });
      await answer.body.text();
      if (answer.statusCode === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error('replica did not start');
    await sleep(200);
  }
  return { process: child, port, dataDir };
}

async function admin(
  replica: Replica,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: string }> {
  const answer = await request(`http://127.0.0.1:${replica.port}${path}`, {
    method: method as 'GET',
    dispatcher: benchAgent,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: answer.statusCode, body: await answer.body.text() };
}

function session(replica: Replica, subdomain: string): RawMcpSession {
  return new RawMcpSession(
    `http://127.0.0.1:${replica.port}/mcp`,
    `${subdomain}.localhost:${replica.port}`,
  );
}

/** Every page of tools/list: names, page sizes in bytes. */
async function listAll(client: RawMcpSession): Promise<{ names: string[]; pageBytes: number[] }> {
  const names: string[] = [];
  const pageBytes: number[] = [];
  let cursor: string | undefined;
  do {
    const text = await client.request('tools/list', cursor === undefined ? {} : { cursor });
    pageBytes.push(Buffer.byteLength(text));
    const result = JSON.parse(text.startsWith('{') ? text : text.slice(text.indexOf('{'))) as {
      result: { tools: { name: string; description: string }[]; nextCursor?: string };
    };
    names.push(...result.result.tools.map((tool) => tool.name));
    cursor = result.result.nextCursor;
  } while (cursor !== undefined);
  return { names, pageBytes };
}

function attackerTool(index: number, save = 0): Record<string, unknown> {
  return {
    description: `${'d'.repeat(16_000)} ${save}`,
    code: `return ${index}; // ${'x'.repeat(CODE_CHARACTERS)}`,
    inputSchema: {
      type: 'object',
      description: 's'.repeat(60_000),
      properties: { a: { type: 'string' } },
    },
  };
}

async function victimMedian(client: RawMcpSession): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < VICTIM_CALLS; i++) {
    const start = performance.now();
    await client.call('ping');
    times.push(performance.now() - start);
  }
  return percentile(times, 50);
}

async function main(): Promise<void> {
  const image =
    process.env.MCPHOST_TEST_RUNNER_IMAGE ??
    (await ensureRunnerImage({ base: readSetting('runnerBase') }));
  const database = `mcphost_catalogue_bench_${randomBytes(6).toString('hex')}`;
  await onPostgresServer(`CREATE DATABASE ${database}`);
  const replicas: Replica[] = [];
  const report = (line: string) => console.log(line);
  try {
    const a = await startReplica(postgresUrl(database), image);
    replicas.push(a);
    const b = await startReplica(postgresUrl(database), image);
    replicas.push(b);
    report(`measuring ${ROOT} (replicas on ports ${a.port}, ${b.port})`);

    for (const subdomain of ['victim', 'attacker']) {
      if ((await admin(a, 'POST', '/api/servers', { subdomain })).status !== 201) {
        throw new Error(`cannot create ${subdomain}`);
      }
    }
    await admin(a, 'PUT', '/api/servers/victim/tools/ping', {
      description: 'p',
      code: 'return 1;',
    });
    await sleep(1000);
    const victim = session(b, 'victim');
    await victim.open();
    for (let i = 0; i < 20; i++) await victim.call('ping');
    await sleep(2000);
    const before = memoryOf(b.process);
    const aloneBefore = await victimMedian(victim);
    report(
      `replica B before: rss ${before.rssMb} MB; victim tools/call p50 ${aloneBefore.toFixed(1)} ms`,
    );

    const saveTimes: number[] = [];
    const statuses = new Map<number, number>();
    let refusal = '';
    for (let i = 0; i < TOOLS; i++) {
      const start = performance.now();
      const saved = await admin(
        a,
        'PUT',
        `/api/servers/attacker/tools/t${String(i).padStart(3, '0')}`,
        attackerTool(i),
      );
      saveTimes.push(performance.now() - start);
      statuses.set(saved.status, (statuses.get(saved.status) ?? 0) + 1);
      if (saved.status !== 201 && refusal === '') refusal = saved.body.slice(0, 300);
    }
    const accepted = statuses.get(201) ?? 0;
    report(
      `attacker saves: ${[...statuses].map(([s, n]) => `${n}×${s}`).join(', ')}; save p50 ${percentile(saveTimes, 50).toFixed(0)} ms, last 10 p50 ${percentile(saveTimes.slice(-10), 50).toFixed(0)} ms`,
    );
    if (refusal) report(`first refusal: ${refusal}`);

    const lister = session(b, 'attacker');
    await lister.open();
    const served = Date.now() + 120_000;
    let listing = await listAll(lister);
    while (listing.names.length < accepted && Date.now() < served) {
      await sleep(500);
      listing = await listAll(lister);
    }
    const total = listing.pageBytes.reduce((sum, bytes) => sum + bytes, 0);
    report(
      `tools/list on B: ${listing.names.length} tools in ${listing.pageBytes.length} page(s); first answer ${(listing.pageBytes[0]! / 1e6).toFixed(2)} MB, all pages ${(total / 1e6).toFixed(2)} MB`,
    );
    await sleep(3000);
    const loaded = memoryOf(b.process);
    report(`replica B with the catalogue: rss ${loaded.rssMb} MB (peak ${loaded.peakMb} MB)`);

    // Version churn: one tool saved 30 times.
    const churn: number[] = [];
    const servedOnB: number[] = [];
    for (let save = 1; save <= 30; save++) {
      const start = performance.now();
      await admin(a, 'PUT', '/api/servers/attacker/tools/t000', attackerTool(0, save));
      churn.push(performance.now() - start);
      // Until B lists the new description (t000 is on the first page).
      for (;;) {
        const text = await lister.request('tools/list', {});
        if (text.includes(`${'d'.repeat(16)}`) && text.includes(`d ${save}"`)) break;
        if (performance.now() - start > 60_000) throw new Error('B never served the save');
        await sleep(5);
      }
      servedOnB.push(performance.now() - start);
    }
    const client = new pg.Client({ connectionString: postgresUrl(database) });
    client.on('error', () => undefined);
    await client.connect();
    const versions = await client
      .query(
        "select count(*)::int as rows, sum(octet_length(v.definition))::bigint as bytes from server_entry_versions v join server_entries e on e.id = v.entry_id where e.kind = 'tool' and e.name = $1",
        ['t000'],
      )
      .finally(() => client.end());
    report(
      `30 saves of one tool: save p50 ${percentile(churn, 50).toFixed(0)} ms on A, served by B after p50 ${percentile(servedOnB, 50).toFixed(0)} ms; its history keeps ${versions.rows[0].rows} rows, ${(Number(versions.rows[0].bytes) / 1e6).toFixed(1)} MB`,
    );

    // BENCH_LISTER_LIMIT=default: the listers' server keeps the default rate
    // limit (600 a minute, bursts of 60, for each caller); else none.
    const limited = process.env.BENCH_LISTER_LIMIT === 'default';
    if (limited) {
      const patched = await admin(a, 'PATCH', '/api/servers/attacker/settings', {
        rateLimit: { perMinute: 600, burst: 60 },
      });
      if (patched.status !== 200) throw new Error(`rate limit not set: ${patched.body}`);
      await sleep(1000);
    }
    let walking = true;
    const pageTimes: number[] = [];
    let refusals = 0;
    const listers = Array.from({ length: LISTERS }, async () => {
      const own = session(b, 'attacker');
      await own.open();
      while (walking) {
        const start = performance.now();
        try {
          await listAll(own);
          pageTimes.push(performance.now() - start);
        } catch {
          // Refused (429): an attacker just asks again.
          refusals++;
        }
      }
    });
    await sleep(500);
    const underLoad = await victimMedian(victim);
    walking = false;
    await Promise.all(listers);
    const after = memoryOf(b.process);
    report(
      `victim tools/call p50 on B: alone ${aloneBefore.toFixed(1)} ms, with ${LISTERS} listers${limited ? ' (default rate limit)' : ''} ${underLoad.toFixed(1)} ms; the listers walked the list ${pageTimes.length} times (p50 ${percentile(pageTimes, 50).toFixed(0)} ms a walk), ${refusals} refused; replica B rss ${after.rssMb} MB (peak ${after.peakMb} MB)`,
    );
  } finally {
    for (const replica of replicas) {
      if (replica.process.exitCode === null) {
        const exited = new Promise((done) => replica.process.once('exit', done));
        replica.process.kill('SIGTERM');
        await exited;
      }
      rmSync(replica.dataDir, { recursive: true, force: true });
    }
    await onPostgresServer(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await benchAgent.close();
  }
}

await main();
