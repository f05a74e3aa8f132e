/**
 * Live control-plane replicas: each one writes its row every few seconds, so
 * any replica can count the others (request-rate limits are shared out
 * among the replicas alive). Rows of replicas gone quiet are deleted.
 */
import type { Kysely, Migration } from 'kysely';

export const replicasMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('replicas')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('seen_at', 'text', (column) => column.notNull())
      .execute();
  },
};
