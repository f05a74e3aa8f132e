/**
 * Store benchmark: the embedded SQLite store and the configuration cache on
 * the hot path, each against a baseline measured in the same run:
 *
 * - open (fresh: the schema is created; existing: it is checked) against
 *   better-sqlite3 opening a database file with the same pragmas, no schema;
 * - the cache's start over 20 servers × 10 tools with a secret each (every
 *   row read, parsed, secrets decrypted) against reading the same tables'
 *   rows with better-sqlite3 directly;
 * - a cached tool lookup against the same two-level lookup on plain Maps.
 *
 * Every loop is bounded; nothing passes or fails on time.
 * Runnable alone: `npx tsx bench/store-bench.ts`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import SqliteDatabase from 'better-sqlite3';
import { ConfigCache, openStore, type Store } from '../control-plane/store/index.js';
import { percentile } from './stats.js';

/** Figures of one run: medians in ms, lookups in ns, ratios store / baseline. */
export interface StoreBenchFigures {
  freshOpen: { storeMs: number; rawMs: number; ratio: number };
  existingOpen: { storeMs: number; rawMs: number; ratio: number };
  cacheStart: { servers: number; tools: number; storeMs: number; rawMs: number; ratio: number };
  lookup: { lookups: number; cacheNs: number; mapNs: number; ratio: number; perSecond: number };
}

const SERVERS = 20;
const TOOLS_PER_SERVER = 10;
const OPEN_SAMPLES = 7;
const CACHE_START_SAMPLES = 7;
const LOOKUPS = 1_000_000;
const MASTER_KEY = Buffer.alloc(32, 7);
/** The embedded database's file name inside the data directory. */
const DATABASE_FILE = 'mcphost.db';

/** Runs the store benchmark, reporting one line per figure. */
export async function runStoreBench(report: (line: string) => void): Promise<StoreBenchFigures> {
  const dirs: string[] = [];
  const newDir = () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mcphost-store-bench-'));
    dirs.push(dir);
    return dir;
  };
  try {
    const freshOpen = await measureFreshOpen(newDir);
    report(
      `open, fresh (schema created): median ${ms(freshOpen.storeMs)} | raw SQLite open ${ms(freshOpen.rawMs)} | ${freshOpen.ratio.toFixed(1)}×`,
    );
    const dataDir = newDir();
    await fill(dataDir);
    const existingOpen = await measureExistingOpen(dataDir);
    report(
      `open, existing: median ${ms(existingOpen.storeMs)} | raw SQLite open ${ms(existingOpen.rawMs)} | ${existingOpen.ratio.toFixed(1)}×`,
    );
    const store = await openStore({ dataDir, masterKey: MASTER_KEY });
    try {
      const cacheStart = await measureCacheStart(store, dataDir);
      report(
        `cache start (${SERVERS} servers × ${TOOLS_PER_SERVER} tools + secrets): median ${ms(cacheStart.storeMs)} | raw row read ${ms(cacheStart.rawMs)} | ${cacheStart.ratio.toFixed(1)}×`,
      );
      const lookup = await measureLookup(store);
      report(
        `cached tool lookup: ${lookup.cacheNs.toFixed(0)} ns (${(lookup.perSecond / 1e6).toFixed(1)} M/s) | plain Map lookup ${lookup.mapNs.toFixed(0)} ns | ${lookup.ratio.toFixed(2)}×`,
      );
      return { freshOpen, existingOpen, cacheStart, lookup };
    } finally {
      await store.close();
    }
  } finally {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

/** better-sqlite3 with the store's pragmas and one read: the floor of any open. */
function rawOpen(dataDir: string): void {
  const database = new SqliteDatabase(path.join(dataDir, DATABASE_FILE));
  database.pragma('journal_mode = WAL');
  database.pragma('busy_timeout = 5000');
  database.pragma('foreign_keys = ON');
  database.pragma('synchronous = NORMAL');
  database.prepare('SELECT 1').get();
  database.close();
}

async function measureFreshOpen(newDir: () => string): Promise<StoreBenchFigures['freshOpen']> {
  const store: number[] = [];
  const raw: number[] = [];
  // Alternated, so machine noise hits both alike.
  for (let sample = 0; sample < OPEN_SAMPLES; sample++) {
    const dataDir = newDir();
    let started = performance.now();
    const opened = await openStore({ dataDir, masterKey: MASTER_KEY });
    store.push(performance.now() - started);
    await opened.close();
    const rawDir = newDir();
    started = performance.now();
    rawOpen(rawDir);
    raw.push(performance.now() - started);
  }
  return ratioOf(store, raw);
}

async function measureExistingOpen(dataDir: string): Promise<StoreBenchFigures['existingOpen']> {
  const store: number[] = [];
  const raw: number[] = [];
  for (let sample = 0; sample < OPEN_SAMPLES; sample++) {
    let started = performance.now();
    const opened = await openStore({ dataDir, masterKey: MASTER_KEY });
    store.push(performance.now() - started);
    await opened.close();
    started = performance.now();
    rawOpen(dataDir);
    raw.push(performance.now() - started);
  }
  return ratioOf(store, raw);
}

/** 20 servers of 10 tools and one secret each, written through the store. */
async function fill(dataDir: string): Promise<void> {
  const store = await openStore({ dataDir, masterKey: MASTER_KEY });
  try {
    for (let server = 0; server < SERVERS; server++) {
      const subdomain = `bench-${server}`;
      await store.createServer({ subdomain });
      for (let tool = 0; tool < TOOLS_PER_SERVER; tool++) {
        await store.saveTool(subdomain, `tool-${tool}`, {
          description: 'Adds two numbers',
          code: 'return params.a + params.b;',
          parameters: [
            { name: 'a', type: 'number', required: true, description: 'first' },
            { name: 'b', type: 'number', required: false },
          ],
          secrets: ['API_KEY'],
          limits: { timeoutMs: 5000 },
        });
      }
      await store.putSecret(subdomain, 'API_KEY', 'value');
    }
  } finally {
    await store.close();
  }
}

async function measureCacheStart(
  store: Store,
  dataDir: string,
): Promise<StoreBenchFigures['cacheStart']> {
  const started: number[] = [];
  const raw: number[] = [];
  const database = new SqliteDatabase(path.join(dataDir, DATABASE_FILE), { readonly: true });
  try {
    const reads = ['servers', 'server_entries', 'server_entry_versions', 'secrets'].map((table) =>
      database.prepare(`SELECT * FROM ${table}`),
    );
    for (let sample = 0; sample < CACHE_START_SAMPLES; sample++) {
      let begun = performance.now();
      const cache = new ConfigCache(store);
      await cache.start();
      started.push(performance.now() - begun);
      const tools = cache.tools('bench-0').length;
      cache.stop();
      if (tools !== TOOLS_PER_SERVER)
        throw new Error(`the cache holds ${tools} tools of bench-0, not ${TOOLS_PER_SERVER}`);
      begun = performance.now();
      for (const read of reads) read.all();
      raw.push(performance.now() - begun);
    }
  } finally {
    database.close();
  }
  return { servers: SERVERS, tools: SERVERS * TOOLS_PER_SERVER, ...ratioOf(started, raw) };
}

async function measureLookup(store: Store): Promise<StoreBenchFigures['lookup']> {
  const cache = new ConfigCache(store);
  await cache.start();
  try {
    // The same two-level shape the cache keeps: server → (tool name → record).
    const plain = new Map<string, Map<string, unknown>>();
    for (let server = 0; server < SERVERS; server++) {
      const subdomain = `bench-${server}`;
      plain.set(subdomain, new Map(cache.tools(subdomain).map((tool) => [tool.name, tool])));
    }
    const subdomains = Array.from({ length: SERVERS }, (_, server) => `bench-${server}`);
    const names = Array.from({ length: TOOLS_PER_SERVER }, (_, tool) => `tool-${tool}`);
    const cacheNs = nanosecondsPerLookup(
      (index) => cache.tool(subdomains[index % SERVERS]!, names[index % TOOLS_PER_SERVER]!),
      'cache',
    );
    const mapNs = nanosecondsPerLookup(
      (index) => plain.get(subdomains[index % SERVERS]!)?.get(names[index % TOOLS_PER_SERVER]!),
      'Map',
    );
    return { lookups: LOOKUPS, cacheNs, mapNs, ratio: cacheNs / mapNs, perSecond: 1e9 / cacheNs };
  } finally {
    cache.stop();
  }
}

/** Runs `lookup` LOOKUPS times after a warm-up; every lookup must find its tool. */
function nanosecondsPerLookup(lookup: (index: number) => unknown, what: string): number {
  for (let index = 0; index < LOOKUPS / 10; index++) lookup(index);
  let found = 0;
  const started = performance.now();
  for (let index = 0; index < LOOKUPS; index++) if (lookup(index) !== undefined) found++;
  const elapsedMs = performance.now() - started;
  if (found !== LOOKUPS) throw new Error(`${what}: ${LOOKUPS - found} lookups found nothing`);
  return (elapsedMs * 1e6) / LOOKUPS;
}

function ratioOf(
  store: number[],
  raw: number[],
): { storeMs: number; rawMs: number; ratio: number } {
  const storeMs = percentile(store, 50);
  const rawMs = percentile(raw, 50);
  return { storeMs, rawMs, ratio: storeMs / rawMs };
}

function ms(value: number): string {
  return `${value.toFixed(2)} ms`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  runStoreBench((line) => console.log(line)).then(
    (figures) => console.log(JSON.stringify(figures)),
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
