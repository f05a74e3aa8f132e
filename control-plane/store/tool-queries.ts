/**
 * Tools of a server and their version history. Every save (a rollback too)
 * writes the tool row and a full snapshot in tool_versions in one
 * transaction, with the version one above the previous, after checking that
 * the server's definitions stay within their budget (definition-budget.ts),
 * and prunes the history past its bounds (version-retention.ts). Every write
 * names the tool it changed, so caches reload that tool alone.
 */
import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import { McphostError } from '../errors.js';
import type { StoreDatabase } from './database-schema.js';
import {
  toolDefinitionSchema,
  toolNameSchema,
  type ToolDefinition,
  type ToolDefinitionInput,
  type ToolRecord,
  type ToolVersionRecord,
} from './records.js';
import {
  checkDefinitionBudget,
  lockServer,
  MAX_TOOLS_PER_SERVER,
  toolStoredBytes,
} from './definition-budget.js';
import {
  definitionFromColumns,
  definitionToColumns,
  toolFromRow,
  toolVersionFromRow,
} from './row-mapping.js';
import {
  notFound,
  readOperation,
  requireServerId,
  validate,
  writeOperation,
  type StoreContext,
} from './store-context.js';
import { missingVersion, pruneVersions } from './version-retention.js';

/** The tools of a server, ordered by name; ERR_NOT_FOUND if the server is absent. */
export function listTools(context: StoreContext, subdomain: string): Promise<ToolRecord[]> {
  return readOperation(context, `listing tools of server "${subdomain}"`, async (db) => {
    const serverId = await requireServerId(db, subdomain);
    const rows = await db
      .selectFrom('tools')
      .selectAll()
      .where('server_id', '=', serverId)
      .orderBy('name')
      .execute();
    return rows.map((row) => toolFromRow({ ...row, subdomain }));
  });
}

/** One tool, or undefined when the server or the tool is absent. */
export function getTool(
  context: StoreContext,
  subdomain: string,
  name: string,
): Promise<ToolRecord | undefined> {
  return readOperation(context, `reading tool "${name}" of server "${subdomain}"`, async (db) => {
    const row = await db
      .selectFrom('tools')
      .innerJoin('servers', 'servers.id', 'tools.server_id')
      .selectAll('tools')
      .select('servers.subdomain')
      .where('servers.subdomain', '=', subdomain)
      .where('tools.name', '=', name)
      .executeTakeFirst();
    return row === undefined ? undefined : toolFromRow(row);
  });
}

/** Creates or replaces a tool; its version becomes the previous one + 1. */
export async function saveTool(
  context: StoreContext,
  subdomain: string,
  name: string,
  definition: ToolDefinitionInput,
): Promise<ToolRecord> {
  const validName = validate(toolNameSchema, name, 'tool name');
  const validDefinition = validate(toolDefinitionSchema, definition, `tool "${validName}"`);
  return writeOperation(
    context,
    `saving tool "${validName}" of server "${subdomain}"`,
    { subdomain, kind: 'tools', name: validName },
    async (trx) => {
      const serverId = await requireServerId(trx, subdomain);
      return saveDefinition(
        context,
        trx,
        { serverId, subdomain, name: validName },
        validDefinition,
      );
    },
  );
}

/** Deletes a tool with its history and pool settings; ERR_NOT_FOUND if absent. */
export async function deleteTool(
  context: StoreContext,
  subdomain: string,
  name: string,
): Promise<void> {
  await writeOperation(
    context,
    `deleting tool "${name}" of server "${subdomain}"`,
    { subdomain, kind: 'tools', name },
    async (trx) => {
      const serverId = await requireServerId(trx, subdomain);
      const result = await trx
        .deleteFrom('tools')
        .where('server_id', '=', serverId)
        .where('name', '=', name)
        .executeTakeFirst();
      if (result.numDeletedRows === 0n) throw notFound(`tool "${name}" of server "${subdomain}"`);
      await trx
        .deleteFrom('pool_settings')
        .where('server_id', '=', serverId)
        .where('tool_name', '=', name)
        .execute();
    },
  );
}

/** Every kept version of a tool, newest first; ERR_NOT_FOUND if the tool is absent. */
export function listToolVersions(
  context: StoreContext,
  subdomain: string,
  name: string,
): Promise<ToolVersionRecord[]> {
  return readOperation(context, `listing versions of tool "${name}"`, async (db) => {
    const tool = await db
      .selectFrom('tools')
      .innerJoin('servers', 'servers.id', 'tools.server_id')
      .select('tools.id')
      .where('servers.subdomain', '=', subdomain)
      .where('tools.name', '=', name)
      .executeTakeFirst();
    if (tool === undefined) throw notFound(`tool "${name}" of server "${subdomain}"`);
    const rows = await db
      .selectFrom('tool_versions')
      .selectAll()
      .where('tool_id', '=', tool.id)
      .orderBy('version', 'desc')
      .execute();
    return rows.map((row) => toolVersionFromRow(row, subdomain, name));
  });
}

/** Saves the snapshot of `version` as a new version; ERR_NOT_FOUND if tool or version is absent. */
export function rollbackTool(
  context: StoreContext,
  subdomain: string,
  name: string,
  version: number,
): Promise<ToolRecord> {
  return writeOperation(
    context,
    `rolling back tool "${name}" of server "${subdomain}"`,
    { subdomain, kind: 'tools', name },
    async (trx) => {
      const serverId = await requireServerId(trx, subdomain);
      const tool = await trx
        .selectFrom('tools')
        .select(['id', 'version'])
        .where('server_id', '=', serverId)
        .where('name', '=', name)
        .executeTakeFirst();
      if (tool === undefined) throw notFound(`tool "${name}" of server "${subdomain}"`);
      const snapshot = await trx
        .selectFrom('tool_versions')
        .selectAll()
        .where('tool_id', '=', tool.id)
        .where('version', '=', version)
        .executeTakeFirst();
      if (snapshot === undefined) {
        throw missingVersion(`tool "${name}"`, version, tool.version, context.versionRetention);
      }
      return saveDefinition(
        context,
        trx,
        { serverId, subdomain, name },
        definitionFromColumns(snapshot),
      );
    },
  );
}

async function saveDefinition(
  context: StoreContext,
  trx: Transaction<StoreDatabase>,
  target: { serverId: string; subdomain: string; name: string },
  definition: ToolDefinition,
): Promise<ToolRecord> {
  const now = context.now();
  const columns = definitionToColumns(definition);
  await lockServer(context, trx, target.serverId);
  const existing = await trx
    .selectFrom('tools')
    .select(['id', 'version', 'created_at'])
    .where('server_id', '=', target.serverId)
    .where('name', '=', target.name)
    // Concurrent saves of one tool on PostgreSQL queue here instead of colliding on the version.
    .$if(context.dialect === 'postgres', (query) => query.forUpdate())
    .executeTakeFirst();

  if (existing === undefined) await checkToolCount(trx, target.serverId);
  await checkDefinitionBudget(context, trx, target.serverId, {
    table: 'tools',
    id: existing?.id,
    bytes: toolStoredBytes(columns),
  });

  const id = existing?.id ?? randomUUID();
  const version = (existing?.version ?? 0) + 1;
  const createdAt = existing?.created_at ?? now;
  if (existing === undefined) {
    await trx
      .insertInto('tools')
      .values({
        id,
        server_id: target.serverId,
        name: target.name,
        ...columns,
        version,
        created_at: now,
        updated_at: now,
      })
      .execute();
  } else {
    await trx
      .updateTable('tools')
      .set({ ...columns, version, updated_at: now })
      .where('id', '=', id)
      .execute();
  }
  await trx
    .insertInto('tool_versions')
    .values({ tool_id: id, version, ...columns, saved_at: now })
    .execute();
  await pruneVersions(context, trx, { serverId: target.serverId, history: 'tool', itemId: id });
  return {
    subdomain: target.subdomain,
    name: target.name,
    ...definition,
    version,
    createdAt,
    updatedAt: now,
  };
}

async function checkToolCount(trx: Transaction<StoreDatabase>, serverId: string): Promise<void> {
  const { count } = await trx
    .selectFrom('tools')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('server_id', '=', serverId)
    .executeTakeFirstOrThrow();
  if (Number(count) >= MAX_TOOLS_PER_SERVER) {
    throw new McphostError(
      'ERR_VALIDATION',
      `a server holds at most ${MAX_TOOLS_PER_SERVER} tools; delete one first`,
    );
  }
}
