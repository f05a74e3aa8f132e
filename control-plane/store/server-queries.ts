/**
 * Hosted servers: list, read, create (a taken subdomain is ERR_CONFLICT),
 * change settings, delete (tools, versions, secrets and pool settings go with
 * the server through cascading foreign keys).
 */
import { randomUUID } from 'node:crypto';
import { McphostError } from '../errors.js';
import {
  newServerSchema,
  serverSettingsPatchSchema,
  serverSettingsSchema,
  serverTenancySchema,
  type NewServer,
  type ServerRecord,
  type ServerSettings,
  type ServerSettingsPatch,
  type ServerTenancy,
} from './records.js';
import { serverFromRow } from './row-mapping.js';
import {
  isUniqueViolation,
  notFound,
  readOperation,
  validate,
  writeOperation,
  type StoreContext,
} from './store-context.js';

/** Every server, ordered by subdomain. */
export function listServers(context: StoreContext): Promise<ServerRecord[]> {
  return readOperation(context, 'listing servers', async (db) => {
    const rows = await db.selectFrom('servers').selectAll().orderBy('subdomain').execute();
    return rows.map(serverFromRow);
  });
}

/** One server by subdomain, or undefined. */
export function getServer(
  context: StoreContext,
  subdomain: string,
): Promise<ServerRecord | undefined> {
  return readOperation(context, `reading server "${subdomain}"`, async (db) => {
    const row = await db
      .selectFrom('servers')
      .selectAll()
      .where('subdomain', '=', subdomain)
      .executeTakeFirst();
    return row === undefined ? undefined : serverFromRow(row);
  });
}

/** Creates a server in security mode "none", active. */
export async function createServer(context: StoreContext, input: NewServer): Promise<ServerRecord> {
  const { subdomain, name } = validate(newServerSchema, input, 'server');
  const now = context.now();
  const row = {
    id: randomUUID(),
    subdomain,
    name: name ?? subdomain,
    security_mode: 'none',
    oauth_server_url: null,
    oauth_metadata: null,
    oauth_audience: null,
    oauth_required_scopes: '[]',
    limits: '{}',
    tenancy: '{}',
    active: 1,
    created_at: now,
    updated_at: now,
  };
  try {
    await writeOperation(
      context,
      `creating server "${subdomain}"`,
      { subdomain, kind: 'server' },
      async (trx) => {
        const taken = await trx
          .selectFrom('servers')
          .select('id')
          .where('subdomain', '=', subdomain)
          .executeTakeFirst();
        if (taken !== undefined) throw subdomainTaken(subdomain);
        await trx.insertInto('servers').values(row).execute();
      },
    );
  } catch (error) {
    // Two creations racing past the check above: the unique index decides.
    if (isUniqueViolation((error as Error).cause)) throw subdomainTaken(subdomain);
    throw error;
  }
  return serverFromRow(row);
}

/** Applies a settings patch; oauth2 mode needs an AS URL and its metadata snapshot. */
export async function updateServerSettings(
  context: StoreContext,
  subdomain: string,
  patch: ServerSettingsPatch,
): Promise<ServerRecord> {
  const validPatch = validate(serverSettingsPatchSchema, patch, 'server settings');
  return writeOperation(
    context,
    `updating settings of server "${subdomain}"`,
    { subdomain, kind: 'server' },
    async (trx) => {
      const current = await trx
        .selectFrom('servers')
        .selectAll()
        .where('subdomain', '=', subdomain)
        .executeTakeFirst();
      if (current === undefined) throw notFound(`server "${subdomain}"`);
      const existing = serverFromRow(current);
      const merged: ServerSettings = validate(
        serverSettingsSchema,
        { ...settingsOf(existing), ...validPatch },
        'server settings',
      );
      if (
        merged.securityMode === 'oauth2' &&
        (merged.oauthServerUrl === null || merged.oauthMetadata === null)
      ) {
        throw new McphostError(
          'ERR_VALIDATION',
          'security mode "oauth2" needs oauthServerUrl and the validated oauthMetadata',
        );
      }
      const updatedAt = context.now();
      await trx
        .updateTable('servers')
        .set({
          name: merged.name,
          security_mode: merged.securityMode,
          oauth_server_url: merged.oauthServerUrl,
          oauth_metadata:
            merged.oauthMetadata === null ? null : JSON.stringify(merged.oauthMetadata),
          oauth_audience: merged.oauthAudience,
          oauth_required_scopes: JSON.stringify(merged.oauthRequiredScopes),
          limits: JSON.stringify(merged.limits),
          tenancy: JSON.stringify(tenancyOf(merged)),
          active: merged.active ? 1 : 0,
          updated_at: updatedAt,
        })
        .where('id', '=', existing.id)
        .execute();
      return { ...existing, ...merged, updatedAt };
    },
  );
}

/** Deletes a server and everything that belongs to it; ERR_NOT_FOUND if absent. */
export async function deleteServer(context: StoreContext, subdomain: string): Promise<void> {
  await writeOperation(
    context,
    `deleting server "${subdomain}"`,
    { subdomain, kind: 'server' },
    async (trx) => {
      const result = await trx
        .deleteFrom('servers')
        .where('subdomain', '=', subdomain)
        .executeTakeFirst();
      if (result.numDeletedRows === 0n) throw notFound(`server "${subdomain}"`);
    },
  );
}

function settingsOf(server: ServerRecord): ServerSettings {
  return fieldsOf(server, serverSettingsSchema.shape);
}

function tenancyOf(settings: ServerTenancy): ServerTenancy {
  return fieldsOf(settings, serverTenancySchema.shape);
}

/** The fields a schema names, taken from a larger record (what is stored, and nothing else). */
function fieldsOf<T extends object, Shape extends object>(
  record: T,
  shape: Shape,
): Pick<T, Extract<keyof Shape, keyof T>> {
  const picked: Partial<T> = {};
  for (const key of Object.keys(shape) as (keyof T)[]) picked[key] = record[key];
  return picked as Pick<T, Extract<keyof Shape, keyof T>>;
}

function subdomainTaken(subdomain: string): McphostError {
  return new McphostError('ERR_CONFLICT', `a server with subdomain "${subdomain}" already exists`);
}
