/**
 * How many saved versions of a definition (a tool, a prompt, a resource) the
 * store keeps: every save writes a full snapshot, and without a bound an
 * operator's saves would fill the database every tenant shares. After each
 * save, in its transaction:
 * - the definition keeps its newest `versionsKept` versions within
 *   `maxBytes`, counted from the newest; the current version is always kept,
 *   even alone over `maxBytes`, and so are none older than the first that
 *   does not fit;
 * - the server's whole history (every version of every definition) stays
 *   within `serverMaxBytes`: past it, the server's
 *   oldest versions by save time go first, never a current one.
 * Sizes are the stored lengths (`octet_length`, in SQLite and PostgreSQL
 * alike), read without reading contents.
 */
import { sql, type Transaction } from 'kysely';
import { McphostError } from '../errors.js';
import type { StoreDatabase } from './database-schema.js';
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

/** Bytes of the definition of the version row aliased `v`. */
const VERSION_BYTES = sql<number>`octet_length(v.definition)`;

/** The definition just saved: its server and its row. */
export interface SavedVersion {
  serverId: string;
  entryId: string;
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
  // Newest first: at most one row past what may be kept is read.
  const { rows } = await sql<{ version: number; bytes: number | string }>`
    select v.version, ${VERSION_BYTES} as bytes from server_entry_versions v
    where v.entry_id = ${saved.entryId}
    order by v.version desc
    limit ${retention.versionsKept + 1}
  `.execute(trx);
  let keptBytes = 0;
  for (const [index, row] of rows.entries()) {
    const bytes = Number(row.bytes);
    const fits = index < retention.versionsKept && keptBytes + bytes <= retention.maxBytes;
    if (index > 0 && !fits) {
      await deleteUpTo(trx, saved.entryId, row.version);
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
  const { rows: sums } = await sql<{ bytes: number | string | null }>`
    select sum(${VERSION_BYTES}) as bytes from server_entry_versions v
    join server_entries i on i.id = v.entry_id
    where i.server_id = ${serverId}
  `.execute(trx);
  let total = Number(sums[0]?.bytes ?? 0);
  if (total <= retention.serverMaxBytes) return;

  // Past the bound (rare: after a save that grew the history): the server's
  // versions that are not current, oldest first, until the rest fits.
  const { rows: candidates } = await sql<{
    entry_id: string;
    version: number;
    bytes: number | string;
  }>`
    select v.entry_id, v.version, ${VERSION_BYTES} as bytes
    from server_entry_versions v
    join server_entries i on i.id = v.entry_id
    where i.server_id = ${serverId} and v.version < i.version
    order by v.saved_at, v.version
  `.execute(trx);
  // Within one definition older versions go first, so what goes is a prefix of its versions.
  const upTo = new Map<string, number>();
  for (const candidate of candidates) {
    if (total <= retention.serverMaxBytes) break;
    total -= Number(candidate.bytes);
    upTo.set(candidate.entry_id, Math.max(upTo.get(candidate.entry_id) ?? 0, candidate.version));
  }
  for (const [entryId, version] of upTo) await deleteUpTo(trx, entryId, version);
}

async function deleteUpTo(
  trx: Transaction<StoreDatabase>,
  entryId: string,
  version: number,
): Promise<void> {
  await trx
    .deleteFrom('server_entry_versions')
    .where('entry_id', '=', entryId)
    .where('version', '<=', version)
    .execute();
}
