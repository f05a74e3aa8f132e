/**
 * What protocol a logged invocation was called in: the MCP era of its
 * request (legacy 2025-11-25 and earlier, or modern 2026-07-28; null for an
 * admin test run) and how many times it waited on its client for input.
 */
import type { Kysely, Migration } from 'kysely';

export const invocationProtocolMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('invocations').addColumn('era', 'text').execute();
    await db.schema
      .alterTable('invocations')
      .addColumn('input_rounds', 'integer', (column) => column.notNull().defaultTo(0))
      .execute();
  },
};
