/**
 * What a server's definitions — its tools, prompts and resources — may take:
 * one byte budget for all of them (SERVER_ENTRIES_MAX_BYTES), since every
 * replica holds every current definition in memory and `tools/list` and its
 * kin answer from there, so a server's cost must not depend on how its bytes
 * are split between tools and entries; and at most MAX_TOOLS_PER_SERVER tools.
 *
 * A definition's size is its UTF-8 bytes as stored, measured the same way in
 * JavaScript at save time and in SQL over stored rows (`octet_length`, in
 * SQLite and PostgreSQL alike), so the history's bound (version-retention.ts)
 * reads sizes without reading contents.
 */
import { sql, type RawBuilder, type Transaction } from 'kysely';
import { McphostError } from '../errors.js';
import type { StoreDatabase } from './database-schema.js';
import type { DefinitionColumns } from './row-mapping.js';
import type { StoreContext } from './store-context.js';

/** Most tools one server holds (as for prompts and resources, MAX_ENTRIES_PER_KIND). */
export const MAX_TOOLS_PER_SERVER = 1000;

/** The text columns of a tool's definition (tools and tool_versions alike); `strict` is a number. */
const TOOL_TEXT_COLUMNS = [
  'description',
  'code',
  'parameters',
  'secret_names',
  'limits',
  'title',
  'annotations',
  'input_schema',
  'output_schema',
] as const satisfies readonly (keyof DefinitionColumns)[];

/** Bytes of a tool's definition as stored. */
export function toolStoredBytes(columns: DefinitionColumns): number {
  let bytes = 0;
  for (const column of TOOL_TEXT_COLUMNS) {
    const value = columns[column];
    if (value !== null) bytes += Buffer.byteLength(value, 'utf8');
  }
  return bytes;
}

/** The same measure in SQL, for the tools or tool_versions row named `alias`. */
export function toolBytesSql(alias: string): RawBuilder<number> {
  const terms = TOOL_TEXT_COLUMNS.map(
    (column) => sql`coalesce(octet_length(${sql.ref(`${alias}.${column}`)}), 0)`,
  );
  return sql<number>`(${sql.join(terms, sql` + `)})`;
}

/** Bytes of a prompt's or resource's stored definition (JSON text), for the row named `alias`. */
export function entryBytesSql(alias: string): RawBuilder<number> {
  return sql<number>`octet_length(${sql.ref(`${alias}.definition`)})`;
}

/**
 * Holds the server's row until the transaction ends (PostgreSQL; SQLite runs
 * one write at a time), so that the saves of one server pass the checks
 * here and in version-retention.ts one after another: two saves at once
 * cannot both take the last room. Taken before the definition's own row, the
 * order a server's deletion (which cascades) takes them in.
 */
export async function lockServer(
  context: StoreContext,
  trx: Transaction<StoreDatabase>,
  serverId: string,
): Promise<void> {
  if (context.dialect !== 'postgres') return;
  await trx.selectFrom('servers').select('id').where('id', '=', serverId).forUpdate().execute();
}

/** The definition being saved: which table holds it, its row (absent when new) and its new size. */
export interface SavedDefinition {
  table: 'tools' | 'server_entries';
  /** Its row's id when it replaces one. */
  id: string | undefined;
  /** Bytes of the definition as it will be stored. */
  bytes: number;
}

/**
 * Refuses (ERR_VALIDATION, naming SERVER_ENTRIES_MAX_BYTES) a save that takes
 * the server's definitions past the budget. A save that does not make the
 * server larger always passes, so a server over a lowered budget can shrink.
 * The caller holds the server's row (`lockServer`).
 */
export async function checkDefinitionBudget(
  context: StoreContext,
  trx: Transaction<StoreDatabase>,
  serverId: string,
  saved: SavedDefinition,
): Promise<void> {
  const limit = context.serverEntriesMaxBytes;
  const { rows } = await sql<{ tools: number | string | null; entries: number | string | null }>`
    select
      (select sum(${toolBytesSql('t')}) from tools t where t.server_id = ${serverId}) as tools,
      (select sum(e.stored_bytes) from server_entries e where e.server_id = ${serverId}) as entries
  `.execute(trx);
  const total = Number(rows[0]?.tools ?? 0) + Number(rows[0]?.entries ?? 0);
  const previous = saved.id === undefined ? 0 : await storedBytesOf(trx, saved.table, saved.id);
  const others = total - previous;
  if (others + saved.bytes <= limit || saved.bytes <= previous) return;
  throw new McphostError(
    'ERR_VALIDATION',
    `the tools, prompts and resources of a server hold at most ${limit} bytes (SERVER_ENTRIES_MAX_BYTES); this one takes ${saved.bytes} and the others ${others}`,
  );
}

async function storedBytesOf(
  trx: Transaction<StoreDatabase>,
  table: SavedDefinition['table'],
  id: string,
): Promise<number> {
  const size = table === 'tools' ? toolBytesSql('t') : sql`t.stored_bytes`;
  const { rows } = await sql<{ bytes: number | string | null }>`
    select ${size} as bytes from ${sql.table(table)} t where t.id = ${id}
  `.execute(trx);
  return Number(rows[0]?.bytes ?? 0);
}
