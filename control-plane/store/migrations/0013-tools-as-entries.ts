/**
 * Tools become entries: a tool is kept, versioned, bounded and rolled back by
 * the one mechanism prompts and resources use (entry-queries.ts), as JSON
 * text in `server_entries` (kind 'tool') with its history in
 * `server_entry_versions`. Every tool and every kept version moves with its
 * id, version numbers and times; `tools` and `tool_versions` are dropped.
 * Pool settings name a tool by name and stay as they are.
 */
import type { Kysely, Migration } from 'kysely';
import {
  toolEntryRow,
  toolEntryVersionRow,
  type LegacyToolRow,
  type LegacyToolVersionRow,
} from '../legacy-tool-rows.js';

/** Tools moved per round: their versions are read together, so a round stays small. */
const TOOLS_PER_ROUND = 100;
/** Rows per INSERT, well within SQLite's and PostgreSQL's bound on parameters. */
const ROWS_PER_INSERT = 200;

/** The tables this migration reads and writes, as they are when it runs. */
interface MovingTables {
  tools: LegacyToolRow;
  tool_versions: LegacyToolVersionRow;
  server_entries: ReturnType<typeof toolEntryRow>;
  server_entry_versions: ReturnType<typeof toolEntryVersionRow>;
}

export const toolsAsEntriesMigration: Migration = {
  async up(schemaless: Kysely<unknown>): Promise<void> {
    const db = schemaless as Kysely<MovingTables>;
    let after = '';
    for (;;) {
      const tools = await db
        .selectFrom('tools')
        .selectAll()
        .where('id', '>', after)
        .orderBy('id')
        .limit(TOOLS_PER_ROUND)
        .execute();
      if (tools.length === 0) break;
      after = tools[tools.length - 1]!.id;
      for (const rows of chunks(tools.map(toolEntryRow))) {
        await db.insertInto('server_entries').values(rows).execute();
      }
      const versions = await db
        .selectFrom('tool_versions')
        .selectAll()
        .where(
          'tool_id',
          'in',
          tools.map((tool) => tool.id),
        )
        .execute();
      for (const rows of chunks(versions.map(toolEntryVersionRow))) {
        await db.insertInto('server_entry_versions').values(rows).execute();
      }
    }
    await db.schema.dropTable('tool_versions').execute();
    await db.schema.dropTable('tools').execute();
  },
};

function* chunks<T>(rows: T[]): Generator<T[]> {
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
    yield rows.slice(start, start + ROWS_PER_INSERT);
  }
}
