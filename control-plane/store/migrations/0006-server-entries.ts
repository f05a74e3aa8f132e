/**
 * Prompts and resources (a server's "entries", see entry-records.ts): one
 * row per entry with its current definition as JSON text, and every saved
 * version beside it. Deleting a server or an entry takes its history along.
 * The invocation log gains the kind of code that ran (tool, prompt,
 * resource, completion; rows written before it were all tools) and the
 * client's address.
 */
import { sql, type Kysely, type Migration } from 'kysely';

export const serverEntriesMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('server_entries')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('server_id', 'text', (column) =>
        column.notNull().references('servers.id').onDelete('cascade'),
      )
      .addColumn('kind', 'text', (column) => column.notNull())
      .addColumn('name', 'text', (column) => column.notNull())
      .addColumn('definition', 'text', (column) => column.notNull())
      // Bytes of the stored definition: a server's total is bounded.
      .addColumn('stored_bytes', 'integer', (column) => column.notNull())
      // A resource's uri or uriTemplate, so uniqueness is checked without reading definitions.
      .addColumn('uri', 'text')
      .addColumn('uri_template', 'text')
      .addColumn('version', 'integer', (column) => column.notNull())
      .addColumn('created_at', 'text', (column) => column.notNull())
      .addColumn('updated_at', 'text', (column) => column.notNull())
      .addUniqueConstraint('server_entries_unique', ['server_id', 'kind', 'name'])
      .execute();
    await db.schema
      .createTable('server_entry_versions')
      .addColumn('entry_id', 'text', (column) =>
        column.notNull().references('server_entries.id').onDelete('cascade'),
      )
      .addColumn('version', 'integer', (column) => column.notNull())
      .addColumn('definition', 'text', (column) => column.notNull())
      .addColumn('saved_at', 'text', (column) => column.notNull())
      .addPrimaryKeyConstraint('server_entry_versions_pk', ['entry_id', 'version'])
      .execute();
    await db.schema
      .alterTable('invocations')
      .addColumn('kind', 'text', (column) => column.notNull().defaultTo(sql`'tool'`))
      .execute();
    // The caller's address (TRUSTED_PROXIES decides when X-Forwarded-For counts).
    await db.schema.alterTable('invocations').addColumn('client_address', 'text').execute();
  },
};
