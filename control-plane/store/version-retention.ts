/**
 * How many saved versions of a definition (a tool, a prompt, a resource) the
 * store keeps: every save writes a full snapshot, and without a bound an
 * operator's saves would fill the database every tenant shares. After each
 * save, in its transaction:
 * - the definition keeps its newest `versionsKept` versions within
 *   `maxBytes`, counted from the newest; the current version is always kept,
 *   even alone over `maxBytes`, and so are none older than the first that
 *   does not fit;
 * - the server's whole history (every version of every definition, in every
 *   history table) stays within `serverMaxBytes`: past it, the server's
 *   oldest versions by save time go first, never a current one.
 * Sizes are read from stored lengths (definition-budget.ts), not contents.
 * Tools and entries keep their histories in two tables; the HISTORIES table
 * below is the one place that knows it.
 */
import { sql, type RawBuilder, type Transaction } from 'kysely';
import { McphostError } from '../errors.js';
import type { StoreDatabase } from './database-schema.js';
import { entryBytesSql, toolBytesSql } from './definition-budget.js';
import type { StoreContext } from './store-context.js';

/** How the store bounds the versions it keeps (what the admin API's version listings show). */
export interface VersionRetention {
  /** Versions kept of one tool, prompt or resource, the current one included (VERSIONS_KEPT). */
  readonly versionsKept: number;
  /** Largest total of one definition's kept versions, in bytes (VERSIONS_MAX_BYTES). */
  readonly maxBytes: number;
  /** Largest total of every kept version of one server's definitions, in bytes (SERVER_VERSIONS_MAX_BYTES). */
  readonly serverMaxBytes: number;
}

/** Which history a definition's versions are in. */
export type HistoryKind = 'tool' | 'entry';

interface HistoryTable {
  /** The definitions (with `id`, `server_id`, `version`: the current one). */
  items: 'tools' | 'server_entries';
  /** Their versions (with `version`, `saved_at`). */
  versions: 'tool_versions' | 'server_entry_versions';
  /** The versions' column naming their definition. */
  owner: 'tool_id' | 'entry_id';
  /** Bytes of the version row aliased `v`. */
  bytes: RawBuilder<number>;
}

const HISTORIES: Record<HistoryKind, HistoryTable> = {
  tool: { items: 'tools', versions: 'tool_versions', owner: 'tool_id', bytes: toolBytesSql('v') },
  entry: {
    items: 'server_entries',
    versions: 'server_entry_versions',
    owner: 'entry_id',
    bytes: entryBytesSql('v'),
  },
};

/** The definition just saved: its server, its history and its row. */
export interface SavedVersion {
  serverId: string;
  history: HistoryKind;
  itemId: string;
}

/**
 * Prunes what the save of `saved` took past the bounds: first its own
 * history, then its server's. The caller holds the server's row
 * (`lockServer`), so two saves of one server prune in turn.
 */
export async function pruneVersions(
  context: StoreContext,
  trx: Transaction<StoreDatabase>,
  saved: SavedVersion,
): Promise<void> {
  await pruneDefinition(context.versionRetention, trx, saved);
  await pruneServer(context.versionRetention, trx, saved.serverId);
}

/**
 * The error for a rollback to a version that is not there: pruned when it is
 * older than the current one (versions 1 to the current were all saved once).
 */
export function missingVersion(
  what: string,
  version: number,
  currentVersion: number,
  retention: VersionRetention,
): McphostError {
  if (Number.isInteger(version) && version >= 1 && version < currentVersion) {
    return new McphostError(
      'ERR_NOT_FOUND',
      `version ${version} of ${what} was pruned: the newest ${retention.versionsKept} versions within ${retention.maxBytes} bytes are kept (VERSIONS_KEPT, VERSIONS_MAX_BYTES; and SERVER_VERSIONS_MAX_BYTES for a whole server)`,
    );
  }
  return new McphostError('ERR_NOT_FOUND', `version ${version} of ${what} does not exist`);
}

async function pruneDefinition(
  retention: VersionRetention,
  trx: Transaction<StoreDatabase>,
  saved: SavedVersion,
): Promise<void> {
  const table = HISTORIES[saved.history];
  // Newest first: at most one row past what may be kept is read.
  const { rows } = await sql<{ version: number; bytes: number | string }>`
    select v.version, ${table.bytes} as bytes from ${sql.table(table.versions)} v
    where ${sql.ref(`v.${table.owner}`)} = ${saved.itemId}
    order by v.version desc
    limit ${retention.versionsKept + 1}
  `.execute(trx);
  let keptBytes = 0;
  for (const [index, row] of rows.entries()) {
    const bytes = Number(row.bytes);
    const fits = index < retention.versionsKept && keptBytes + bytes <= retention.maxBytes;
    if (index > 0 && !fits) {
      await deleteUpTo(trx, table, saved.itemId, row.version);
      return;
    }
    keptBytes += bytes;
  }
}

async function pruneServer(
  retention: VersionRetention,
  trx: Transaction<StoreDatabase>,
  serverId: string,
): Promise<void> {
  const totals = await Promise.all(
    Object.values(HISTORIES).map(async (table) => {
      const { rows } = await sql<{ bytes: number | string | null }>`
        select sum(${table.bytes}) as bytes from ${sql.table(table.versions)} v
        join ${sql.table(table.items)} i on i.id = ${sql.ref(`v.${table.owner}`)}
        where i.server_id = ${serverId}
      `.execute(trx);
      return Number(rows[0]?.bytes ?? 0);
    }),
  );
  let total = totals.reduce((sum, bytes) => sum + bytes, 0);
  if (total <= retention.serverMaxBytes) return;

  // Past the bound (rare: after a save that grew the history): the server's
  // versions that are not current, oldest first, until the rest fits.
  const candidates = (
    await Promise.all(
      (Object.entries(HISTORIES) as [HistoryKind, HistoryTable][]).map(async ([kind, table]) => {
        const { rows } = await sql<{
          owner: string;
          version: number;
          bytes: number | string;
          saved_at: string;
        }>`
          select ${sql.ref(`v.${table.owner}`)} as owner, v.version, ${table.bytes} as bytes, v.saved_at
          from ${sql.table(table.versions)} v
          join ${sql.table(table.items)} i on i.id = ${sql.ref(`v.${table.owner}`)}
          where i.server_id = ${serverId} and v.version < i.version
        `.execute(trx);
        return rows.map((row) => ({ ...row, kind }));
      }),
    )
  )
    .flat()
    .sort((a, b) =>
      a.saved_at < b.saved_at ? -1 : a.saved_at > b.saved_at ? 1 : a.version - b.version,
    );
  // Within one definition older versions go first, so what goes is a prefix of its versions.
  const upTo = new Map<string, { kind: HistoryKind; version: number }>();
  for (const candidate of candidates) {
    if (total <= retention.serverMaxBytes) break;
    total -= Number(candidate.bytes);
    const key = `${candidate.kind}:${candidate.owner}`;
    const previous = upTo.get(key)?.version ?? 0;
    upTo.set(key, { kind: candidate.kind, version: Math.max(previous, candidate.version) });
  }
  for (const [key, { kind, version }] of upTo) {
    await deleteUpTo(trx, HISTORIES[kind], key.slice(kind.length + 1), version);
  }
}

async function deleteUpTo(
  trx: Transaction<StoreDatabase>,
  table: HistoryTable,
  itemId: string,
  version: number,
): Promise<void> {
  await sql`
    delete from ${sql.table(table.versions)}
    where ${sql.ref(table.owner)} = ${itemId} and version <= ${version}
  `.execute(trx);
}
