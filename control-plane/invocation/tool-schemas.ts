/**
 * Compiled `inputSchema` / `outputSchema` validators, once per tool version,
 * and the one message a failed check gives. The cache lives in the
 * schema-check worker thread (schema-check-worker.ts), which compiles and
 * validates off the control plane's thread; it compiles on the first check
 * that needs a schema (a tool nobody calls costs nothing) and keeps a bounded
 * least-recently-used set keyed by server, tool, version and role.
 *
 * A key alone cannot be trusted: a tool deleted and saved again restarts at
 * version 1 with another schema. An entry therefore keeps the JSON text it
 * was compiled from and is reused only for the same text.
 */
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import type { createToolSchemaCompiler } from '../store/index.js';

export type SchemaRole = 'inputSchema' | 'outputSchema';

/** Which schema a value is checked against: one tool version's schema in one role, as JSON text. */
export interface SchemaSubject {
  readonly server: string;
  readonly tool: string;
  readonly version: number;
  readonly role: SchemaRole;
  /** The schema's JSON text, exactly as stored. */
  readonly schemaText: string;
}

/**
 * A check's answer: the value matches; it does not (`mismatch`: the first
 * problem at its JSON path); or it could not be checked (`unchecked`: the
 * schema does not compile, the check ran out of stack or time).
 */
export type SchemaCheck =
  { ok: true } | { ok: false; reason: 'mismatch' | 'unchecked'; problem: string };

/** Bounds and compiler of a {@link ToolSchemaCache}. */
export interface ToolSchemaCacheOptions {
  /** Compiled schemas kept at most; at least 1. */
  entries: number;
  /** Generated validation code kept at most over all entries, in characters; the newest entry stays even alone past it. */
  generatedCharacters: number;
  /** The store's compiler factory: what saved is what runs. */
  createCompiler: typeof createToolSchemaCompiler;
}

interface CompiledSchema {
  readonly text: string;
  readonly validate: ValidateFunction;
  /** Generated code it holds, in characters (its memory, roughly). */
  readonly characters: number;
}

export class ToolSchemaCache {
  readonly #options: ToolSchemaCacheOptions;
  /** Insertion order is recency order: a hit moves its key to the end. */
  readonly #entries = new Map<string, CompiledSchema>();
  #characters = 0;

  constructor(options: ToolSchemaCacheOptions) {
    for (const bound of ['entries', 'generatedCharacters'] as const) {
      if (!Number.isInteger(options[bound]) || options[bound] < 1) {
        throw new TypeError(
          `ToolSchemaCache: ${bound} must be a positive integer, got ${options[bound]}`,
        );
      }
    }
    this.#options = { ...options };
  }

  /** Compiled schemas held now. */
  get size(): number {
    return this.#entries.size;
  }

  /** Generated code held now, in characters. */
  get generatedCharacters(): number {
    return this.#characters;
  }

  /**
   * Checks `value` against the subject's schema. The schema was checked at
   * save; should it still not compile (saved under other rules), that is the
   * problem reported.
   */
  check(subject: SchemaSubject, value: unknown): SchemaCheck {
    let validate: ValidateFunction;
    try {
      validate = this.#validator(subject);
    } catch (error) {
      return {
        ok: false,
        reason: 'unchecked',
        problem: `it does not compile: ${messageOf(error)}`,
      };
    }
    try {
      if (validate(value)) return { ok: true };
    } catch (error) {
      // A recursive schema over very deeply nested data can run out of stack.
      return { ok: false, reason: 'unchecked', problem: messageOf(error) };
    }
    return { ok: false, reason: 'mismatch', problem: describeError(validate.errors?.[0]) };
  }

  #validator(subject: SchemaSubject): ValidateFunction {
    const key = `${subject.server}\u0000${subject.tool}\u0000${subject.version}\u0000${subject.role}`;
    const known = this.#entries.get(key);
    if (known !== undefined && known.text === subject.schemaText) {
      this.#entries.delete(key);
      this.#entries.set(key, known);
      return known.validate;
    }
    this.#drop(key);
    const compiler = this.#options.createCompiler();
    const validate = compiler.compile(JSON.parse(subject.schemaText));
    const characters = compiler.generatedCharacters;
    this.#entries.set(key, { text: subject.schemaText, validate, characters });
    this.#characters += characters;
    while (
      this.#entries.size > this.#options.entries ||
      (this.#characters > this.#options.generatedCharacters && this.#entries.size > 1)
    ) {
      this.#drop(this.#entries.keys().next().value!);
    }
    return validate;
  }

  #drop(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#characters -= entry.characters;
  }
}

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
