/**
 * The invocation log kept per server (see invocation-retention.ts): an index
 * to find each server's newest rows, and the counts of calls refused before
 * any code ran, per server, error code and time bucket, which replace one
 * row each. Runtime state, like the log: never in backups.
 */
import type { Kysely, Migration } from 'kysely';

export const invocationRetentionMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    // Pruning keeps each server's newest rows: its rows by sequence, newest first.
    await db.schema
      .createIndex('invocations_server_seq')
      .on('invocations')
      .columns(['server', 'seq'])
      .execute();
    await db.schema
      .createTable('invocation_refusals')
      .addColumn('server', 'text', (column) => column.notNull())
      .addColumn('code', 'text', (column) => column.notNull())
      /** Start of the bucket (ISO 8601, UTC), a multiple of its width. */
      .addColumn('bucket_start', 'text', (column) => column.notNull())
      .addColumn('count', 'integer', (column) => column.notNull())
      .addPrimaryKeyConstraint('invocation_refusals_pk', ['server', 'code', 'bucket_start'])
      .execute();
    // Buckets are pruned by age.
    await db.schema
      .createIndex('invocation_refusals_bucket_start')
      .on('invocation_refusals')
      .column('bucket_start')
      .execute();
  },
};
