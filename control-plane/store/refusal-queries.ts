/**
 * The counts of refused calls (see refusal-records.ts): added to per server,
 * code and bucket by every replica (an upsert that adds, so replicas never
 * overwrite each other's counts), listed newest first or summed per server
 * and code, pruned by age with the invocation log.
 */
import type { Kysely, Transaction } from 'kysely';
import type { StoreDatabase } from './database-schema.js';
import {
  refusalCountSchema,
  refusalQuerySchema,
  type RefusalCount,
  type RefusalQuery,
  type RefusalTotal,
} from './refusal-records.js';
import { readOperation, validate, writeOperation, type StoreContext } from './store-context.js';

/** Rows per INSERT statement: stays under SQLite's bound-parameter limit. */
const INSERT_CHUNK_ROWS = 200;

/** Adds `counts` to the stored ones (one transaction). */
export async function countRefusals(
  context: StoreContext,
  counts: readonly RefusalCount[],
): Promise<void> {
  // One row per key: PostgreSQL refuses to update a row twice in one statement.
  const merged = new Map<string, RefusalCount>();
  for (const input of counts) {
    const count = validate(refusalCountSchema, input, 'refusal count');
    const key = JSON.stringify([count.server, count.code, count.bucketStart]);
    const known = merged.get(key);
    merged.set(key, known === undefined ? count : { ...known, count: known.count + count.count });
  }
  // The same order on every replica, so concurrent upserts take row locks alike (no deadlock).
  const rows = [...merged]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, count]) => ({
      server: count.server,
      code: count.code,
      bucket_start: count.bucketStart,
      count: count.count,
    }));
  if (rows.length === 0) return;
  await writeOperation(context, 'counting refused calls', null, async (trx) => {
    for (let start = 0; start < rows.length; start += INSERT_CHUNK_ROWS) {
      await trx
        .insertInto('invocation_refusals')
        .values(rows.slice(start, start + INSERT_CHUNK_ROWS))
        .onConflict((conflict) =>
          conflict.columns(['server', 'code', 'bucket_start']).doUpdateSet((update) => ({
            count: update('invocation_refusals.count', '+', update.ref('excluded.count')),
          })),
        )
        .execute();
    }
  });
}

/** Buckets of refusals, newest first (then by server and code). */
export function listRefusals(
  context: StoreContext,
  query: RefusalQuery = {},
): Promise<RefusalCount[]> {
  const { servers, since, limit } = validate(refusalQuerySchema, query, 'refusal query');
  return readOperation(context, 'listing refused calls', async (db) => {
    if (servers !== undefined && servers.length === 0) return [];
    const rows = await db
      .selectFrom('invocation_refusals')
      .selectAll()
      .$if(servers !== undefined, (select) => select.where('server', 'in', servers!))
      .$if(since !== undefined, (select) => select.where('bucket_start', '>=', isoUtc(since!)))
      .orderBy('bucket_start', 'desc')
      .orderBy('server')
      .orderBy('code')
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      server: row.server,
      code: row.code,
      bucketStart: row.bucket_start,
      count: Number(row.count),
    }));
  });
}

/** Refusals summed per server and code over the kept buckets (or those since `since`); `limit` does not apply. */
export function sumRefusals(
  context: StoreContext,
  query: RefusalQuery = {},
): Promise<RefusalTotal[]> {
  const { servers, since } = validate(refusalQuerySchema, query, 'refusal query');
  return readOperation(context, 'summing refused calls', async (db) => {
    if (servers !== undefined && servers.length === 0) return [];
    const rows = await db
      .selectFrom('invocation_refusals')
      .select(['server', 'code'])
      .select((select) => [
        select.fn.sum<number | string>('count').as('total'),
        select.fn.min('bucket_start').as('first_bucket'),
        select.fn.max('bucket_start').as('last_bucket'),
      ])
      .$if(servers !== undefined, (select) => select.where('server', 'in', servers!))
      .$if(since !== undefined, (select) => select.where('bucket_start', '>=', isoUtc(since!)))
      .groupBy(['server', 'code'])
      .orderBy('server')
      .orderBy('code')
      .execute();
    return rows.map((row) => ({
      server: row.server,
      code: row.code,
      count: Number(row.total),
      firstBucket: row.first_bucket,
      lastBucket: row.last_bucket,
    }));
  });
}

/** Deletes buckets that started before `before` (ISO 8601); returns how many went. */
export async function pruneRefusals(
  db: Kysely<StoreDatabase> | Transaction<StoreDatabase>,
  before: string,
): Promise<number> {
  const result = await db
    .deleteFrom('invocation_refusals')
    .where('bucket_start', '<', before)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** A time as stored (UTC, `Z`), so that text comparison orders it. */
function isoUtc(time: string): string {
  return new Date(time).toISOString();
}
