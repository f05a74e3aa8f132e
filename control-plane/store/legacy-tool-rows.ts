/**
 * Tools as they were stored before migration 0013: one column per field of
 * the definition (JSON text for the structured ones, 0/1 for `strict`), in
 * `tools` and `tool_versions`. Since 0013 a tool is an entry like a prompt or
 * a resource (entry-records.ts); this file turns the old rows into entry
 * rows, for the migration and for a backup taken before it. Frozen: it
 * describes a layout that no longer changes.
 */

/** The definition columns of `tools` and `tool_versions` before 0013. */
export interface LegacyToolColumns {
  description: string;
  code: string;
  parameters: string;
  secret_names: string;
  limits: string;
  strict: number | boolean;
  title?: string | null;
  annotations?: string | null;
  input_schema?: string | null;
  output_schema?: string | null;
}

/** A `tools` row before 0013. */
export interface LegacyToolRow extends LegacyToolColumns {
  id: string;
  server_id: string;
  name: string;
  version: number;
  created_at: string;
  updated_at: string;
}

/** A `tool_versions` row before 0013. */
export interface LegacyToolVersionRow extends LegacyToolColumns {
  tool_id: string;
  version: number;
  saved_at: string;
}

/**
 * The definition the columns held, as the tool's save had validated it.
 * Metadata the tool did not have stays absent, so it reads back as it was saved.
 */
export function legacyToolDefinition(row: LegacyToolColumns): Record<string, unknown> {
  return {
    ...(row.title == null ? {} : { title: row.title }),
    description: row.description,
    code: row.code,
    parameters: JSON.parse(row.parameters),
    ...(row.input_schema == null ? {} : { inputSchema: JSON.parse(row.input_schema) }),
    ...(row.output_schema == null ? {} : { outputSchema: JSON.parse(row.output_schema) }),
    ...(row.annotations == null ? {} : { annotations: JSON.parse(row.annotations) }),
    secrets: JSON.parse(row.secret_names),
    limits: JSON.parse(row.limits),
    // PostgreSQL's driver and a backup's JSON both give a number; be lenient anyway.
    strict: row.strict === 1 || row.strict === true,
  };
}

/** The `server_entries` row of a pre-0013 tool. */
export function toolEntryRow(row: LegacyToolRow) {
  const definition = JSON.stringify(legacyToolDefinition(row));
  return {
    id: row.id,
    server_id: row.server_id,
    kind: 'tool',
    name: row.name,
    definition,
    stored_bytes: Buffer.byteLength(definition, 'utf8'),
    uri: null,
    uri_template: null,
    version: row.version,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** The `server_entry_versions` row of a pre-0013 tool version. */
export function toolEntryVersionRow(row: LegacyToolVersionRow) {
  return {
    entry_id: row.tool_id,
    version: row.version,
    definition: JSON.stringify(legacyToolDefinition(row)),
    saved_at: row.saved_at,
  };
}
