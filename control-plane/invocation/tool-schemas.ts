/**
 * Compiled `inputSchema` / `outputSchema` validators, once per tool version:
 * compiled on the first call that needs one (a tool nobody calls costs
 * nothing), kept in a bounded least-recently-used cache keyed by server, tool
 * and version, and reported as one path-naming message.
 *
 * A key alone cannot be trusted: a tool deleted and saved again restarts at
 * version 1 with another schema. An entry therefore keeps the JSON text it
 * was compiled from and is reused only for the same text. The text is
 * computed once per cached record object (records are replaced, never
 * changed), so a call on a warm tool compares nothing.
 */
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { createToolSchemaCompiler, type ToolJsonSchema } from '../store/index.js';

/** What the cache needs of a tool: where it lives, its version, its schemas. */
export interface SchemaBearingTool {
  readonly subdomain: string;
  readonly name: string;
  readonly version: number;
  readonly inputSchema?: ToolJsonSchema;
  readonly outputSchema?: ToolJsonSchema;
}

export type SchemaRole = 'inputSchema' | 'outputSchema';

/** A validation's answer: nothing wrong, or the first problem at its JSON path. */
export type SchemaCheck = { ok: true } | { ok: false; problem: string };

/** Compiled validators kept at most; one is a few kilobytes. Recompiling an evicted one takes about a millisecond. */
export const TOOL_SCHEMA_CACHE_ENTRIES = 1024;

interface CompiledSchema {
  readonly text: string;
  readonly validate: ValidateFunction;
}

export class ToolSchemaCache {
  readonly #capacity: number;
  /** Insertion order is recency order: a hit moves its key to the end. */
  readonly #entries = new Map<string, CompiledSchema>();
  /** JSON text of schema objects already seen (records are frozen and replaced on change). */
  readonly #texts = new WeakMap<ToolJsonSchema, string>();

  /** `capacity`: compiled schemas kept, at least 1. */
  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new TypeError(`ToolSchemaCache: capacity must be a positive integer, got ${capacity}`);
    }
    this.#capacity = capacity;
  }

  /** Compiled schemas held now. */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * Checks `value` against the tool's schema in `role`. The schema was
   * checked at save; should it still not compile (saved under other rules),
   * that is the problem reported.
   */
  check(tool: SchemaBearingTool, role: SchemaRole, value: unknown): SchemaCheck {
    const schema = tool[role];
    if (schema === undefined) return { ok: true };
    let validate: ValidateFunction;
    try {
      validate = this.#validator(tool, role, schema);
    } catch (error) {
      return { ok: false, problem: `the tool's ${role} does not compile: ${messageOf(error)}` };
    }
    try {
      if (validate(value)) return { ok: true };
    } catch (error) {
      // A recursive schema over very deeply nested data can run out of stack.
      return { ok: false, problem: `cannot be checked: ${messageOf(error)}` };
    }
    return { ok: false, problem: describeError(validate.errors?.[0]) };
  }

  #validator(tool: SchemaBearingTool, role: SchemaRole, schema: ToolJsonSchema): ValidateFunction {
    const key = `${tool.subdomain}\u0000${tool.name}\u0000${tool.version}\u0000${role}`;
    let text = this.#texts.get(schema);
    if (text === undefined) {
      text = JSON.stringify(schema);
      this.#texts.set(schema, text);
    }
    const known = this.#entries.get(key);
    if (known !== undefined && known.text === text) {
      this.#entries.delete(key);
      this.#entries.set(key, known);
      return known.validate;
    }
    const validate = createToolSchemaCompiler().compile(schema);
    this.#entries.delete(key);
    this.#entries.set(key, { text, validate });
    if (this.#entries.size > this.#capacity) {
      this.#entries.delete(this.#entries.keys().next().value!);
    }
    return validate;
  }
}

/** The cache every invocation uses. */
export const toolSchemas = new ToolSchemaCache(TOOL_SCHEMA_CACHE_ENTRIES);

/**
 * ajv's first error as `<JSON path> <what is wrong>`: `/items/0/id must be
 * integer`, `/address/city is required`, `/extra is not allowed`; the value
 * as a whole is `/`.
 */
export function describeError(error: ErrorObject | undefined): string {
  if (error === undefined) return '/ does not match';
  const at = error.instancePath;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${at}/${escapePointer(String(params.missingProperty))} is required`;
    case 'additionalProperties':
      return `${at}/${escapePointer(String(params.additionalProperty))} is not allowed (additionalProperties)`;
    case 'unevaluatedProperties':
      return `${at}/${escapePointer(String(params.unevaluatedProperty))} is not allowed (unevaluatedProperties)`;
    case 'enum': {
      const allowed = (params.allowedValues as unknown[] | undefined) ?? [];
      return `${at || '/'} must be one of ${allowed.map((value) => JSON.stringify(value)).join(', ')}`;
    }
    case 'const':
      return `${at || '/'} must be ${JSON.stringify(params.allowedValue)}`;
    default:
      return `${at || '/'} ${error.message ?? 'does not match'}`;
  }
}

function escapePointer(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
