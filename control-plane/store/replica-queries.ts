/**
 * The replicas table: a heartbeat row per live control plane. Timestamps are
 * ISO 8601 text from each replica's clock (they compare as text).
 */
import { writeOperation, type StoreContext } from './store-context.js';

/**
 * Marks `replicaId` alive now, forgets replicas silent for `staleAfterMs`,
 * and returns how many replicas are alive (this one included).
 */
export async function heartbeatReplica(
  context: StoreContext,
  replicaId: string,
  staleAfterMs: number,
): Promise<number> {
  const now = context.now();
  const cutoff = new Date(Date.parse(now) - staleAfterMs).toISOString();
  return writeOperation(context, 'recording the replica heartbeat', null, async (trx) => {
    await trx
      .insertInto('replicas')
      .values({ id: replicaId, seen_at: now })
      .onConflict((conflict) => conflict.column('id').doUpdateSet({ seen_at: now }))
      .execute();
    await trx.deleteFrom('replicas').where('seen_at', '<', cutoff).execute();
    const { count } = await trx
      .selectFrom('replicas')
      .select((eb) => eb.fn.countAll<number | string | bigint>().as('count'))
      .executeTakeFirstOrThrow();
    return Math.max(1, Number(count));
  });
}

/** Removes a replica's row (it is shutting down). */
export async function removeReplica(context: StoreContext, replicaId: string): Promise<void> {
  await writeOperation(context, 'removing the replica heartbeat', null, (trx) =>
    trx.deleteFrom('replicas').where('id', '=', replicaId).execute(),
  );
}
