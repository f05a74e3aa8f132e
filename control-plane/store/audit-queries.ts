/**
 * The audit log: one row per admin write and sign-in, and per kind of
 * refusal a minute (its count rewritten when the minute ends), newest first
 * by insertion order, paged with a cursor (the last row's sequence number),
 * pruned by age. Rows hold names, not references, so an entry outlives the
 * server or account it describes.
 */
import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import {
  auditQuerySchema,
  type AuditActor,
  type AuditEntry,
  type AuditEntryInput,
  type AuditOutcome,
  type AuditPage,
  type AuditQuery,
} from './account-records.js';
import type { AuditLogTable } from './database-schema.js';
import { readOperation, statementOperation, validate, type StoreContext } from './store-context.js';

/** Appends one entry (one statement); returns it as listed. */
export function appendAudit(context: StoreContext, input: AuditEntryInput): Promise<AuditEntry> {
  return statementOperation(context, 'writing the audit log', async (db) => {
    const entry: AuditEntry = { ...input, id: randomUUID(), at: context.now() };
    await db
      .insertInto('audit_log')
      .values({
        id: entry.id,
        at: entry.at,
        actor_kind: entry.actor.kind,
        actor_id: entry.actor.id,
        actor_label: entry.actor.label,
        action: entry.action,
        server: entry.server,
        target: entry.target,
        outcome: entry.outcome,
        client_address: entry.clientAddress,
        request_id: entry.requestId,
        summary: JSON.stringify(entry.summary),
      })
      .execute();
    return entry;
  });
}

/**
 * Replaces the summary of entry `id`: a refusal entry's count, written when
 * its minute ends (one statement; an entry pruned meanwhile is left gone).
 */
export function setAuditSummary(
  context: StoreContext,
  id: string,
  summary: AuditEntryInput['summary'],
): Promise<void> {
  return statementOperation(context, 'writing the audit log', async (db) => {
    await db
      .updateTable('audit_log')
      .set({ summary: JSON.stringify(summary) })
      .where('id', '=', id)
      .execute();
  });
}

/**
 * One page of entries matching `query`, newest first. `visibleServers`
 * (an operator's servers) limits the page to entries about those servers.
 */
export function listAudit(
  context: StoreContext,
  query: AuditQuery,
  visibleServers?: readonly string[],
): Promise<AuditPage> {
  const filter = validate(auditQuerySchema, query, 'audit query');
  return readOperation(context, 'reading the audit log', async (db) => {
    if (visibleServers !== undefined && visibleServers.length === 0) {
      return { entries: [], nextCursor: null };
    }
    let select = db.selectFrom('audit_log').selectAll();
    if (filter.actor !== undefined) {
      const actor = filter.actor;
      select = select.where((eb) =>
        eb.or([eb('actor_id', '=', actor), eb('actor_label', '=', actor)]),
      );
    }
    if (filter.action !== undefined) select = select.where('action', '=', filter.action);
    if (filter.server !== undefined) select = select.where('server', '=', filter.server);
    if (visibleServers !== undefined) select = select.where('server', 'in', [...visibleServers]);
    if (filter.outcome !== undefined) select = select.where('outcome', '=', filter.outcome);
    // Stored timestamps are UTC ISO strings; bounds are normalised to compare as text.
    if (filter.since !== undefined) {
      select = select.where('at', '>=', new Date(filter.since).toISOString());
    }
    if (filter.until !== undefined) {
      select = select.where('at', '<=', new Date(filter.until).toISOString());
    }
    if (filter.cursor !== undefined) select = select.where('seq', '<', Number(filter.cursor));
    const rows = await select
      .orderBy('seq', 'desc')
      .limit(filter.limit + 1)
      .execute();
    const page = rows.slice(0, filter.limit);
    return {
      entries: page.map(entryFromRow),
      nextCursor: rows.length > filter.limit ? String(page.at(-1)!.seq) : null,
    };
  });
}

/** Deletes entries older than `before` (ISO); returns how many. */
export function pruneAudit(context: StoreContext, before: string): Promise<number> {
  return statementOperation(context, 'pruning the audit log', async (db) => {
    const result = await db.deleteFrom('audit_log').where('at', '<', before).executeTakeFirst();
    return Number(result.numDeletedRows);
  });
}

function entryFromRow(row: Selectable<AuditLogTable>): AuditEntry {
  return {
    id: row.id,
    at: row.at,
    actor: { kind: row.actor_kind as AuditActor['kind'], id: row.actor_id, label: row.actor_label },
    action: row.action,
    server: row.server,
    target: row.target,
    outcome: row.outcome as AuditOutcome,
    clientAddress: row.client_address,
    requestId: row.request_id,
    summary: JSON.parse(row.summary) as AuditEntry['summary'],
  };
}
