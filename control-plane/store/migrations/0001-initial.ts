/**
 * The first schema: servers, tools and their versions, secrets, pool settings,
 * the invocation log and a key/value meta table. Portable across SQLite and
 * PostgreSQL; only the invocation sequence column differs per dialect.
 */
import type { Kysely, Migration } from 'kysely';
import type { StoreDialectName } from '../store-dialect.js';

/** Builds the migration for one dialect (the auto-increment column is spelled differently). */
export function initialSchemaMigration(dialect: StoreDialectName): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('servers')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('subdomain', 'text', (column) => column.notNull().unique())
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('security_mode', 'text', (column) => column.notNull())
        .addColumn('oauth_server_url', 'text')
        .addColumn('oauth_metadata', 'text')
        .addColumn('oauth_audience', 'text')
        .addColumn('oauth_required_scopes', 'text', (column) => column.notNull())
        .addColumn('active', 'integer', (column) => column.notNull())
        .addColumn('created_at', 'text', (column) => column.notNull())
        .addColumn('updated_at', 'text', (column) => column.notNull())
        .execute();

      await db.schema
        .createTable('tools')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('server_id', 'text', (column) =>
          column.notNull().references('servers.id').onDelete('cascade'),
        )
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('description', 'text', (column) => column.notNull())
        .addColumn('code', 'text', (column) => column.notNull())
        .addColumn('parameters', 'text', (column) => column.notNull())
        .addColumn('secret_names', 'text', (column) => column.notNull())
        .addColumn('limits', 'text', (column) => column.notNull())
        .addColumn('strict', 'integer', (column) => column.notNull())
        .addColumn('version', 'integer', (column) => column.notNull())
        .addColumn('created_at', 'text', (column) => column.notNull())
        .addColumn('updated_at', 'text', (column) => column.notNull())
        .addUniqueConstraint('tools_server_name_unique', ['server_id', 'name'])
        .execute();

      await db.schema
        .createTable('tool_versions')
        .addColumn('tool_id', 'text', (column) =>
          column.notNull().references('tools.id').onDelete('cascade'),
        )
        .addColumn('version', 'integer', (column) => column.notNull())
        .addColumn('description', 'text', (column) => column.notNull())
        .addColumn('code', 'text', (column) => column.notNull())
        .addColumn('parameters', 'text', (column) => column.notNull())
        .addColumn('secret_names', 'text', (column) => column.notNull())
        .addColumn('limits', 'text', (column) => column.notNull())
        .addColumn('strict', 'integer', (column) => column.notNull())
        .addColumn('saved_at', 'text', (column) => column.notNull())
        .addPrimaryKeyConstraint('tool_versions_pk', ['tool_id', 'version'])
        .execute();

      await db.schema
        .createTable('secrets')
        .addColumn('server_id', 'text', (column) =>
          column.notNull().references('servers.id').onDelete('cascade'),
        )
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('ciphertext', 'text', (column) => column.notNull())
        .addColumn('updated_at', 'text', (column) => column.notNull())
        .addPrimaryKeyConstraint('secrets_pk', ['server_id', 'name'])
        .execute();

      await db.schema
        .createTable('pool_settings')
        .addColumn('server_id', 'text', (column) =>
          column.notNull().references('servers.id').onDelete('cascade'),
        )
        .addColumn('tool_name', 'text', (column) => column.notNull())
        .addColumn('min_warm', 'integer', (column) => column.notNull())
        .addColumn('max_size', 'integer', (column) => column.notNull())
        .addColumn('updated_at', 'text', (column) => column.notNull())
        .addPrimaryKeyConstraint('pool_settings_pk', ['server_id', 'tool_name'])
        .execute();

      await db.schema
        .createTable('invocations')
        .addColumn('seq', dialect === 'postgres' ? 'bigserial' : 'integer', (column) =>
          dialect === 'postgres' ? column.primaryKey() : column.primaryKey().autoIncrement(),
        )
        .addColumn('id', 'text', (column) => column.notNull())
        .addColumn('at', 'text', (column) => column.notNull())
        .addColumn('server', 'text', (column) => column.notNull())
        .addColumn('tool', 'text', (column) => column.notNull())
        .addColumn('version', 'integer', (column) => column.notNull())
        .addColumn('duration_ms', 'integer', (column) => column.notNull())
        .addColumn('ok', 'integer', (column) => column.notNull())
        .addColumn('error_code', 'text')
        .addColumn('error_message', 'text')
        .addColumn('logs', 'text', (column) => column.notNull())
        .addColumn('caller', 'text', (column) => column.notNull())
        .addColumn('request_id', 'text')
        .execute();
      await db.schema
        .createIndex('invocations_server_tool_seq')
        .on('invocations')
        .columns(['server', 'tool', 'seq'])
        .execute();

      await db.schema
        .createTable('meta')
        .addColumn('key', 'text', (column) => column.primaryKey())
        .addColumn('value', 'text', (column) => column.notNull())
        .execute();
    },

    async down(db: Kysely<unknown>): Promise<void> {
      for (const table of [
        'meta',
        'invocations',
        'pool_settings',
        'secrets',
        'tool_versions',
        'tools',
        'servers',
      ]) {
        await db.schema.dropTable(table).ifExists().execute();
      }
    },
  };
}
