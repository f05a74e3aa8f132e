/**
 * Tools as they were stored before migration 0013: one column per field of
 * the definition (JSON text for the structured ones, 0/1 for `strict`), in
 * `tools` and `tool_versions`. Since 0013 a tool is an entry like a prompt or
 * a resource (entry-records.ts); this file turns the old rows into entry
 * rows, for the migration and for a backup taken before it. A backup is an
 * admin's file, so each row is checked on the way: a row that is not what
 * the old store wrote is refused, naming the tool and the column. Frozen: it
 * describes a layout that no longer changes.
 */
import { z } from 'zod';

/** Text holding JSON that `shape` accepts; the value is the parsed JSON as it was (key order kept). */
function jsonText(shape: z.ZodType) {
  return z.string().transform((text, context) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      context.addIssue({ code: 'custom', message: 'is not JSON text' });
      return z.NEVER;
    }
    if (!shape.safeParse(parsed).success) {
      context.addIssue({ code: 'custom', message: 'holds JSON of the wrong shape' });
      return z.NEVER;
    }
    return parsed;
  });
}

const jsonObject = z.record(z.string(), z.unknown());

/** The definition columns of `tools` and `tool_versions` before 0013. */
const legacyColumnsSchema = z.object({
  description: z.string(),
  code: z.string(),
  parameters: jsonText(z.array(jsonObject)),
  secret_names: jsonText(z.array(z.string())),
  limits: jsonText(jsonObject),
  // A number from either database's driver, and in a backup's JSON; a boolean is read as meant.
  strict: z.union([z.literal(0), z.literal(1), z.boolean()]),
  title: z.string().nullish(),
  annotations: jsonText(jsonObject).nullish(),
  input_schema: jsonText(jsonObject).nullish(),
  output_schema: jsonText(jsonObject).nullish(),
});

const version = z.number().int().positive();
const time = z.string().min(1);

const legacyToolSchema = legacyColumnsSchema.extend({
  id: z.string().min(1),
  server_id: z.string().min(1),
  name: z.string().min(1),
  version,
  created_at: time,
  updated_at: time,
});

const legacyVersionSchema = legacyColumnsSchema.extend({
  tool_id: z.string().min(1),
  version,
  saved_at: time,
});

/** A `tools` row before 0013, as stored. */
export type LegacyToolRow = z.input<typeof legacyToolSchema>;
/** A `tool_versions` row before 0013, as stored. */
export type LegacyToolVersionRow = z.input<typeof legacyVersionSchema>;

/** A row that is not what the old store wrote. */
export class MalformedToolRow extends Error {}

function checked<T extends z.ZodType>(schema: T, row: unknown, what: string): z.output<T> {
  const result = schema.safeParse(row);
  if (result.success) return result.data;
  const problems = result.error.issues.map(
    (issue) => `${issue.path.join('.') || 'the row'} ${issue.message}`,
  );
  throw new MalformedToolRow(`${what}: ${problems.join('; ')}`);
}

/**
 * The definition the columns held, as the tool's save had validated it.
 * Metadata the tool did not have stays absent, so it reads back as it was saved.
 */
function definitionOf(columns: z.output<typeof legacyColumnsSchema>): string {
  return JSON.stringify({
    ...(columns.title == null ? {} : { title: columns.title }),
    description: columns.description,
    code: columns.code,
    parameters: columns.parameters,
    ...(columns.input_schema == null ? {} : { inputSchema: columns.input_schema }),
    ...(columns.output_schema == null ? {} : { outputSchema: columns.output_schema }),
    ...(columns.annotations == null ? {} : { annotations: columns.annotations }),
    secrets: columns.secret_names,
    limits: columns.limits,
    strict: columns.strict === 1 || columns.strict === true,
  });
}

/** The `server_entries` row of a pre-0013 tool; MalformedToolRow when it is not one. */
export function toolEntryRow(row: LegacyToolRow) {
  const tool = checked(legacyToolSchema, row, `tool ${describe(row)}`);
  const definition = definitionOf(tool);
  return {
    id: tool.id,
    server_id: tool.server_id,
    kind: 'tool',
    name: tool.name,
    definition,
    stored_bytes: Buffer.byteLength(definition, 'utf8'),
    uri: null,
    uri_template: null,
    version: tool.version,
    created_at: tool.created_at,
    updated_at: tool.updated_at,
  };
}

/** The `server_entry_versions` row of a pre-0013 tool version; MalformedToolRow when it is not one. */
export function toolEntryVersionRow(row: LegacyToolVersionRow) {
  const saved = checked(
    legacyVersionSchema,
    row,
    `version ${String((row as { version?: unknown })?.version)} of tool ${String((row as { tool_id?: unknown })?.tool_id)}`,
  );
  return {
    entry_id: saved.tool_id,
    version: saved.version,
    definition: definitionOf(saved),
    saved_at: saved.saved_at,
  };
}

function describe(row: unknown): string {
  const { id, name } = (row ?? {}) as { id?: unknown; name?: unknown };
  return `${String(id)}${typeof name === 'string' ? ` ("${name}")` : ''}`;
}
