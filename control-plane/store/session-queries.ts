/**
 * MCP sessions shared by the control-plane replicas (see session-records.ts):
 * runtime state, not configuration, so nothing here is announced through
 * `onChange` or taken into backups. What other replicas must hear about —
 * a session's state changed or ended, new stream events, a relayed client
 * message — is sent on PostgreSQL's session channel inside the write's
 * transaction, so it goes out only if the write commits. On SQLite (one
 * process) nothing is sent. Hot-path queries are primary-key lookups.
 */
import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import { McphostError } from '../errors.js';
import { sessionChannelOf } from './change-feed.js';
import type { McpSessionsTable, StoreDatabase } from './database-schema.js';
import type {
  McpSessionQuotas,
  McpSessionRow,
  McpStreamEventRow,
  SentSessionSignal,
} from './session-records.js';
import {
  readOperation,
  statementOperation,
  writeOperation,
  type StoreContext,
} from './store-context.js';

/** Rows per INSERT and ids per IN list: far under SQLite's and PostgreSQL's parameter limits. */
const STATEMENT_CHUNK = 500;

/** How long a relayed client message is kept for the replica that awaits it, in milliseconds. */
const RELAYED_MESSAGE_TTL_MS = 60_000;

/** Stores a new session; last used now. A taken id is ERR_CONFLICT. */
export async function createMcpSession(
  context: StoreContext,
  row: Omit<McpSessionRow, 'createdAt' | 'lastUsedAt'>,
): Promise<void> {
  const now = context.now();
  await statementOperation(context, 'creating an MCP session', (db) =>
    db
      .insertInto('mcp_sessions')
      .values({
        id: row.id,
        subdomain: row.subdomain,
        caller_key: row.callerKey,
        quota_key: row.quotaKey,
        state: row.state,
        created_at: now,
        last_used_at: now,
      })
      .execute(),
  );
}

/** Advisory-lock class of a server's sessions (PostgreSQL): "mcps". */
const SESSION_LOCK_CLASS = 0x6d637073;

/**
 * Stores a new session (last used now, `row.state` as given) within its
 * caller's and its server's quotas, counting every session stored — those
 * of every replica — while holding a lock on the server's sessions, so
 * initializes racing on several replicas cannot pass a quota together.
 *
 * Past the caller's quota, the caller's least recently used sessions make
 * room. Past the server's, the caller's own go first, then the server's
 * least recently used sessions not used within `inUseMs`; when those are
 * not enough, nothing changes and ERR_SESSION_QUOTA is thrown. Returns the
 * ids of the sessions deleted (with their stream events); the other
 * replicas hear an `evicted` signal for each.
 */
export async function admitMcpSession(
  context: StoreContext,
  row: Omit<McpSessionRow, 'createdAt' | 'lastUsedAt'>,
  quotas: McpSessionQuotas,
): Promise<string[]> {
  for (const name of ['perCaller', 'perServer'] as const) {
    if (!Number.isInteger(quotas[name]) || quotas[name] < 1) {
      throw new TypeError(`admitMcpSession: ${name} must be a positive integer`);
    }
  }
  requireDuration(quotas.inUseMs, 'admitMcpSession: inUseMs');
  const { subdomain, quotaKey } = row;
  return writeOperation(context, 'opening an MCP session', null, async (trx) => {
    if (context.dialect === 'postgres') {
      // SQLite runs one write transaction at a time already.
      await sql`select pg_advisory_xact_lock(${SESSION_LOCK_CLASS}, hashtext(${subdomain}))`.execute(
        trx,
      );
    }
    const now = context.now();
    const sessionsOf = (own: boolean) =>
      trx
        .selectFrom('mcp_sessions')
        .where('subdomain', '=', subdomain)
        .where('quota_key', own ? '=' : '<>', quotaKey);
    const countOf = async (own: boolean) =>
      Number(
        (
          await sessionsOf(own)
            .select((eb) => eb.fn.countAll().as('count'))
            .executeTakeFirstOrThrow()
        ).count,
      );
    const leastRecentlyUsed = async (own: boolean, limit: number) =>
      (
        await sessionsOf(own)
          .select('id')
          .$if(!own, (query) => query.where('last_used_at', '<', before(now, quotas.inUseMs)))
          .orderBy('last_used_at')
          .orderBy('id')
          .limit(limit)
          .execute()
      ).map((session) => session.id);

    const ownCount = await countOf(true);
    const serverCount = ownCount + (await countOf(false));
    // The caller makes room with its own sessions, however recently used: that costs no one else.
    const ownNeeded = Math.max(ownCount + 1 - quotas.perCaller, serverCount + 1 - quotas.perServer);
    const own = ownNeeded > 0 ? await leastRecentlyUsed(true, ownNeeded) : [];
    const othersNeeded = serverCount - own.length + 1 - quotas.perServer;
    const others = othersNeeded > 0 ? await leastRecentlyUsed(false, othersNeeded) : [];
    if (others.length < othersNeeded) {
      throw new McphostError(
        'ERR_SESSION_QUOTA',
        `too many sessions: this server holds ${quotas.perServer} sessions, all in use; retry later`,
      );
    }
    const evicted = [...own, ...others];
    for (const chunk of chunks(evicted)) {
      await trx.deleteFrom('mcp_stream_events').where('session_id', 'in', chunk).execute();
      await trx.deleteFrom('mcp_sessions').where('id', 'in', chunk).execute();
    }
    await trx
      .insertInto('mcp_sessions')
      .values({
        id: row.id,
        subdomain,
        caller_key: row.callerKey,
        quota_key: quotaKey,
        state: row.state,
        created_at: now,
        last_used_at: now,
      })
      .execute();
    await sendSessionSignals(
      context,
      trx,
      evicted.map((session) => ({ kind: 'evicted', session })),
    );
    return evicted;
  });
}

/** One session, or undefined. */
export function getMcpSession(
  context: StoreContext,
  id: string,
): Promise<McpSessionRow | undefined> {
  return readOperation(context, 'reading an MCP session', async (db) => {
    const row = await db
      .selectFrom('mcp_sessions')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row === undefined ? undefined : sessionFromRow(row);
  });
}

/** Replaces a session's state and tells the other replicas; false when there is no such session. */
export function updateMcpSessionState(
  context: StoreContext,
  id: string,
  state: string,
): Promise<boolean> {
  return writeOperation(context, 'saving the state of an MCP session', null, async (trx) => {
    const result = await trx
      .updateTable('mcp_sessions')
      .set({ state })
      .where('id', '=', id)
      .executeTakeFirst();
    const updated = Number(result.numUpdatedRows) > 0;
    if (updated) await sendSessionSignals(context, trx, [{ kind: 'changed', session: id }]);
    return updated;
  });
}

/** Deletes a session with its stream events; false when there was none. */
export function deleteMcpSession(context: StoreContext, id: string): Promise<boolean> {
  return writeOperation(context, 'deleting an MCP session', null, async (trx) => {
    await trx.deleteFrom('mcp_stream_events').where('session_id', '=', id).execute();
    const result = await trx.deleteFrom('mcp_sessions').where('id', '=', id).executeTakeFirst();
    const deleted = Number(result.numDeletedRows) > 0;
    if (deleted) await sendSessionSignals(context, trx, [{ kind: 'ended', session: id }]);
    return deleted;
  });
}

/** Deletes every session of a server with their events; returns how many went. */
export function deleteMcpSessionsOf(context: StoreContext, subdomain: string): Promise<number> {
  return writeOperation(
    context,
    `deleting the MCP sessions of "${subdomain}"`,
    null,
    async (trx) => {
      const gone = await trx
        .deleteFrom('mcp_sessions')
        .where('subdomain', '=', subdomain)
        .returning('id')
        .execute();
      return endSessions(context, trx, gone);
    },
  );
}

/** Marks sessions used now; ids that do not exist are skipped. Sends nothing. */
export async function touchMcpSessions(
  context: StoreContext,
  ids: readonly string[],
): Promise<void> {
  if (ids.length === 0) return;
  const now = context.now();
  // One statement for any batch the MCP layer gathers; idempotent, so larger ones need no transaction.
  await statementOperation(context, 'marking MCP sessions used', async (db) => {
    for (const chunk of chunks(ids)) {
      await db
        .updateTable('mcp_sessions')
        .set({ last_used_at: now })
        .where('id', 'in', chunk)
        .execute();
    }
  });
}

/**
 * Deletes the sessions unused for `idleMs` milliseconds with their events,
 * and relayed messages older than a minute; returns how many sessions went.
 */
export async function pruneMcpSessions(context: StoreContext, idleMs: number): Promise<number> {
  requireDuration(idleMs, 'pruneMcpSessions: idleMs');
  const now = context.now();
  const idleCutoff = before(now, idleMs);
  const messageCutoff = before(now, RELAYED_MESSAGE_TTL_MS);
  return writeOperation(context, 'pruning idle MCP sessions', null, async (trx) => {
    const gone = await trx
      .deleteFrom('mcp_sessions')
      .where('last_used_at', '<', idleCutoff)
      .returning('id')
      .execute();
    await trx.deleteFrom('mcp_session_messages').where('created_at', '<', messageCutoff).execute();
    return endSessions(context, trx, gone);
  });
}

/**
 * Appends stream events in one insert (created now). With `signal`, the
 * other replicas hear once per stream appended to; a taken seq is ERR_CONFLICT
 * and appends none.
 */
export async function appendMcpStreamEvents(
  context: StoreContext,
  events: readonly McpStreamEventRow[],
  signal: boolean,
): Promise<void> {
  if (events.length === 0) return;
  const now = context.now();
  const rows = events.map((event) => ({
    session_id: event.sessionId,
    stream_id: event.streamId,
    seq: event.seq,
    message: event.message,
    final: event.final ? 1 : 0,
    created_at: now,
  }));
  const operation = 'appending MCP stream events';
  const notifies = signal && context.dialect === 'postgres';
  if (!notifies && rows.length <= STATEMENT_CHUNK) {
    await statementOperation(context, operation, (db) =>
      db.insertInto('mcp_stream_events').values(rows).execute(),
    );
    return;
  }
  await writeOperation(context, operation, null, async (trx) => {
    for (const chunk of chunks(rows))
      await trx.insertInto('mcp_stream_events').values(chunk).execute();
    if (signal) await sendSessionSignals(context, trx, streamsOf(events));
  });
}

/** Up to `limit` events of one stream after `afterSeq`, in seq order. */
export async function readMcpStreamEvents(
  context: StoreContext,
  sessionId: string,
  streamId: string,
  afterSeq: number,
  limit: number,
): Promise<McpStreamEventRow[]> {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new TypeError(`readMcpStreamEvents: limit must be a positive integer, got ${limit}`);
  }
  return readOperation(context, 'reading MCP stream events', async (db) => {
    const rows = await db
      .selectFrom('mcp_stream_events')
      .select(['session_id', 'stream_id', 'seq', 'message', 'final'])
      .where('session_id', '=', sessionId)
      .where('stream_id', '=', streamId)
      .where('seq', '>', afterSeq)
      .orderBy('seq')
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      sessionId: row.session_id,
      streamId: row.stream_id,
      seq: Number(row.seq),
      message: row.message,
      final: Number(row.final) === 1,
    }));
  });
}

/** Deletes every event of one stream (it is over, or was dropped); returns how many went. */
export async function deleteMcpStream(
  context: StoreContext,
  sessionId: string,
  streamId: string,
): Promise<number> {
  return statementOperation(context, 'deleting an MCP stream', async (db) => {
    const result = await db
      .deleteFrom('mcp_stream_events')
      .where('session_id', '=', sessionId)
      .where('stream_id', '=', streamId)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  });
}

/**
 * Deletes every event of the streams whose newest event is older than
 * `olderThanMs` milliseconds, or whose answer (final event) is older than
 * `answeredOlderThanMs` (default: the same); a stream is kept or dropped
 * whole, so a resume never finds half of one. Returns how many events went.
 */
export async function pruneMcpStreamEvents(
  context: StoreContext,
  olderThanMs: number,
  answeredOlderThanMs = olderThanMs,
): Promise<number> {
  requireDuration(olderThanMs, 'pruneMcpStreamEvents: olderThanMs');
  requireDuration(answeredOlderThanMs, 'pruneMcpStreamEvents: answeredOlderThanMs');
  const now = context.now();
  const silentCutoff = before(now, olderThanMs);
  const answeredCutoff = before(now, answeredOlderThanMs);
  return statementOperation(context, 'pruning MCP stream events', async (db) => {
    const result = await db
      .deleteFrom('mcp_stream_events')
      .where(({ eb, or, refTuple, selectFrom }) =>
        or([
          eb(
            refTuple('session_id', 'stream_id'),
            'in',
            selectFrom('mcp_stream_events')
              .select(['session_id', 'stream_id'])
              .groupBy(['session_id', 'stream_id'])
              .having((having) => having.fn.max('created_at'), '<', silentCutoff)
              .$asTuple('session_id', 'stream_id'),
          ),
          eb(
            refTuple('session_id', 'stream_id'),
            'in',
            selectFrom('mcp_stream_events')
              .select(['session_id', 'stream_id'])
              .where('final', '=', 1)
              .where('created_at', '<', answeredCutoff)
              .$asTuple('session_id', 'stream_id'),
          ),
        ]),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  });
}

/** Stores a client message for the replica that awaits it and tells the others where it is. */
export async function relayMcpSessionMessage(
  context: StoreContext,
  sessionId: string,
  message: string,
): Promise<void> {
  const ref = randomUUID();
  await writeOperation(context, 'relaying an MCP client message', null, async (trx) => {
    await trx
      .insertInto('mcp_session_messages')
      .values({ id: ref, session_id: sessionId, message, created_at: context.now() })
      .execute();
    await sendSessionSignals(context, trx, [{ kind: 'message', session: sessionId, ref }]);
  });
}

/**
 * Takes a relayed message by its ref: returns it and deletes it, so that a
 * message is stored only until the one replica it is addressed to reads it
 * (an unread one is pruned after a minute). Undefined when never relayed,
 * taken already, or pruned.
 */
export function takeMcpSessionMessage(
  context: StoreContext,
  ref: string,
): Promise<{ sessionId: string; message: string } | undefined> {
  return writeOperation(context, 'taking a relayed MCP client message', null, async (trx) => {
    const row = await trx
      .selectFrom('mcp_session_messages')
      .select(['session_id', 'message'])
      .where('id', '=', ref)
      .executeTakeFirst();
    if (row === undefined) return undefined;
    await trx.deleteFrom('mcp_session_messages').where('id', '=', ref).execute();
    return { sessionId: row.session_id, message: row.message };
  });
}

/** Deletes the events of sessions just deleted and says they ended; returns how many. */
async function endSessions(
  context: StoreContext,
  trx: Transaction<StoreDatabase>,
  gone: readonly { id: string }[],
): Promise<number> {
  const ids = gone.map((row) => row.id);
  for (const chunk of chunks(ids)) {
    await trx.deleteFrom('mcp_stream_events').where('session_id', 'in', chunk).execute();
  }
  await sendSessionSignals(
    context,
    trx,
    ids.map((session) => ({ kind: 'ended', session })),
  );
  return ids.length;
}

/**
 * NOTIFYs the other replicas inside the transaction `trx`: PostgreSQL
 * delivers them only if it commits. One statement for any number.
 */
async function sendSessionSignals(
  context: StoreContext,
  trx: Kysely<StoreDatabase>,
  signals: readonly SentSessionSignal[],
): Promise<void> {
  if (context.dialect !== 'postgres' || signals.length === 0) return;
  const payloads = signals.map((signal) => context.feed.sessionPayload(signal));
  await sql`select pg_notify(${sessionChannelOf(context.changeChannel)}, signals.payload)
    from unnest(${payloads}::text[]) as signals(payload)`.execute(trx);
}

/** One 'events' signal per distinct stream, in the order they first appear. */
function streamsOf(events: readonly McpStreamEventRow[]): SentSessionSignal[] {
  const streams = new Map<string, SentSessionSignal>();
  for (const { sessionId, streamId } of events) {
    const key = JSON.stringify([sessionId, streamId]);
    if (!streams.has(key))
      streams.set(key, { kind: 'events', session: sessionId, stream: streamId });
  }
  return [...streams.values()];
}

function sessionFromRow(row: Selectable<McpSessionsTable>): McpSessionRow {
  return {
    id: row.id,
    subdomain: row.subdomain,
    callerKey: row.caller_key,
    quotaKey: row.quota_key,
    state: row.state,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  };
}

/** The ISO time `ms` milliseconds before the ISO time `now` (ISO strings compare as text). */
function before(now: string, ms: number): string {
  return new Date(Date.parse(now) - ms).toISOString();
}

function requireDuration(ms: number, what: string): void {
  if (!Number.isFinite(ms) || ms < 0) {
    throw new TypeError(`${what} must be a non-negative number of milliseconds, got ${ms}`);
  }
}

function chunks<T>(items: readonly T[]): T[][] {
  const result: T[][] = [];
  for (let start = 0; start < items.length; start += STATEMENT_CHUNK) {
    result.push(items.slice(start, start + STATEMENT_CHUNK));
  }
  return result;
}
