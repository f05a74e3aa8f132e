/**
 * Who did what (docs/accounts-and-keys.md): admin accounts with a role and,
 * for operators, the servers they may operate; dashboard sessions; the
 * credentials that are random secrets stored as hashes (hosted servers' API
 * keys and accounts' personal tokens, one table: one way to mint, find,
 * revoke and touch them); and the audit log. Deleting a server removes its
 * keys and its place in operators' lists; deleting an account removes its
 * sessions and tokens. The audit log keeps names, not references: an entry
 * outlives what it describes.
 */
import type { Kysely, Migration } from 'kysely';
import type { StoreDialectName } from '../store-dialect.js';

/** Builds the migration for one dialect (the audit sequence column is spelled differently). */
export function accountsMigration(dialect: StoreDialectName): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('accounts')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('email', 'text', (column) => column.notNull().unique())
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('role', 'text', (column) => column.notNull())
        .addColumn('password_hash', 'text')
        .addColumn('oidc_issuer', 'text')
        .addColumn('oidc_subject', 'text')
        .addColumn('disabled', 'integer', (column) => column.notNull())
        .addColumn('failed_sign_ins', 'integer', (column) => column.notNull())
        .addColumn('locked_until', 'text')
        .addColumn('last_sign_in_at', 'text')
        .addColumn('created_at', 'text', (column) => column.notNull())
        .addColumn('updated_at', 'text', (column) => column.notNull())
        .execute();
      // Several accounts may have no subject; two may not share one at one provider.
      await db.schema
        .createIndex('accounts_oidc_identity')
        .on('accounts')
        .columns(['oidc_issuer', 'oidc_subject'])
        .unique()
        .execute();

      await db.schema
        .createTable('account_servers')
        .addColumn('account_id', 'text', (column) =>
          column.notNull().references('accounts.id').onDelete('cascade'),
        )
        .addColumn('server_id', 'text', (column) =>
          column.notNull().references('servers.id').onDelete('cascade'),
        )
        .addPrimaryKeyConstraint('account_servers_pk', ['account_id', 'server_id'])
        .execute();

      await db.schema
        .createTable('admin_sessions')
        .addColumn('id_hash', 'text', (column) => column.primaryKey())
        .addColumn('account_id', 'text', (column) =>
          column.notNull().references('accounts.id').onDelete('cascade'),
        )
        .addColumn('csrf_token', 'text', (column) => column.notNull())
        .addColumn('created_at', 'text', (column) => column.notNull())
        .addColumn('last_used_at', 'text', (column) => column.notNull())
        .addColumn('expires_at', 'text', (column) => column.notNull())
        .execute();
      await db.schema
        .createIndex('admin_sessions_expires_at')
        .on('admin_sessions')
        .column('expires_at')
        .execute();

      await db.schema
        .createTable('credentials')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('kind', 'text', (column) => column.notNull())
        .addColumn('server_id', 'text', (column) =>
          column.references('servers.id').onDelete('cascade'),
        )
        .addColumn('account_id', 'text', (column) =>
          column.references('accounts.id').onDelete('cascade'),
        )
        .addColumn('label', 'text', (column) => column.notNull())
        .addColumn('prefix', 'text', (column) => column.notNull())
        .addColumn('secret_hash', 'text', (column) => column.notNull().unique())
        .addColumn('created_by', 'text', (column) => column.notNull())
        .addColumn('created_at', 'text', (column) => column.notNull())
        .addColumn('expires_at', 'text')
        .addColumn('revoked_at', 'text')
        .addColumn('last_used_at', 'text')
        .execute();
      await db.schema
        .createIndex('credentials_server_id')
        .on('credentials')
        .column('server_id')
        .execute();
      await db.schema
        .createIndex('credentials_account_id')
        .on('credentials')
        .column('account_id')
        .execute();

      await db.schema
        .createTable('audit_log')
        .addColumn('seq', dialect === 'postgres' ? 'bigserial' : 'integer', (column) =>
          dialect === 'postgres' ? column.primaryKey() : column.primaryKey().autoIncrement(),
        )
        .addColumn('id', 'text', (column) => column.notNull())
        .addColumn('at', 'text', (column) => column.notNull())
        .addColumn('actor_kind', 'text', (column) => column.notNull())
        .addColumn('actor_id', 'text')
        .addColumn('actor_label', 'text', (column) => column.notNull())
        .addColumn('action', 'text', (column) => column.notNull())
        .addColumn('server', 'text')
        .addColumn('target', 'text')
        .addColumn('outcome', 'text', (column) => column.notNull())
        .addColumn('client_address', 'text')
        .addColumn('request_id', 'text')
        .addColumn('summary', 'text', (column) => column.notNull())
        .execute();
      // Retention deletes by time; the filtered views walk a server's rows newest first.
      await db.schema.createIndex('audit_log_at').on('audit_log').column('at').execute();
      await db.schema
        .createIndex('audit_log_server_seq')
        .on('audit_log')
        .columns(['server', 'seq'])
        .execute();
    },
  };
}
