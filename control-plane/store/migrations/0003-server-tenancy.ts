/**
 * Server tenancy settings (isolation, runtime, container maximum, egress
 * allow list, browser origins, rate limit) as one JSON column: they are read
 * together, with the server, and never queried one by one. Servers saved
 * before it take `DEFAULT_SERVER_TENANCY` (an empty object here).
 */
import type { Kysely, Migration } from 'kysely';

export const serverTenancyMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('servers')
      .addColumn('tenancy', 'text', (column) => column.notNull().defaultTo('{}'))
      .execute();
  },
};
