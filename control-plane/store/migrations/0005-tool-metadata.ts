/**
 * Tool metadata on tools and their versions: a title, MCP annotations (JSON),
 * and JSON Schema 2020-12 input and output schemas (JSON text, kept as
 * written). All nullable: tools saved before it have none, and keep
 * generating their inputSchema from the parameter list.
 */
import type { Kysely, Migration } from 'kysely';

const COLUMNS = ['title', 'annotations', 'input_schema', 'output_schema'] as const;

export const toolMetadataMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    // One column per statement: SQLite adds a single column per ALTER TABLE.
    for (const table of ['tools', 'tool_versions']) {
      for (const column of COLUMNS) {
        await db.schema.alterTable(table).addColumn(column, 'text').execute();
      }
    }
  },
};
