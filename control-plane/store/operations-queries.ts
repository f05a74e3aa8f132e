/**
 * The operational tables: warm-pool sizing per tool, the invocation log
 * (newest first, pruned per server, see invocation-retention.ts) and
 * key/value meta entries.
 */
import {
  invocationQuerySchema,
  parseInvocationRecord,
  poolSizingSchema,
  toolNameSchema,
  type InvocationQuery,
  type InvocationRecord,
  type InvocationRecordInput,
  type PoolSettingsRecord,
  type PoolSizing,
} from './records.js';
import { sql, type Transaction } from 'kysely';
import type { StoreDatabase } from './database-schema.js';
import { boundInvocationRow, pageOmittedLogs } from './invocation-bounds.js';
import { rowsKeptPerServer } from './invocation-retention.js';
import { pruneRefusals } from './refusal-queries.js';
import { invocationFromRow, invocationToRow, poolSettingsFromRow } from './row-mapping.js';
import {
  invalid,
  readOperation,
  requireServerId,
  validate,
  writeOperation,
  type StoreContext,
} from './store-context.js';

/** Rows per INSERT statement: stays under SQLite's bound-parameter limit. */
const INSERT_CHUNK_ROWS = 200;

/** All stored pool sizings, ordered by server and tool. */
export function getPoolSettings(context: StoreContext): Promise<PoolSettingsRecord[]> {
  return readOperation(context, 'reading pool settings', async (db) => {
    const rows = await db
      .selectFrom('pool_settings')
      .innerJoin('servers', 'servers.id', 'pool_settings.server_id')
      .selectAll('pool_settings')
      .select('servers.subdomain')
      .orderBy('servers.subdomain')
      .orderBy('pool_settings.tool_name')
      .execute();
    return rows.map(poolSettingsFromRow);
  });
}

/** Stores the pool sizing of a server (`tool` "") or of one tool's own pool; ERR_NOT_FOUND if the server is absent. */
export async function putPoolSettings(
  context: StoreContext,
  subdomain: string,
  tool: string,
  sizing: PoolSizing,
): Promise<PoolSettingsRecord> {
  const validTool = tool === '' ? '' : validate(toolNameSchema, tool, 'tool name');
  const { minWarm, maxSize } = validate(poolSizingSchema, sizing, 'pool settings');
  return writeOperation(
    context,
    `saving pool settings of "${validTool ? `${subdomain}/${validTool}` : subdomain}"`,
    { subdomain, kind: 'pool' },
    async (trx) => {
      const serverId = await requireServerId(trx, subdomain);
      const updatedAt = context.now();
      await trx
        .insertInto('pool_settings')
        .values({
          server_id: serverId,
          tool_name: validTool,
          min_warm: minWarm,
          max_size: maxSize,
          updated_at: updatedAt,
        })
        .onConflict((conflict) =>
          conflict
            .columns(['server_id', 'tool_name'])
            .doUpdateSet({ min_warm: minWarm, max_size: maxSize, updated_at: updatedAt }),
        )
        .execute();
      return { subdomain, tool: validTool, minWarm, maxSize, updatedAt };
    },
  );
}

/** Appends invocation entries in one transaction (no change notification: the log is not configuration). */
export async function appendInvocations(
  context: StoreContext,
  entries: readonly InvocationRecordInput[],
): Promise<void> {
  const rows = entries.map((entry) => {
    const parsed = parseInvocationRecord(entry);
    if (!parsed.success) throw invalid(parsed.error, 'invocation entry');
    return invocationToRow(boundInvocationRow(parsed.data, context.invocationRowMaxBytes));
  });
  if (rows.length === 0) return;
  await writeOperation(context, 'appending invocations', null, async (trx) => {
    for (let start = 0; start < rows.length; start += INSERT_CHUNK_ROWS) {
      await trx
        .insertInto('invocations')
        .values(rows.slice(start, start + INSERT_CHUNK_ROWS))
        .execute();
    }
  });
}

/**
 * Invocation entries, newest first, optionally of one server and tool. Log
 * lines fill the page up to `invocationPageMaxBytes` (measured before they are
 * read); rows past it carry a notice instead, so neither the answer nor the
 * memory that builds it grows with what tools logged.
 */
export async function listInvocations(
  context: StoreContext,
  query: InvocationQuery = {},
): Promise<InvocationRecord[]> {
  const { server, kind, tool, limit } = validate(invocationQuerySchema, query, 'invocation query');
  const maxPageBytes = context.invocationPageMaxBytes;
  return readOperation(context, 'listing invocations', async (db) => {
    const logBytes =
      context.dialect === 'postgres'
        ? sql<number>`octet_length(logs)`
        : sql<number>`length(cast(logs as blob))`;
    const rows = await db
      .selectFrom('invocations')
      .select([
        'seq',
        'id',
        'at',
        'server',
        'kind',
        'tool',
        'version',
        'duration_ms',
        'ok',
        'error_code',
        'error_message',
        'caller',
        'request_id',
        'client_address',
        'era',
        'input_rounds',
      ])
      .select(logBytes.as('log_bytes'))
      .$if(server !== undefined, (select) => select.where('server', '=', server as string))
      .$if(kind !== undefined, (select) => select.where('kind', '=', kind as string))
      .$if(tool !== undefined, (select) => select.where('tool', '=', tool as string))
      .orderBy('seq', 'desc')
      .limit(limit)
      .execute();
    let pageBytes = 0;
    const fitting: number[] = [];
    for (const row of rows) {
      const bytes = Number(row.log_bytes);
      if (pageBytes + bytes > maxPageBytes) continue;
      pageBytes += bytes;
      fitting.push(Number(row.seq));
    }
    const logsBySeq = new Map<number, string>();
    for (let start = 0; start < fitting.length; start += INSERT_CHUNK_ROWS) {
      const chunk = fitting.slice(start, start + INSERT_CHUNK_ROWS);
      const found = await db
        .selectFrom('invocations')
        .select(['seq', 'logs'])
        .where('seq', 'in', chunk)
        .execute();
      for (const { seq, logs } of found) logsBySeq.set(Number(seq), logs);
    }
    return rows.map(({ log_bytes: bytes, ...row }) => {
      const logs = logsBySeq.get(Number(row.seq));
      const record = invocationFromRow({ ...row, logs: logs ?? '[]' });
      return logs === undefined
        ? { ...record, logs: pageOmittedLogs(Number(bytes), maxPageBytes) }
        : record;
    });
  });
}

/**
 * Prunes the invocation log to its retention (see invocation-retention.ts:
 * each server keeps its newest `invocationRetentionPerServer` rows, the log
 * at most `invocationRetention` beyond that, the largest servers pruned
 * first) and the refusal counts to their age; returns how many rows went.
 * Safe to run on several replicas at once: each deletes only rows older
 * than a server's kept ones as its own snapshot saw them.
 */
export async function pruneInvocations(context: StoreContext): Promise<number> {
  const floor = context.invocationRetentionPerServer;
  return writeOperation(context, 'pruning invocations', null, async (trx) => {
    const counted = await trx
      .selectFrom('invocations')
      .select('server')
      .select((select) => select.fn.countAll<number | string>().as('rows'))
      .groupBy('server')
      .execute();
    const rows = new Map(counted.map((row) => [row.server, Number(row.rows)]));
    // Only a server that exists has a floor: a deleted one's rows go first.
    const existing = new Set(
      (await trx.selectFrom('servers').select('subdomain').execute()).map((row) => row.subdomain),
    );
    const kept = rowsKeptPerServer(
      rows,
      (server) => (existing.has(server) ? floor : 0),
      context.invocationRetention,
    );
    let deleted = 0;
    for (const [server, keep] of kept) {
      if (keep >= (rows.get(server) ?? 0)) continue;
      deleted += await pruneServerRows(trx, server, keep);
    }
    const refusalsBefore = new Date(Date.parse(context.now()) - context.refusalRetentionMs);
    await pruneRefusals(trx, refusalsBefore.toISOString());
    return deleted;
  });
}

/** Deletes all but the newest `keep` rows of `server`; returns how many went. */
async function pruneServerRows(
  trx: Transaction<StoreDatabase>,
  server: string,
  keep: number,
): Promise<number> {
  let boundary: { seq: number } | undefined;
  if (keep > 0) {
    // The oldest row still kept; sequence gaps (rolled-back inserts) do not matter this way.
    boundary = await trx
      .selectFrom('invocations')
      .select('seq')
      .where('server', '=', server)
      .orderBy('seq', 'desc')
      .limit(1)
      .offset(keep - 1)
      .executeTakeFirst();
    if (boundary === undefined) return 0;
  }
  const result = await trx
    .deleteFrom('invocations')
    .where('server', '=', server)
    .$if(boundary !== undefined, (remove) => remove.where('seq', '<', boundary!.seq))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** A meta value, or undefined. */
export function getMeta(context: StoreContext, key: string): Promise<string | undefined> {
  return readOperation(context, `reading meta "${key}"`, async (db) => {
    const row = await db
      .selectFrom('meta')
      .select('value')
      .where('key', '=', key)
      .executeTakeFirst();
    return row?.value;
  });
}

/** Sets a meta value (upsert). */
export async function setMeta(context: StoreContext, key: string, value: string): Promise<void> {
  if (typeof key !== 'string' || key === '' || typeof value !== 'string') {
    throw new TypeError('setMeta needs a non-empty string key and a string value');
  }
  await writeOperation(context, `saving meta "${key}"`, { subdomain: null, kind: 'meta' }, (trx) =>
    trx
      .insertInto('meta')
      .values({ key, value })
      .onConflict((conflict) => conflict.column('key').doUpdateSet({ value }))
      .execute(),
  );
}
