/**
 * Backups of the store as one JSON document, the same for SQLite and
 * PostgreSQL (a backup of one restores into the other): every configuration
 * table's rows as stored — secrets stay encrypted under the master key, which
 * a backup never holds — and the migrations the rows were written under. The
 * invocation log is not configuration and is left out, and so is the meta
 * table: a restore must not install another deployment's admin token.
 *
 * A restore refuses a store that already holds servers unless told to replace
 * them, refuses a backup written by a newer schema, checks that this process's
 * master key decrypts the backup's secrets before writing anything, and
 * writes everything in one transaction: it fails whole, loudly, or succeeds.
 * A backup taken before tools became entries (migration 0013) has its tools
 * moved as the migration moved the store's.
 */
import { sql, type Kysely } from 'kysely';
import { McphostError } from '../errors.js';
import type { StoreDatabase } from './database-schema.js';
import { storeMigrations } from './migrations/index.js';
import { storeFailure, writeOperation, type StoreContext } from './store-context.js';
import {
  MalformedToolRow,
  toolEntryRow,
  toolEntryVersionRow,
  type LegacyToolRow,
  type LegacyToolVersionRow,
} from './legacy-tool-rows.js';

/** Tables in the order a restore inserts them (parents before children). */
const TABLES = [
  'servers',
  'secrets',
  'pool_settings',
  'server_entries',
  'server_entry_versions',
] as const satisfies readonly (keyof StoreDatabase)[];
type BackedUpTable = (typeof TABLES)[number];

/** What `npm run backup` writes. */
export interface StoreBackup {
  format: 'mcphost-backup';
  formatVersion: 1;
  createdAt: string;
  /** Migrations applied to the store the rows come from. */
  migrations: string[];
  tables: Record<BackedUpTable, Record<string, unknown>[]>;
}

/** Reads every configuration table in one transaction (a consistent snapshot). */
export async function exportBackup(context: StoreContext): Promise<StoreBackup> {
  try {
    // One snapshot of every table (PostgreSQL's default, read committed, would
    // give each SELECT its own: a tool saved meanwhile could lack its server).
    return await context.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute(async (trx) => {
        const tables = {} as StoreBackup['tables'];
        for (const table of TABLES) {
          tables[table] = (await trx.selectFrom(table).selectAll().execute()) as Record<
            string,
            unknown
          >[];
        }
        return {
          format: 'mcphost-backup',
          formatVersion: 1,
          createdAt: context.now(),
          migrations: await appliedMigrations(trx),
          tables,
        };
      });
  } catch (error) {
    throw storeFailure('writing a backup', error);
  }
}

/**
 * Writes a backup into the store. `replace`: delete what the store holds
 * first (else a store holding any server is refused). The store's own master
 * key must decrypt the backup's secrets.
 */
export async function importBackup(
  context: StoreContext,
  backup: unknown,
  options: { replace: boolean },
): Promise<{ servers: number; tools: number; secrets: number }> {
  const checked = await checkBackup(context, backup);
  const { cipher } = context;
  const secrets = checked.tables.secrets;
  for (const secret of secrets) {
    try {
      cipher.decrypt(String(secret.server_id), String(secret.name), String(secret.ciphertext));
    } catch (error) {
      throw new McphostError(
        'ERR_VALIDATION',
        "the backup's secrets do not decrypt with this master key: set MASTER_KEY to the key of the store the backup was taken from (or put its master.key in DATA_DIR) and restore again; nothing was written",
        { cause: error },
      );
    }
  }
  // One write like any other: a failure changes nothing, and every replica
  // (this one too) hears "everything changed" once it committed.
  await writeOperation(
    context,
    'restoring a backup',
    { subdomain: null, kind: 'resync' },
    async (trx) => {
      const present = await trx
        .selectFrom('servers')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .executeTakeFirstOrThrow();
      if (Number(present.count) > 0 && !options.replace) {
        throw new McphostError(
          'ERR_CONFLICT',
          `the store already holds ${present.count} server(s): restore into an empty store, or pass --replace to delete what it holds first; nothing was written`,
        );
      }
      // Children first, so foreign keys never see an orphan on the way.
      for (const table of [...TABLES].reverse()) await trx.deleteFrom(table).execute();
      for (const table of TABLES) {
        const rows = checked.tables[table];
        for (let start = 0; start < rows.length; start += 200) {
          await trx
            .insertInto(table)
            .values(rows.slice(start, start + 200) as never)
            .execute();
        }
      }
    },
  );
  return {
    servers: checked.tables.servers.length,
    tools: checked.tables.server_entries.filter((row) => row.kind === 'tool').length,
    secrets: secrets.length,
  };
}

async function checkBackup(context: StoreContext, backup: unknown): Promise<StoreBackup> {
  const candidate = backup as Partial<StoreBackup> | null;
  const notABackup = () =>
    new McphostError(
      'ERR_VALIDATION',
      'not an mcphost backup (format "mcphost-backup", version 1, with every table): nothing was written',
    );
  if (
    candidate === null ||
    typeof candidate !== 'object' ||
    candidate.format !== 'mcphost-backup' ||
    candidate.formatVersion !== 1 ||
    !Array.isArray(candidate.migrations) ||
    typeof candidate.tables !== 'object' ||
    candidate.tables === null
  ) {
    throw notABackup();
  }
  const known = Object.keys(await storeMigrations(context.dialect).getMigrations());
  const unknown = candidate.migrations.filter((name) => !known.includes(String(name)));
  if (unknown.length > 0) {
    throw new McphostError(
      'ERR_VALIDATION',
      `the backup was taken from a newer mcphost (its schema has ${unknown.join(', ')}, which this version does not know): restore it with that version or newer; nothing was written`,
    );
  }
  const tables = withToolsAsEntries(
    candidate.tables as Record<string, unknown>,
    candidate.migrations.includes(TOOLS_AS_ENTRIES),
  );
  if (!TABLES.every((table) => Array.isArray(tables[table]))) throw notABackup();
  return { ...candidate, tables } as StoreBackup;
}

async function appliedMigrations(db: Kysely<StoreDatabase>): Promise<string[]> {
  const { rows } = await sql<{
    name: string;
  }>`select name from mcphost_migrations order by name`.execute(db);
  return rows.map((row) => row.name);
}

/** The migration after which tools are entries, and before which a backup holds `tools`. */
const TOOLS_AS_ENTRIES = '0013-tools-as-entries';

/**
 * The tables of a backup, those of one taken before migration 0013 with its
 * `tools` and `tool_versions` rows moved into `server_entries` and
 * `server_entry_versions` as the migration moves a store's. Each moved row
 * is checked: a malformed one refuses the restore, naming it.
 */
function withToolsAsEntries(
  tables: Record<string, unknown>,
  toolsAreEntries: boolean,
): Record<string, unknown> {
  const { tools, tool_versions: versions, ...rest } = tables;
  if (toolsAreEntries) {
    if (tools === undefined && versions === undefined) return tables;
    throw new McphostError(
      'ERR_VALIDATION',
      'the backup holds "tools" or "tool_versions", which its schema (with 0013-tools-as-entries) does not have: nothing was written',
    );
  }
  if (!Array.isArray(tools) || !Array.isArray(versions)) {
    throw new McphostError(
      'ERR_VALIDATION',
      'the backup was taken before tools became entries (0013-tools-as-entries) but lacks the "tools" or "tool_versions" table: nothing was written',
    );
  }
  try {
    return {
      ...rest,
      server_entries: [
        ...(Array.isArray(rest.server_entries) ? rest.server_entries : []),
        ...(tools as LegacyToolRow[]).map(toolEntryRow),
      ],
      server_entry_versions: [
        ...(Array.isArray(rest.server_entry_versions) ? rest.server_entry_versions : []),
        ...(versions as LegacyToolVersionRow[]).map(toolEntryVersionRow),
      ],
    };
  } catch (error) {
    if (!(error instanceof MalformedToolRow)) throw error;
    throw new McphostError(
      'ERR_VALIDATION',
      `the backup's tools cannot be read (${error.message}): nothing was written`,
      { cause: error },
    );
  }
}
