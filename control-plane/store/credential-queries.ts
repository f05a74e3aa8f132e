/**
 * Credentials that are random secrets: hosted servers' API keys and
 * accounts' personal tokens. The caller mints the secret and hands over its
 * SHA-256; a request's secret is found by its hash (a unique index), so no
 * comparison runs over secrets at all. Revoking keeps the row, for the list
 * and the audit trail. API-key changes are announced (`api-keys`), so every
 * replica's key cache forgets what it knew of that server.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type {
  CredentialKind,
  CredentialOwner,
  CredentialRecord,
  NewCredential,
} from './account-records.js';
import type { CredentialsTable, StoreDatabase } from './database-schema.js';
import type { StoreChange } from './change-feed.js';
import {
  notFound,
  readOperation,
  requireServerId,
  statementOperation,
  writeOperation,
  type StoreContext,
} from './store-context.js';

type CredentialRow = Selectable<CredentialsTable> & { subdomain: string | null };

/** Stores a new credential (ERR_NOT_FOUND for a missing server). */
export function createCredential(
  context: StoreContext,
  input: NewCredential,
): Promise<CredentialRecord> {
  return writeOperation(
    context,
    `creating ${describe(input.owner)}`,
    changeOf(input.owner),
    async (trx) => {
      const serverId =
        input.owner.kind === 'apikey' ? await requireServerId(trx, input.owner.subdomain) : null;
      const id = randomUUID();
      await trx
        .insertInto('credentials')
        .values({
          id,
          kind: input.owner.kind,
          server_id: serverId,
          account_id: input.owner.kind === 'personal' ? input.owner.accountId : null,
          label: input.label,
          prefix: input.prefix,
          secret_hash: input.secretHash,
          created_by: input.createdBy,
          created_at: context.now(),
          expires_at: input.expiresAt,
          revoked_at: null,
          last_used_at: null,
        })
        .execute();
      return (await selectCredentials(trx)
        .where('credentials.id', '=', id)
        .executeTakeFirst()
        .then(toRecord))!;
    },
  );
}

/** The credentials of a server or an account, newest first. */
export function listCredentials(
  context: StoreContext,
  owner: CredentialOwner,
): Promise<CredentialRecord[]> {
  return readOperation(context, `listing ${describe(owner)}s`, async (db) => {
    let query = selectCredentials(db).where('credentials.kind', '=', owner.kind);
    query =
      owner.kind === 'apikey'
        ? query.where('servers.subdomain', '=', owner.subdomain)
        : query.where('credentials.account_id', '=', owner.accountId);
    const rows = await query.orderBy('credentials.created_at', 'desc').execute();
    return rows.map((row) => toRecord(row)!);
  });
}

/** The credential of a kind whose secret has this SHA-256 (hex), or undefined. */
export function findCredential(
  context: StoreContext,
  kind: CredentialKind,
  secretHash: string,
): Promise<CredentialRecord | undefined> {
  return readOperation(context, 'looking up a credential', async (db) =>
    toRecord(
      await selectCredentials(db)
        .where('credentials.secret_hash', '=', secretHash)
        .where('credentials.kind', '=', kind)
        .executeTakeFirst(),
    ),
  );
}

/** Revokes one credential of its owner (idempotent); ERR_NOT_FOUND when the owner has no such id. */
export function revokeCredential(
  context: StoreContext,
  owner: CredentialOwner,
  id: string,
): Promise<CredentialRecord> {
  return writeOperation(context, `revoking ${describe(owner)}`, changeOf(owner), async (trx) => {
    let query = selectCredentials(trx)
      .where('credentials.id', '=', id)
      .where('credentials.kind', '=', owner.kind);
    query =
      owner.kind === 'apikey'
        ? query.where('servers.subdomain', '=', owner.subdomain)
        : query.where('credentials.account_id', '=', owner.accountId);
    const current = toRecord(await query.executeTakeFirst());
    if (!current) throw notFound(`${describe(owner)} "${id}"`);
    if (current.revokedAt !== null) return current;
    const revokedAt = context.now();
    await trx
      .updateTable('credentials')
      .set({ revoked_at: revokedAt })
      .where('id', '=', id)
      .execute();
    return { ...current, revokedAt };
  });
}

/** Least time between two recorded uses of one credential, whichever replica saw them, in ms. */
const TOUCH_INTERVAL_MS = 60_000;

/**
 * Marks credentials used now, in one statement; [] does nothing. A credential
 * recorded as used within the last minute (by any replica) is left alone, so
 * replicas together write each at most once a minute. Announces nothing.
 */
export function touchCredentials(context: StoreContext, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return Promise.resolve();
  return statementOperation(context, 'recording credential use', async (db) => {
    const now = context.now();
    const recent = new Date(Date.parse(now) - TOUCH_INTERVAL_MS).toISOString();
    await db
      .updateTable('credentials')
      .set({ last_used_at: now })
      .where('id', 'in', [...ids])
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', recent)]))
      .execute();
  });
}

function selectCredentials(db: Kysely<StoreDatabase>) {
  return db
    .selectFrom('credentials')
    .leftJoin('servers', 'servers.id', 'credentials.server_id')
    .selectAll('credentials')
    .select('servers.subdomain');
}

function toRecord(row: CredentialRow | undefined): CredentialRecord | undefined {
  if (row === undefined) return undefined;
  return {
    id: row.id,
    kind: row.kind as CredentialKind,
    subdomain: row.subdomain,
    accountId: row.account_id,
    label: row.label,
    prefix: row.prefix,
    createdBy: row.created_by,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
  };
}

function changeOf(owner: CredentialOwner): StoreChange | null {
  return owner.kind === 'apikey' ? { subdomain: owner.subdomain, kind: 'api-keys' } : null;
}

function describe(owner: CredentialOwner): string {
  return owner.kind === 'apikey' ? `an API key of "${owner.subdomain}"` : 'a personal token';
}
