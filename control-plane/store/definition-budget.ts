/**
 * What a server's definitions — its tools, prompts and resources — may take:
 * one byte budget for all of them (SERVER_ENTRIES_MAX_BYTES), since every
 * replica holds every current definition in memory and `tools/list` and its
 * kin answer from there, so a server's cost must not depend on how its bytes
 * are split between its kinds.
 *
 * A definition's size is the UTF-8 bytes of its JSON text, kept in
 * `stored_bytes` at save time.
 */
import type { Transaction } from 'kysely';
import { McphostError } from '../errors.js';
import type { StoreDatabase } from './database-schema.js';
import type { StoreContext } from './store-context.js';

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

/** The definition being saved: its row (absent when new) and its new size. */
export interface SavedDefinition {
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
  const rows = await trx
    .selectFrom('server_entries')
    .select((eb) => [
      eb.fn.sum<number | string | null>('stored_bytes').as('total'),
      eb.fn
        .sum<number | string | null>(
          eb
            .case()
            .when('id', '=', saved.id ?? '')
            .then(eb.ref('stored_bytes'))
            .else(0)
            .end(),
        )
        .as('previous'),
    ])
    .where('server_id', '=', serverId)
    .executeTakeFirstOrThrow();
  const total = Number(rows.total ?? 0);
  const previous = Number(rows.previous ?? 0);
  const others = total - previous;
  if (others + saved.bytes <= limit || saved.bytes <= previous) return;
  throw new McphostError(
    'ERR_VALIDATION',
    `the tools, prompts and resources of a server hold at most ${limit} bytes (SERVER_ENTRIES_MAX_BYTES); this one takes ${saved.bytes} and the others ${others}`,
  );
}
