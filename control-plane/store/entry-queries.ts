/**
 * Tools, prompts and resources of a server with their version history (see
 * entry-records.ts): the one mechanism for every kind. Every save (a
 * rollback too) validates the definition with its kind's schema, writes the
 * entry row and a snapshot in server_entry_versions in one transaction, one
 * version above the last, and checks what spans entries: a static resource's
 * URI is the server's only one, a server's entries and static contents stay
 * within their bounds, and its definitions within their budget
 * (definition-budget.ts); the history past its bounds is pruned
 * (version-retention.ts). Every write names the entry it changed, so caches
 * reload that entry alone.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely, Selectable, Transaction } from 'kysely';
import { McphostError } from '../errors.js';
import { jsonStringBytes } from '../json-size.js';
import type {
  ServerEntriesTable,
  ServerEntryVersionsTable,
  StoreDatabase,
} from './database-schema.js';
import {
  ENTRY_SPECS,
  MAX_ENTRIES_PER_KIND,
  MAX_TEMPLATES_PER_SERVER,
  type EntryDefinitions,
  type EntryInputs,
  type EntryKind,
  type EntryRecord,
  type EntryVersionRecord,
} from './entry-records.js';
import { checkDefinitionBudget, lockServer } from './definition-budget.js';
import type { ResourceDefinition } from './resource-records.js';
import {
  notFound,
  readOperation,
  requireServerId,
  validate,
  writeOperation,
  type StoreContext,
} from './store-context.js';
import { missingVersion, pruneVersions } from './version-retention.js';

type Db = Kysely<StoreDatabase> | Transaction<StoreDatabase>;

/** A server's entries of one kind, ordered by name; ERR_NOT_FOUND if the server is absent. */
export function listEntries<K extends EntryKind>(
  context: StoreContext,
  kind: K,
  subdomain: string,
): Promise<EntryRecord<K>[]> {
  const { plural } = ENTRY_SPECS[kind];
  return readOperation(context, `listing ${plural} of server "${subdomain}"`, async (db) => {
    const serverId = await requireServerId(db, subdomain);
    const rows = await db
      .selectFrom('server_entries')
      .selectAll()
      .where('server_id', '=', serverId)
      .where('kind', '=', kind)
      .orderBy('name')
      .execute();
    return rows.map((row) => entryFromRow<K>(row, subdomain));
  });
}

/** One entry, or undefined when the server or the entry is absent. */
export function getEntry<K extends EntryKind>(
  context: StoreContext,
  kind: K,
  subdomain: string,
  name: string,
): Promise<EntryRecord<K> | undefined> {
  const { noun } = ENTRY_SPECS[kind];
  return readOperation(
    context,
    `reading ${noun} "${name}" of server "${subdomain}"`,
    async (db) => {
      const row = await entryRow(db, kind, subdomain, name);
      return row === undefined ? undefined : entryFromRow<K>(row, subdomain);
    },
  );
}

/** Creates or replaces an entry; its version becomes the previous one + 1. */
export async function saveEntry<K extends EntryKind>(
  context: StoreContext,
  kind: K,
  subdomain: string,
  name: string,
  definition: EntryInputs[K],
): Promise<EntryRecord<K>> {
  const spec = ENTRY_SPECS[kind];
  const validName = validate(spec.name, name, `${spec.noun} name`);
  const valid = validate(spec.definition, definition, `${spec.noun} "${validName}"`);
  return writeOperation(
    context,
    `saving ${spec.noun} "${validName}" of server "${subdomain}"`,
    { subdomain, kind: spec.plural, name: validName },
    async (trx) => {
      const serverId = await requireServerId(trx, subdomain);
      return saveDefinition(context, trx, kind, { serverId, subdomain, name: validName }, valid);
    },
  );
}

/** Deletes an entry with its history; ERR_NOT_FOUND if absent. */
export async function deleteEntry(
  context: StoreContext,
  kind: EntryKind,
  subdomain: string,
  name: string,
): Promise<void> {
  const { noun, plural } = ENTRY_SPECS[kind];
  await writeOperation(
    context,
    `deleting ${noun} "${name}" of server "${subdomain}"`,
    { subdomain, kind: plural, name },
    async (trx) => {
      const serverId = await requireServerId(trx, subdomain);
      const result = await trx
        .deleteFrom('server_entries')
        .where('server_id', '=', serverId)
        .where('kind', '=', kind)
        .where('name', '=', name)
        .executeTakeFirst();
      if (result.numDeletedRows === 0n)
        throw notFound(`${noun} "${name}" of server "${subdomain}"`);
      // A tool's own pool (isolation "tool") is sized by name: a tool saved later starts afresh.
      if (kind === 'tool') {
        await trx
          .deleteFrom('pool_settings')
          .where('server_id', '=', serverId)
          .where('tool_name', '=', name)
          .execute();
      }
    },
  );
}

/** Every kept version of an entry, newest first; ERR_NOT_FOUND if the entry is absent. */
export function listEntryVersions<K extends EntryKind>(
  context: StoreContext,
  kind: K,
  subdomain: string,
  name: string,
): Promise<EntryVersionRecord<K>[]> {
  const { noun } = ENTRY_SPECS[kind];
  return readOperation(context, `listing versions of ${noun} "${name}"`, async (db) => {
    const entry = await entryRow(db, kind, subdomain, name);
    if (entry === undefined) throw notFound(`${noun} "${name}" of server "${subdomain}"`);
    const rows = await db
      .selectFrom('server_entry_versions')
      .selectAll()
      .where('entry_id', '=', entry.id)
      .orderBy('version', 'desc')
      .execute();
    return rows.map((row) => versionFromRow<K>(row, subdomain, name));
  });
}

/** Saves the snapshot of `version` as a new version; ERR_NOT_FOUND if entry or version is absent. */
export function rollbackEntry<K extends EntryKind>(
  context: StoreContext,
  kind: K,
  subdomain: string,
  name: string,
  version: number,
): Promise<EntryRecord<K>> {
  const spec = ENTRY_SPECS[kind];
  return writeOperation(
    context,
    `rolling back ${spec.noun} "${name}" of server "${subdomain}"`,
    { subdomain, kind: spec.plural, name },
    async (trx) => {
      const serverId = await requireServerId(trx, subdomain);
      const entry = await entryRow(trx, kind, subdomain, name);
      if (entry === undefined) throw notFound(`${spec.noun} "${name}" of server "${subdomain}"`);
      const snapshot = await trx
        .selectFrom('server_entry_versions')
        .select('definition')
        .where('entry_id', '=', entry.id)
        .where('version', '=', version)
        .executeTakeFirst();
      if (snapshot === undefined) {
        const what = `${spec.noun} "${name}"`;
        throw missingVersion(what, version, entry.version, context.versionRetention);
      }
      // Re-validated: what was valid then must still fit the bounds (and URIs) of now.
      const definition = validate(
        spec.definition,
        JSON.parse(snapshot.definition),
        `${spec.noun} "${name}" version ${version}`,
      );
      return saveDefinition(context, trx, kind, { serverId, subdomain, name }, definition);
    },
  );
}

async function saveDefinition<K extends EntryKind>(
  context: StoreContext,
  trx: Transaction<StoreDatabase>,
  kind: K,
  target: { serverId: string; subdomain: string; name: string },
  definition: EntryDefinitions[K],
): Promise<EntryRecord<K>> {
  const now = context.now();
  // The server's row first, then the entry's: every save of a server's
  // definitions in turn, so two cannot both pass the bounds checked below.
  await lockServer(context, trx, target.serverId);
  const existing = await trx
    .selectFrom('server_entries')
    .select(['id', 'version', 'created_at'])
    .where('server_id', '=', target.serverId)
    .where('kind', '=', kind)
    .where('name', '=', target.name)
    // Concurrent saves of one entry on PostgreSQL queue here instead of colliding on the version.
    .$if(context.dialect === 'postgres', (query) => query.forUpdate())
    .executeTakeFirst();
  const json = JSON.stringify(definition);
  const bytes = Buffer.byteLength(json, 'utf8');
  const resource = kind === 'resource' ? (definition as ResourceDefinition) : undefined;
  const columns = {
    definition: json,
    stored_bytes: bytes,
    uri: resource?.uri ?? null,
    uri_template: resource?.uriTemplate ?? null,
  };
  await checkServerBounds(context, trx, kind, target, existing?.id, bytes, resource);

  const id = existing?.id ?? randomUUID();
  const version = (existing?.version ?? 0) + 1;
  const createdAt = existing?.created_at ?? now;
  if (existing === undefined) {
    await trx
      .insertInto('server_entries')
      .values({
        id,
        server_id: target.serverId,
        kind,
        name: target.name,
        ...columns,
        version,
        created_at: now,
        updated_at: now,
      })
      .execute();
  } else {
    await trx
      .updateTable('server_entries')
      .set({ ...columns, version, updated_at: now })
      .where('id', '=', id)
      .execute();
  }
  await trx
    .insertInto('server_entry_versions')
    .values({ entry_id: id, version, definition: json, saved_at: now })
    .execute();
  await pruneVersions(context, trx, { serverId: target.serverId, entryId: id });
  return {
    subdomain: target.subdomain,
    name: target.name,
    ...definition,
    version,
    createdAt,
    updatedAt: now,
  } as EntryRecord<K>;
}

/**
 * What one entry's save must not break on its server: at most
 * MAX_ENTRIES_PER_KIND entries of a kind and MAX_TEMPLATES_PER_SERVER
 * templates, the server's definitions within their byte budget (every
 * replica holds them in memory), a static resource's contents within
 * what one read may answer, and one resource per URI or template. The
 * caller holds the server's row (PostgreSQL), so two saves of different
 * entries cannot both pass the checks and together break them.
 */
async function checkServerBounds(
  context: StoreContext,
  trx: Transaction<StoreDatabase>,
  kind: EntryKind,
  target: { serverId: string; name: string },
  existingId: string | undefined,
  bytes: number,
  resource: ResourceDefinition | undefined,
): Promise<void> {
  const { plural } = ENTRY_SPECS[kind];
  const others = trx
    .selectFrom('server_entries')
    .where('server_id', '=', target.serverId)
    .$if(existingId !== undefined, (query) => query.where('id', '!=', existingId!));
  const totals = await others
    .select((eb) => [
      eb.fn.count<number>(eb.case().when('kind', '=', kind).then(1).end()).as('sameKind'),
      eb.fn.count<number>('uri_template').as('templates'),
    ])
    .executeTakeFirstOrThrow();
  // Only a new entry counts: a server over the bound (from before it) still updates what it has.
  if (existingId === undefined && Number(totals.sameKind) >= MAX_ENTRIES_PER_KIND) {
    throw new McphostError(
      'ERR_VALIDATION',
      `a server holds at most ${MAX_ENTRIES_PER_KIND} ${plural}; delete one first`,
    );
  }
  await checkDefinitionBudget(context, trx, target.serverId, { id: existingId, bytes });
  if (resource === undefined) return;
  // Counted as a read sends them: text as a JSON string (a control character is 6 bytes), a blob in base64.
  const contents =
    resource.text !== undefined ? jsonStringBytes(resource.text) : (resource.blob?.length ?? 0) + 2;
  if (contents > context.staticResourceMaxBytes) {
    throw new McphostError(
      'ERR_VALIDATION',
      `a static resource holds at most ${context.staticResourceMaxBytes} bytes of JSON (TOOL_MAX_RESULT_BYTES: what one read may answer); this one takes ${contents}`,
    );
  }
  if (resource.uriTemplate !== undefined && Number(totals.templates) >= MAX_TEMPLATES_PER_SERVER) {
    throw new McphostError(
      'ERR_VALIDATION',
      `a server holds at most ${MAX_TEMPLATES_PER_SERVER} resource templates; delete one first`,
    );
  }
  const clash = await others
    .select(['name', 'uri'])
    .where('kind', '=', 'resource')
    .where((eb) =>
      resource.uri !== undefined
        ? eb('uri', '=', resource.uri)
        : eb('uri_template', '=', resource.uriTemplate!),
    )
    .executeTakeFirst();
  if (clash !== undefined) {
    throw new McphostError(
      'ERR_CONFLICT',
      `resource "${clash.name}" of this server already has ${resource.uri !== undefined ? `the uri ${resource.uri}` : `the uriTemplate ${resource.uriTemplate}`}`,
    );
  }
}

async function entryRow(
  db: Db,
  kind: EntryKind,
  subdomain: string,
  name: string,
): Promise<Selectable<ServerEntriesTable> | undefined> {
  return db
    .selectFrom('server_entries')
    .innerJoin('servers', 'servers.id', 'server_entries.server_id')
    .selectAll('server_entries')
    .where('servers.subdomain', '=', subdomain)
    .where('server_entries.kind', '=', kind)
    .where('server_entries.name', '=', name)
    .executeTakeFirst();
}

// Rows are trusted: they were validated when written. Absent optional fields stay absent.
// The record's names come first, then its definition, as every kind's answers read.
function entryFromRow<K extends EntryKind>(
  row: Selectable<ServerEntriesTable>,
  subdomain: string,
): EntryRecord<K> {
  return {
    subdomain,
    name: row.name,
    ...(JSON.parse(row.definition) as EntryDefinitions[K]),
    version: row.version,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  } as EntryRecord<K>;
}

function versionFromRow<K extends EntryKind>(
  row: Selectable<ServerEntryVersionsTable>,
  subdomain: string,
  name: string,
): EntryVersionRecord<K> {
  return {
    subdomain,
    name,
    ...(JSON.parse(row.definition) as EntryDefinitions[K]),
    version: row.version,
    savedAt: row.saved_at,
  } as EntryVersionRecord<K>;
}
