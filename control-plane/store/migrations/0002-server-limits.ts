/**
 * Server-wide limits: tools without their own timeout or memory limit take
 * their server's before the service defaults (tool → server → default).
 */
import type { Kysely, Migration } from 'kysely';

export const serverLimitsMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('servers')
      .addColumn('limits', 'text', (column) => column.notNull().defaultTo('{}'))
      .execute();
  },
};
