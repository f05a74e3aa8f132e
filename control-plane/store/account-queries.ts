/**
 * Admin accounts: create, read, change, delete, and the sign-in bookkeeping
 * (failed attempts, locks). An operator's servers are rows of
 * `account_servers`, so deleting a server takes it out of every list (a new
 * server of the same name is not inherited). The last enabled owner cannot be
 * demoted, disabled or deleted: the service would have nobody to manage it
 * but the bootstrap token.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely, Selectable, Transaction } from 'kysely';
import { McphostError } from '../errors.js';
import type { AccountPatch, AccountRecord, NewAccount, Role } from './account-records.js';
import type { AccountsTable, StoreDatabase } from './database-schema.js';
import {
  notFound,
  readOperation,
  statementOperation,
  writeOperation,
  type StoreContext,
} from './store-context.js';

type Db = Kysely<StoreDatabase> | Transaction<StoreDatabase>;

/** Every account, ordered by e-mail. */
export function listAccounts(context: StoreContext): Promise<AccountRecord[]> {
  return readOperation(context, 'listing accounts', async (db) => {
    const rows = await db.selectFrom('accounts').selectAll().orderBy('email').execute();
    const servers = await serversByAccount(db);
    return rows.map((row) => accountFromRow(row, servers.get(row.id) ?? []));
  });
}

/** One account by id, e-mail or OpenID Connect identity, or undefined. */
export function findAccount(
  context: StoreContext,
  by: { id: string } | { email: string } | { oidcIssuer: string; oidcSubject: string },
): Promise<AccountRecord | undefined> {
  return readOperation(context, 'reading an account', (db) => findAccountIn(db, by));
}

async function findAccountIn(
  db: Db,
  by: { id: string } | { email: string } | { oidcIssuer: string; oidcSubject: string },
): Promise<AccountRecord | undefined> {
  let query = db.selectFrom('accounts').selectAll();
  if ('id' in by) query = query.where('id', '=', by.id);
  else if ('email' in by) query = query.where('email', '=', by.email);
  else {
    query = query
      .where('oidc_issuer', '=', by.oidcIssuer)
      .where('oidc_subject', '=', by.oidcSubject);
  }
  const row = await query.executeTakeFirst();
  if (row === undefined) return undefined;
  return accountFromRow(row, (await serversByAccount(db, row.id)).get(row.id) ?? []);
}

/** Creates an account; a taken e-mail or OpenID subject is ERR_CONFLICT, an unknown server ERR_VALIDATION. */
export function createAccount(context: StoreContext, input: NewAccount): Promise<AccountRecord> {
  return writeOperation(context, `creating account "${input.email}"`, null, async (trx) => {
    const taken = await trx
      .selectFrom('accounts')
      .select('id')
      .where('email', '=', input.email)
      .executeTakeFirst();
    if (taken) throw new McphostError('ERR_CONFLICT', `an account for ${input.email} exists`);
    const now = context.now();
    const id = randomUUID();
    await trx
      .insertInto('accounts')
      .values({
        id,
        email: input.email,
        name: input.name,
        role: input.role,
        password_hash: input.passwordHash,
        oidc_issuer: input.oidcSubject === null ? null : input.oidcIssuer,
        oidc_subject: input.oidcSubject,
        disabled: 0,
        failed_sign_ins: 0,
        locked_until: null,
        last_sign_in_at: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    await replaceServers(trx, id, input.servers);
    return (await findAccountIn(trx, { id }))!;
  });
}

/**
 * Changes an account. A new role, password, server list or a disable ends
 * its sessions in the same transaction (what a session may do was decided
 * at sign-in by who the account was).
 */
export function updateAccount(
  context: StoreContext,
  id: string,
  patch: AccountPatch,
): Promise<AccountRecord> {
  return writeOperation(context, 'changing an account', null, async (trx) => {
    const current = await findAccountIn(trx, { id });
    if (!current) throw notFound(`account "${id}"`);
    const role = patch.role ?? current.role;
    const disabled = patch.disabled ?? current.disabled;
    if (current.role === 'owner' && !current.disabled && (role !== 'owner' || disabled)) {
      await requireAnotherOwner(context, trx, id);
    }
    await trx
      .updateTable('accounts')
      .set({
        name: patch.name ?? current.name,
        role,
        disabled: disabled ? 1 : 0,
        ...(patch.passwordHash === undefined ? {} : { password_hash: patch.passwordHash }),
        ...(patch.oidcSubject === undefined
          ? {}
          : {
              oidc_subject: patch.oidcSubject,
              oidc_issuer: patch.oidcSubject === null ? null : (patch.oidcIssuer ?? null),
            }),
        // A reset password or a re-enabled account starts with a clean slate.
        ...(patch.passwordHash !== undefined || patch.disabled === false
          ? { failed_sign_ins: 0, locked_until: null }
          : {}),
        updated_at: context.now(),
      })
      .where('id', '=', id)
      .execute();
    if (patch.servers !== undefined || role !== 'operator') {
      await replaceServers(trx, id, role === 'operator' ? (patch.servers ?? current.servers) : []);
    }
    const credentialsChanged =
      patch.passwordHash !== undefined ||
      (patch.oidcSubject !== undefined && patch.oidcSubject !== current.oidcSubject);
    const authorityChanged =
      credentialsChanged ||
      role !== current.role ||
      disabled !== current.disabled ||
      (patch.servers !== undefined && !sameMembers(patch.servers, current.servers));
    if (authorityChanged)
      await trx.deleteFrom('admin_sessions').where('account_id', '=', id).execute();
    // New sign-in credentials or a disable say "whoever held this account may not any
    // more": the personal tokens go too (a token minted by an intruder must not outlive
    // the reset), and re-enabling does not bring them back.
    if (credentialsChanged || (disabled && !current.disabled)) {
      await trx
        .updateTable('credentials')
        .set({ revoked_at: context.now() })
        .where('account_id', '=', id)
        .where('revoked_at', 'is', null)
        .execute();
    }
    return (await findAccountIn(trx, { id }))!;
  });
}

/** Deletes an account with its sessions and personal tokens. */
export function deleteAccount(context: StoreContext, id: string): Promise<void> {
  return writeOperation(context, 'deleting an account', null, async (trx) => {
    const current = await findAccountIn(trx, { id });
    if (!current) throw notFound(`account "${id}"`);
    if (current.role === 'owner' && !current.disabled) await requireAnotherOwner(context, trx, id);
    await trx.deleteFrom('accounts').where('id', '=', id).execute();
  });
}

/**
 * Claims one password attempt on an account before the password is checked:
 * refused while the account is locked; otherwise the attempt counts as a
 * failure (and locks the account for `lockMsFor(count)` ms, 0: no lock) until
 * `recordSignIn` clears it. Counting first, in one transaction that holds the
 * account's row, is what makes the lock hold against guesses sent in parallel:
 * counting after the (slow) check would let every guess in flight through.
 */
export function claimSignInAttempt(
  context: StoreContext,
  id: string,
  lockMsFor: (failures: number) => number,
): Promise<{ allowed: true; failures: number } | { allowed: false; lockedUntil: string }> {
  return writeOperation(context, 'recording a sign-in attempt', null, async (trx) => {
    let query = trx
      .selectFrom('accounts')
      .select(['failed_sign_ins', 'locked_until'])
      .where('id', '=', id);
    // SQLite runs one write transaction at a time; PostgreSQL needs the row held.
    if (context.dialect === 'postgres') query = query.forUpdate();
    const row = await query.executeTakeFirst();
    if (!row) throw notFound(`account "${id}"`);
    const now = Date.parse(context.now());
    if (row.locked_until !== null && Date.parse(row.locked_until) > now) {
      return { allowed: false as const, lockedUntil: row.locked_until };
    }
    const failures = row.failed_sign_ins + 1;
    const lockMs = lockMsFor(failures);
    await trx
      .updateTable('accounts')
      .set({
        failed_sign_ins: failures,
        locked_until: lockMs > 0 ? new Date(now + lockMs).toISOString() : null,
      })
      .where('id', '=', id)
      .execute();
    return { allowed: true as const, failures };
  });
}

/** Records a successful sign-in (clears failures), and links an OpenID identity when given. */
export function recordSignIn(
  context: StoreContext,
  id: string,
  link?: { oidcIssuer: string; oidcSubject: string },
): Promise<void> {
  return statementOperation(context, 'recording a sign-in', async (db) => {
    await db
      .updateTable('accounts')
      .set({
        failed_sign_ins: 0,
        locked_until: null,
        last_sign_in_at: context.now(),
        ...(link ? { oidc_issuer: link.oidcIssuer, oidc_subject: link.oidcSubject } : {}),
      })
      .where('id', '=', id)
      .execute();
  });
}

async function requireAnotherOwner(
  context: StoreContext,
  trx: Transaction<StoreDatabase>,
  id: string,
): Promise<void> {
  let query = trx
    .selectFrom('accounts')
    .select('id')
    .where('role', '=', 'owner')
    .where('disabled', '=', 0);
  // Two owners demoted at once on PostgreSQL: holding every owner row makes the second
  // transaction wait for the first, and then see one owner fewer.
  if (context.dialect === 'postgres') query = query.forUpdate();
  const other = (await query.execute()).find((row) => row.id !== id);
  if (!other) {
    throw new McphostError(
      'ERR_CONFLICT',
      'this is the last enabled owner account: make another account owner first',
    );
  }
}

async function replaceServers(
  trx: Transaction<StoreDatabase>,
  accountId: string,
  subdomains: readonly string[],
): Promise<void> {
  await trx.deleteFrom('account_servers').where('account_id', '=', accountId).execute();
  if (subdomains.length === 0) return;
  const rows = await trx
    .selectFrom('servers')
    .select(['id', 'subdomain'])
    .where('subdomain', 'in', [...subdomains])
    .execute();
  const missing = subdomains.filter((sub) => !rows.some((row) => row.subdomain === sub));
  if (missing.length > 0) {
    throw new McphostError(
      'ERR_VALIDATION',
      `no such server: ${missing.map((sub) => `"${sub}"`).join(', ')}`,
      { details: { issues: [{ path: 'servers', message: 'every server must exist', missing }] } },
    );
  }
  await trx
    .insertInto('account_servers')
    .values(rows.map((row) => ({ account_id: accountId, server_id: row.id })))
    .execute();
}

/** Subdomains per account (of one account when `accountId` is given). */
async function serversByAccount(db: Db, accountId?: string): Promise<Map<string, string[]>> {
  let query = db
    .selectFrom('account_servers')
    .innerJoin('servers', 'servers.id', 'account_servers.server_id')
    .select(['account_servers.account_id', 'servers.subdomain'])
    .orderBy('servers.subdomain');
  if (accountId !== undefined) query = query.where('account_servers.account_id', '=', accountId);
  const map = new Map<string, string[]>();
  for (const row of await query.execute()) {
    const list = map.get(row.account_id) ?? [];
    list.push(row.subdomain);
    map.set(row.account_id, list);
  }
  return map;
}

function accountFromRow(row: Selectable<AccountsTable>, servers: string[]): AccountRecord {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role as Role,
    servers,
    passwordHash: row.password_hash,
    oidcIssuer: row.oidc_issuer,
    oidcSubject: row.oidc_subject,
    disabled: row.disabled === 1,
    lastSignInAt: row.last_sign_in_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function sameMembers(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item) => b.includes(item));
}
