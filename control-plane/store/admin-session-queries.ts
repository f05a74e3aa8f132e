/**
 * Dashboard sessions, kept in the store so any replica can answer a signed-in
 * browser. A session is found by the SHA-256 of its cookie value; it ends at
 * its absolute expiry or after an idle time, whichever comes first.
 */
import type { AdminSessionRecord } from './account-records.js';
import { readOperation, statementOperation, type StoreContext } from './store-context.js';

/** Stores a new session. */
export function createAdminSession(
  context: StoreContext,
  session: Omit<AdminSessionRecord, 'createdAt' | 'lastUsedAt'>,
): Promise<void> {
  return statementOperation(context, 'starting a dashboard session', async (db) => {
    const now = context.now();
    await db
      .insertInto('admin_sessions')
      .values({
        id_hash: session.idHash,
        account_id: session.accountId,
        csrf_token: session.csrfToken,
        created_at: now,
        last_used_at: now,
        expires_at: session.expiresAt,
      })
      .execute();
  });
}

/** A session by the hash of its cookie value, or undefined. */
export function getAdminSession(
  context: StoreContext,
  idHash: string,
): Promise<AdminSessionRecord | undefined> {
  return readOperation(context, 'reading a dashboard session', async (db) => {
    const row = await db
      .selectFrom('admin_sessions')
      .selectAll()
      .where('id_hash', '=', idHash)
      .executeTakeFirst();
    return row === undefined
      ? undefined
      : {
          idHash: row.id_hash,
          accountId: row.account_id,
          csrfToken: row.csrf_token,
          createdAt: row.created_at,
          lastUsedAt: row.last_used_at,
          expiresAt: row.expires_at,
        };
  });
}

/** Marks a session used now. */
export function touchAdminSession(context: StoreContext, idHash: string): Promise<void> {
  return statementOperation(context, 'recording dashboard session use', async (db) => {
    await db
      .updateTable('admin_sessions')
      .set({ last_used_at: context.now() })
      .where('id_hash', '=', idHash)
      .execute();
  });
}

/** Ends a session (signing out); false when there was none. */
export function deleteAdminSession(context: StoreContext, idHash: string): Promise<boolean> {
  return statementOperation(context, 'ending a dashboard session', async (db) => {
    const result = await db
      .deleteFrom('admin_sessions')
      .where('id_hash', '=', idHash)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  });
}

/** Deletes sessions past their expiry or unused since `idleBefore` (ISO); returns how many. */
export function pruneAdminSessions(context: StoreContext, idleBefore: string): Promise<number> {
  return statementOperation(context, 'pruning dashboard sessions', async (db) => {
    const result = await db
      .deleteFrom('admin_sessions')
      .where((eb) =>
        eb.or([eb('expires_at', '<', context.now()), eb('last_used_at', '<', idleBefore)]),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  });
}
