/**
 * The two databases the store suite runs against, behind one shape: a fresh
 * SQLite data directory, or a uniquely named PostgreSQL database created on
 * the local server (PGHOST/PGPORT/PGUSER/PGPASSWORD may override) and dropped
 * afterwards. `raw` reads and writes behind the store's back, to check what is
 * really stored and to plant failures.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, type Dialect } from 'kysely';
import pg from 'pg';
import { openStore, type Store, type StoreOptions } from '../../control-plane/store/index.js';
import { storeMigrations } from '../../control-plane/store/migrations/index.js';

export interface StoreTarget {
  readonly dialect: 'sqlite' | 'postgres';
  /** Creates the empty database. */
  setup(): Promise<void>;
  /** Drops the database and removes the data directory. */
  teardown(): Promise<void>;
  /** Opens a store on it; options override the defaults (a fixed master key). */
  open(options?: Partial<StoreOptions>): Promise<Store>;
  /** Runs SQL directly against the database (`?` placeholders for both dialects). */
  raw(statement: string, values?: unknown[]): Promise<Record<string, unknown>[]>;
  /** Makes inserts into a definition's history fail when its description is 'explode'. */
  plantToolVersionFailure(): Promise<void>;
  /** Brings the database to the schema of the store's migration `name` (an older mcphost's). */
  migrateTo(name: string): Promise<void>;
  readonly dataDir: string;
}

/** A fixed 32-byte key for tests. */
export const TEST_MASTER_KEY = Buffer.alloc(32, 7);

/** Runs the store's migrations up to `name` as the store runs them (same bookkeeping tables). */
async function migrateWith(
  dialect: Dialect,
  name: StoreTarget['dialect'],
  upTo: string,
): Promise<void> {
  const db = new Kysely<unknown>({ dialect });
  try {
    const migrator = new Migrator({
      db,
      provider: storeMigrations(name),
      migrationTableName: 'mcphost_migrations',
      migrationLockTableName: 'mcphost_migrations_lock',
    });
    const { error } = await migrator.migrateTo(upTo);
    if (error !== undefined) throw error;
  } finally {
    await db.destroy();
  }
}

function newDataDir(): string {
  return mkdtempSync(path.join(tmpdir(), 'mcphost-store-test-'));
}

/** SQLite in a temporary data directory. */
export function sqliteTarget(): StoreTarget {
  const dataDir = newDataDir();
  return {
    dialect: 'sqlite',
    dataDir,
    async setup() {},
    async teardown() {
      rmSync(dataDir, { recursive: true, force: true });
    },
    open: (options) => openStore({ dataDir, masterKey: TEST_MASTER_KEY, ...options }),
    async raw(statement, values = []) {
      const database = new SqliteDatabase(path.join(dataDir, 'mcphost.db'));
      try {
        database.pragma('busy_timeout = 5000');
        const prepared = database.prepare(statement);
        if (prepared.reader) return prepared.all(...values) as Record<string, unknown>[];
        prepared.run(...values);
        return [];
      } finally {
        database.close();
      }
    },
    async migrateTo(name) {
      const database = new SqliteDatabase(path.join(dataDir, 'mcphost.db'));
      database.pragma('foreign_keys = ON');
      await migrateWith(new SqliteDialect({ database }), 'sqlite', name);
    },
    async plantToolVersionFailure() {
      await this.raw(
        `CREATE TRIGGER explode BEFORE INSERT ON server_entry_versions WHEN NEW.definition LIKE '%"description":"explode"%'
         BEGIN SELECT RAISE(ABORT, 'planted failure'); END`,
      );
    },
  };
}

/** Connection settings of the local PostgreSQL server for one database. */
export function postgresUrl(database: string): string {
  const url = new URL('postgres://localhost');
  url.hostname = process.env.PGHOST ?? '127.0.0.1';
  url.port = process.env.PGPORT ?? '5432';
  url.username = process.env.PGUSER ?? 'postgres';
  if (process.env.PGPASSWORD) url.password = process.env.PGPASSWORD;
  url.pathname = `/${database}`;
  return url.toString();
}

/** Runs one statement on the server's `postgres` database (CREATE/DROP DATABASE). */
export async function onPostgresServer(statement: string): Promise<void> {
  await withPostgres('postgres', (client) => client.query(statement));
}

/** Runs `statement` in `database` (a test's own), e.g. to make a table fail on purpose. */
export async function onPostgresDatabase(database: string, statement: string): Promise<void> {
  await withPostgres(database, (client) => client.query(statement));
}

async function withPostgres<T>(
  database: string,
  body: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: postgresUrl(database) });
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end();
  }
}

/** A uniquely named PostgreSQL database. */
export function postgresTarget(): StoreTarget {
  const database = `mcphost_store_test_${randomBytes(6).toString('hex')}`;
  const dataDir = newDataDir();
  return {
    dialect: 'postgres',
    dataDir,
    async setup() {
      await withPostgres('postgres', (client) => client.query(`CREATE DATABASE ${database}`));
    },
    async teardown() {
      await withPostgres('postgres', (client) =>
        client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`),
      );
      rmSync(dataDir, { recursive: true, force: true });
    },
    open: (options) =>
      openStore({
        dataDir,
        databaseUrl: postgresUrl(database),
        masterKey: TEST_MASTER_KEY,
        ...options,
      }),
    async raw(statement, values = []) {
      let index = 0;
      const numbered = statement.replace(/\?/g, () => `$${++index}`);
      return withPostgres(database, async (client) => (await client.query(numbered, values)).rows);
    },
    async migrateTo(name) {
      const pool = new pg.Pool({ connectionString: postgresUrl(database), max: 1 });
      await migrateWith(new PostgresDialect({ pool }), 'postgres', name);
    },
    async plantToolVersionFailure() {
      await this.raw(`CREATE FUNCTION explode() RETURNS trigger AS $$
        BEGIN IF NEW.definition LIKE '%"description":"explode"%' THEN RAISE EXCEPTION 'planted failure'; END IF; RETURN NEW; END
        $$ LANGUAGE plpgsql`);
      await this.raw(
        'CREATE TRIGGER explode BEFORE INSERT ON server_entry_versions FOR EACH ROW EXECUTE FUNCTION explode()',
      );
    },
  };
}

/** A minimal valid tool definition. */
export function sampleTool(overrides: Record<string, unknown> = {}) {
  return {
    description: 'Adds two numbers',
    code: 'return params.a + params.b;',
    parameters: [
      { name: 'a', type: 'number' as const, required: true, description: 'first' },
      { name: 'b', type: 'number' as const, required: false },
    ],
    secrets: ['API_KEY'],
    limits: { timeoutMs: 5000 },
    ...overrides,
  };
}

/** An invocation entry with the given fields. */
export function sampleInvocation(index: number, overrides: Record<string, unknown> = {}) {
  return {
    id: `inv-${index}`,
    at: new Date(Date.UTC(2030, 0, 1, 0, 0, index)).toISOString(),
    server: 'alpha',
    tool: 'add',
    version: 1,
    durationMs: 12.6,
    ok: true,
    ...overrides,
  };
}
