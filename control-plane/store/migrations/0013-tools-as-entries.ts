/**
 * Tools become entries: a tool is kept, versioned, bounded and rolled back by
 * the one mechanism prompts and resources use (entry-queries.ts), as JSON
 * text in `server_entries` (kind 'tool') with its history in
 * `server_entry_versions`. Every tool and every kept version moves with its
 * id, version numbers and times; `tools` and `tool_versions` are dropped.
 * Pool settings name a tool by name and stay as they are.
 *
 * All or nothing on both databases: Kysely runs a PostgreSQL migration in a
 * transaction but not a SQLite one, so this one opens its own there. And it
 * may run again after a failure: the tool entries a failed run could have
 * left (none exist before it) are removed first. A replica of the previous
 * version still running against PostgreSQL waits on the tables' lock and then
 * fails loudly, rather than writing a tool into a table about to go.
 */
import { sql, type Kysely, type Migration, type Transaction } from 'kysely';
import {
  toolEntryRow,
  toolEntryVersionRow,
  type LegacyToolRow,
  type LegacyToolVersionRow,
} from '../legacy-tool-rows.js';
import type { StoreDialectName } from '../store-dialect.js';

/** Rows read per round: a round holds at most this many definitions in memory. */
const ROWS_PER_ROUND = 200;

/** The tables this migration reads and writes, as they are when it runs. */
interface MovingTables {
  tools: LegacyToolRow;
  tool_versions: LegacyToolVersionRow;
  server_entries: ReturnType<typeof toolEntryRow>;
  server_entry_versions: ReturnType<typeof toolEntryVersionRow>;
}

/** Builds the migration for one dialect (only PostgreSQL has other writers to lock out). */
export function toolsAsEntriesMigration(dialect: StoreDialectName): Migration {
  return {
    async up(schemaless: Kysely<unknown>): Promise<void> {
      const db = schemaless as Kysely<MovingTables>;
      const move = (trx: Transaction<MovingTables>) => moveTools(trx, dialect);
      if (db.isTransaction) await move(db as Transaction<MovingTables>);
      else await db.transaction().execute(move);
    },
  };
}

async function moveTools(trx: Transaction<MovingTables>, dialect: StoreDialectName): Promise<void> {
  // SQLite has one writer at a time: its transaction already keeps the others out.
  if (dialect === 'postgres') {
    await sql`lock table tools, tool_versions in exclusive mode`.execute(trx);
  }
  await trx.deleteFrom('server_entries').where('kind', '=', 'tool').execute();

  let after: string | undefined;
  for (;;) {
    const tools = await trx
      .selectFrom('tools')
      .selectAll()
      .$if(after !== undefined, (query) => query.where('id', '>', after!))
      .orderBy('id')
      .limit(ROWS_PER_ROUND)
      .execute();
    if (tools.length === 0) break;
    after = tools[tools.length - 1]!.id;
    await trx.insertInto('server_entries').values(tools.map(toolEntryRow)).execute();
  }

  // Versions apart, by their key: a tool's history may be long (older stores did not bound it).
  let last: { toolId: string; version: number } | undefined;
  for (;;) {
    const versions = await trx
      .selectFrom('tool_versions')
      .selectAll()
      .$if(last !== undefined, (query) =>
        query.where((eb) =>
          eb.or([
            eb('tool_id', '>', last!.toolId),
            eb.and([eb('tool_id', '=', last!.toolId), eb('version', '>', last!.version)]),
          ]),
        ),
      )
      .orderBy('tool_id')
      .orderBy('version')
      .limit(ROWS_PER_ROUND)
      .execute();
    if (versions.length === 0) break;
    const end = versions[versions.length - 1]!;
    last = { toolId: end.tool_id, version: end.version };
    await trx
      .insertInto('server_entry_versions')
      .values(versions.map(toolEntryVersionRow))
      .execute();
  }
  await trx.schema.dropTable('tool_versions').execute();
  await trx.schema.dropTable('tools').execute();
}
