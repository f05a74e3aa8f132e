/**
 * Conversions between table rows (text JSON, 0/1 booleans) and the domain
 * records the store hands out. Rows are trusted: they were validated when
 * written.
 */
import type { Selectable } from 'kysely';
import type { InvocationsTable, PoolSettingsTable, ServersTable } from './database-schema.js';
import { DEFAULT_SERVER_TENANCY } from './records.js';
import type {
  CodeKind,
  InvocationRecord,
  PoolSettingsRecord,
  ServerRecord,
  SecurityMode,
} from './records.js';

/** A servers row as a ServerRecord. */
export function serverFromRow(row: Selectable<ServersTable>): ServerRecord {
  return {
    id: row.id,
    subdomain: row.subdomain,
    name: row.name,
    securityMode: row.security_mode as SecurityMode,
    oauthServerUrl: row.oauth_server_url,
    oauthMetadata: row.oauth_metadata === null ? null : JSON.parse(row.oauth_metadata),
    oauthAudience: row.oauth_audience,
    oauthRequiredScopes: JSON.parse(row.oauth_required_scopes),
    limits: JSON.parse(row.limits),
    ...DEFAULT_SERVER_TENANCY,
    ...JSON.parse(row.tenancy),
    active: row.active === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** A pool_settings row (with its server's subdomain) as a PoolSettingsRecord. */
export function poolSettingsFromRow(
  row: Selectable<PoolSettingsTable> & { subdomain: string },
): PoolSettingsRecord {
  return {
    subdomain: row.subdomain,
    tool: row.tool_name,
    minWarm: row.min_warm,
    maxSize: row.max_size,
    updatedAt: row.updated_at,
  };
}

/** An invocation as an insertable row. */
export function invocationToRow(entry: InvocationRecord): Omit<
  InvocationsTable,
  'seq' | 'kind' | 'input_rounds'
> & {
  kind: string;
  input_rounds: number;
} {
  return {
    id: entry.id,
    at: entry.at,
    server: entry.server,
    kind: entry.kind,
    tool: entry.tool,
    version: entry.version,
    // performance.now() durations are fractional; the column holds whole milliseconds.
    duration_ms: Math.round(entry.durationMs),
    ok: entry.ok ? 1 : 0,
    error_code: entry.errorCode,
    error_message: entry.errorMessage,
    logs: JSON.stringify(entry.logs),
    caller: JSON.stringify(entry.caller ?? null),
    request_id: entry.requestId,
    client_address: entry.client,
    era: entry.era,
    input_rounds: entry.inputRounds,
  };
}

/** An invocations row as an InvocationRecord. */
export function invocationFromRow(row: Selectable<InvocationsTable>): InvocationRecord {
  return {
    id: row.id,
    at: row.at,
    server: row.server,
    kind: row.kind as CodeKind,
    tool: row.tool,
    version: row.version,
    durationMs: row.duration_ms,
    ok: row.ok === 1,
    errorCode: row.error_code,
    errorMessage: row.error_message,
    logs: JSON.parse(row.logs),
    caller: JSON.parse(row.caller),
    requestId: row.request_id,
    client: row.client_address,
    era: row.era === 'legacy' || row.era === 'modern' ? row.era : null,
    inputRounds: row.input_rounds,
  };
}
