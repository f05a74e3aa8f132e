/**
 * Opens the Kysely instance behind the store: embedded SQLite (better-sqlite3,
 * WAL, busy timeout, foreign keys on) in `<dataDir>/mcphost.db` by default, or
 * PostgreSQL (pg pool) when a database URL is given; then brings the schema up
 * to date with Kysely's Migrator.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { McphostError } from '../errors.js';
import type { StoreDatabase } from './database-schema.js';
import { storeMigrations } from './migrations/index.js';

export type StoreDialectName = 'sqlite' | 'postgres';

/** How long a SQLite writer waits for another process's lock, in milliseconds. */
const SQLITE_BUSY_TIMEOUT_MS = 5000;
/** Connections in the PostgreSQL pool (the change listener holds one more). */
const POSTGRES_POOL_SIZE = 10;

/** File name of the embedded database inside the data directory. */
export const SQLITE_FILE_NAME = 'mcphost.db';

export interface OpenedDatabase {
  readonly db: Kysely<StoreDatabase>;
  readonly dialect: StoreDialectName;
}

/** Opens and migrates the database; `databaseUrl` selects PostgreSQL, else SQLite in `dataDir`. */
export async function openStoreDatabase(options: {
  dataDir: string;
  databaseUrl?: string;
  log: (message: string) => void;
  /** False for tools (backup, token rotation): the store must exist and match this version. */
  migrate?: boolean;
}): Promise<OpenedDatabase> {
  if (options.migrate === false && options.databaseUrl === undefined) {
    const file = path.join(options.dataDir, SQLITE_FILE_NAME);
    if (!existsSync(file)) {
      throw new McphostError(
        'ERR_STORE',
        `no embedded store at ${file}: set DATA_DIR (or DATABASE_URL) to the store the service uses`,
      );
    }
  }
  const opened =
    options.databaseUrl === undefined
      ? openSqlite(options.dataDir)
      : openPostgres(options.databaseUrl, options.log);
  try {
    if (options.migrate === false) await requireCurrentSchema(opened);
    else await migrate(opened);
  } catch (error) {
    await opened.db.destroy().catch(() => undefined);
    throw error;
  }
  return opened;
}

function openSqlite(dataDir: string): OpenedDatabase {
  const file = path.join(dataDir, SQLITE_FILE_NAME);
  let database: SqliteDatabase.Database;
  try {
    mkdirSync(dataDir, { recursive: true });
    database = new SqliteDatabase(file);
    database.pragma('journal_mode = WAL');
    database.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
    // Cascading deletes rely on it; SQLite leaves it off per connection by default.
    database.pragma('foreign_keys = ON');
    // WAL + NORMAL is durable across application crashes and much faster than FULL.
    database.pragma('synchronous = NORMAL');
  } catch (error) {
    throw new McphostError(
      'ERR_STORE',
      `cannot open the embedded database ${file}: ${messageOf(error)}`,
      {
        cause: error,
      },
    );
  }
  return {
    db: new Kysely<StoreDatabase>({ dialect: new SqliteDialect({ database }) }),
    dialect: 'sqlite',
  };
}

function openPostgres(databaseUrl: string, log: (message: string) => void): OpenedDatabase {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: POSTGRES_POOL_SIZE });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', (error) => log(`store: PostgreSQL pool error: ${error.message}`));
  return {
    db: new Kysely<StoreDatabase>({ dialect: new PostgresDialect({ pool }) }),
    dialect: 'postgres',
  };
}

async function migrate(opened: OpenedDatabase): Promise<void> {
  const migrator = new Migrator({
    db: opened.db,
    provider: storeMigrations(opened.dialect),
    migrationTableName: 'mcphost_migrations',
    migrationLockTableName: 'mcphost_migrations_lock',
  });
  await refuseNewerSchema(opened);
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName;
    throw new McphostError(
      'ERR_STORE',
      `cannot prepare the ${opened.dialect} database${failed ? ` (migration ${failed})` : ''}: ${messageOf(error)}`,
      { cause: error },
    );
  }
}

/**
 * For tools that must not change a store's schema: the store is exactly what
 * this version writes (a newer one is refused as at start; an older one has
 * not been migrated by the service of this version yet).
 */
async function requireCurrentSchema(opened: OpenedDatabase): Promise<void> {
  await refuseNewerSchema(opened);
  const known = Object.keys(await storeMigrations(opened.dialect).getMigrations());
  const applied = await sql<{ name: string }>`select name from mcphost_migrations`
    .execute(opened.db)
    .then((result) => result.rows.map((row) => row.name))
    .catch(() => [] as string[]);
  const missing = known.filter((name) => !applied.includes(name));
  if (missing.length > 0) {
    throw new McphostError(
      'ERR_STORE',
      `this ${opened.dialect} store is older than this version (it lacks ${missing.join(', ')}): run this with the version the service runs, or start this version's service once to migrate it`,
    );
  }
}

/** The meta key naming the mcphost version that last opened the store. */
export const WRITTEN_BY_META_KEY = 'mcphost_version';

/**
 * A database migrated by a newer mcphost is refused with what to do, instead
 * of Kysely's "corrupted migrations": running an old version on a newer
 * schema (a rollback without its backup) would misread what it stores.
 */
async function refuseNewerSchema(opened: OpenedDatabase): Promise<void> {
  let applied: string[];
  try {
    const { rows } = await sql<{ name: string }>`select name from mcphost_migrations`.execute(
      opened.db,
    );
    applied = rows.map((row) => row.name);
  } catch {
    return; // a new database: no migration table yet
  }
  const known = Object.keys(await storeMigrations(opened.dialect).getMigrations());
  const unknown = applied.filter((name) => !known.includes(name)).sort();
  if (unknown.length === 0) return;
  const writer = await sql<{
    value: string;
  }>`select value from meta where key = ${WRITTEN_BY_META_KEY}`
    .execute(opened.db)
    .then((result) => result.rows[0]?.value)
    .catch(() => undefined);
  throw new McphostError(
    'ERR_STORE',
    `this ${opened.dialect} database belongs to a newer mcphost${writer ? ` (${writer})` : ''}: its schema has ${unknown.join(', ')}, which this version (${known.at(-1)}) does not know. Run that version or newer, or restore the backup taken before the upgrade into a fresh store (npm run restore)`,
  );
}

/** A printable message of anything thrown. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) {
    // pg's AggregateError (IPv4 + IPv6 attempts) has an empty message of its own.
    if (error.message === '' && error instanceof AggregateError && error.errors.length > 0) {
      return messageOf(error.errors[0]);
    }
    return error.message;
  }
  return String(error);
}
