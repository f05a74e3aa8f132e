/**
 * JSON Schema 2020-12 as tools declare it (`inputSchema`, `outputSchema`):
 * the one place that knows how mcphost reads such a schema. The store uses it
 * to refuse a schema at save, with the path of what is wrong; the invoker uses
 * `createToolSchemaCompiler()` to compile the very same way, so what saved is
 * what runs.
 *
 * Choices, and why:
 * - ajv's 2020-12 build (`ajv/dist/2020`), the dialect MCP names for tool
 *   schemas; a `$schema` other than 2020-12's is refused rather than read
 *   as something it is not.
 * - Strict about keywords (`strictSchema`): an unknown keyword is refused at
 *   save. JSON Schema ignores unknown keywords, so a typo (`"requierd"`,
 *   `"minLenght"`) would silently leave arguments unchecked while clients
 *   read the schema as a promise. Annotations have keywords of their own
 *   (`title`, `description`, `examples`, `default`, `deprecated`,
 *   `readOnly`, `writeOnly`, `$comment`).
 * - Not strict about types, tuples and `required` (`strictTypes`,
 *   `strictTuples`, `strictRequired` off): those reject schemas the
 *   specification calls valid (`{"minimum": 1}` without `type`, `required`
 *   naming a property `properties` does not list).
 * - `format` is an annotation, as 2020-12's default vocabulary has it
 *   (`validateFormats` off): no format is asserted, none is unknown. (The
 *   official SDK client does assert formats on `structuredContent`, through
 *   ajv-formats: checking outputs the same way needs that package as a
 *   dependency of ours.)
 * - Defaults are not applied, types are not coerced, extra properties are not
 *   removed: the tool receives the arguments the client sent, once they match.
 * - The first problem only (`allErrors` off): one path in one message, and a
 *   hostile argument cannot make validation collect errors without end.
 * - Each schema is compiled in a compiler of its own: a `$id` lives only
 *   there, so two tools (of two tenants) naming the same `$id` neither
 *   collide nor resolve each other's `$ref`s, and dropping the compiled
 *   validator frees everything it held.
 * - Size and depth are bounded at save (below), before ajv sees the schema.
 *
 * - `pattern` and `patternProperties` run on RE2's linear-time engine
 *   (re2js, a pure-JavaScript port; ajv's `code.regExp`), not JavaScript's
 *   backtracking one: arguments are checked on the control plane's thread,
 *   and with JavaScript's engine one operator's `^(a+)+$` would let any
 *   client stall every tenant (840 ms on 24 characters, measured). RE2 has no
 *   lookaround and no backreferences: a pattern using them is refused at save
 *   with the parser's message.
 */
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import { RE2JS } from 're2js';
import { z } from 'zod';

/** The only `$schema` a tool schema may name (and what an absent one means, per MCP). */
export const JSON_SCHEMA_2020_12 = 'https://json-schema.org/draft/2020-12/schema';
/** Largest tool schema, as JSON text, in characters. */
export const TOOL_SCHEMA_MAX_CHARACTERS = 65_536;
/** Deepest nesting of objects and arrays in a tool schema (the schema itself is depth 1). */
export const TOOL_SCHEMA_MAX_DEPTH = 64;

/** A tool schema as stored and published: a JSON object, kept exactly as written. */
export type ToolJsonSchema = Record<string, unknown>;

/** One problem of a schema; `path` is dotted and relative to the schema (empty: the schema itself). */
export interface ToolSchemaProblem {
  path: string;
  message: string;
}

/**
 * ajv's regular expressions, on RE2 (see above). ajv keys each compiled
 * pattern by its `toString()`, so the object answers with the pattern itself
 * (two patterns must never share a key); a pattern RE2 cannot parse fails the
 * way a JavaScript one does, so `compileProblem` finds where it sits. `code`
 * would name the engine in standalone code, which is not used here.
 */
const linearTimeRegExp = Object.assign(
  (pattern: string) => {
    let compiled: RE2JS;
    try {
      compiled = RE2JS.compile(pattern);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new SyntaxError(`Invalid regular expression: /${pattern}/: ${reason}`);
    }
    return { test: (text: string) => compiled.test(text), toString: () => `/${pattern}/` };
  },
  { code: 'linearTimeRegExp' },
);

const COMMON_OPTIONS = {
  code: { regExp: linearTimeRegExp },
  strictSchema: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  validateFormats: false,
  allErrors: false,
  // Never console output from the control plane; everything that matters is an error.
  logger: false,
} as const;

/**
 * A compiler for one tool schema: nothing shared with any other (see above).
 * Meta-schema checks happened at save, so it skips them (and the meta-schemas).
 */
export function createToolSchemaCompiler(): Ajv2020 {
  const compiler = new Ajv2020({ ...COMMON_OPTIONS, validateSchema: false, meta: false });
  return withAnchorKeyword(compiler);
}

// ajv resolves `$anchor` but does not list it as a keyword, so strict mode
// would call a 2020-12 core keyword unknown.
function withAnchorKeyword(compiler: Ajv2020): Ajv2020 {
  compiler.addKeyword({ keyword: '$anchor', schemaType: 'string' });
  return compiler;
}

// Checks schemas against the 2020-12 meta-schema; compiled once, on first use.
let metaSchemaChecker: Ajv2020 | undefined;

/**
 * A JSON Schema 2020-12 object schema of a tool, kept exactly as written (the
 * same object, key order included) as a zod field of the tool definition:
 * `toolSchemaProblems` checks it, each problem reported at its path.
 */
export function toolJsonSchema(what: string) {
  return z
    .custom<ToolJsonSchema>(
      (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
      'must be a JSON object (a JSON Schema 2020-12 schema)',
    )
    .superRefine((schema, context) => {
      for (const problem of toolSchemaProblems(schema)) {
        context.addIssue({
          code: 'custom',
          path: problem.path === '' ? [] : problem.path.split('.'),
          message: problem.message,
        });
      }
    })
    .meta({
      type: 'object',
      description: `${what}: a JSON Schema 2020-12 schema with "type": "object", published as written`,
    });
}

/** Everything wrong with `schema` as a tool schema; empty when it may be saved. */
export function toolSchemaProblems(schema: ToolJsonSchema): ToolSchemaProblem[] {
  const shape = shapeProblem(schema);
  if (shape) return [shape];
  if (schema.$schema !== undefined && schema.$schema !== JSON_SCHEMA_2020_12) {
    return [
      {
        path: '$schema',
        message: `must be "${JSON_SCHEMA_2020_12}" (the only dialect tool schemas are read in) or absent`,
      },
    ];
  }
  // MCP clients parse tools/list with this shape: a tool they cannot parse hides every tool of the server.
  if (schema.type !== 'object') {
    return [{ path: 'type', message: 'must be "object": MCP tool schemas describe an object' }];
  }
  const properties = schema.properties;
  if (properties !== undefined && isPlainObject(properties)) {
    for (const [name, property] of Object.entries(properties)) {
      if (!isPlainObject(property)) {
        return [
          {
            path: `properties.${name}`,
            message: 'must be a schema object (MCP clients refuse true/false here)',
          },
        ];
      }
    }
  }
  metaSchemaChecker ??= withAnchorKeyword(new Ajv2020({ ...COMMON_OPTIONS }));
  if (!metaSchemaChecker.validateSchema(schema)) {
    return (metaSchemaChecker.errors ?? []).slice(0, 1).map(metaProblem);
  }
  try {
    createToolSchemaCompiler().compile(schema);
  } catch (error) {
    return [compileProblem(schema, error instanceof Error ? error.message : String(error))];
  }
  return [];
}

/** Size, depth and keys before any JSON Schema reading: what ajv should never have to see. */
function shapeProblem(schema: ToolJsonSchema): ToolSchemaProblem | undefined {
  const text = JSON.stringify(schema);
  if (text.length > TOOL_SCHEMA_MAX_CHARACTERS) {
    return {
      path: '',
      message: `is ${text.length} characters of JSON; at most ${TOOL_SCHEMA_MAX_CHARACTERS}`,
    };
  }
  const pending: { value: unknown; path: string[] }[] = [{ value: schema, path: [] }];
  while (pending.length > 0) {
    const { value, path } = pending.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (path.length >= TOOL_SCHEMA_MAX_DEPTH) {
      return {
        path: path.join('.'),
        message: `is nested deeper than ${TOOL_SCHEMA_MAX_DEPTH} levels`,
      };
    }
    for (const [key, child] of Object.entries(value)) {
      // An object built from it by assignment would lose the key or change its prototype.
      if (key === '__proto__') {
        return { path: [...path, key].join('.'), message: 'a key may not be named __proto__' };
      }
      pending.push({ value: child, path: [...path, key] });
    }
  }
  return undefined;
}

function metaProblem(error: ErrorObject): ToolSchemaProblem {
  const path = pointerToPath(error.instancePath);
  const allowed = (error.params as { allowedValues?: unknown[] }).allowedValues;
  const message =
    error.keyword === 'enum' && allowed
      ? `must be one of ${allowed.map((value) => JSON.stringify(value)).join(', ')}`
      : (error.message ?? 'is not valid JSON Schema 2020-12');
  return { path, message };
}

/** ajv's compile errors carry no location: find the key or `$ref` they name. */
function compileProblem(schema: ToolJsonSchema, message: string): ToolSchemaProblem {
  const unknownKeyword = /^strict mode: unknown keyword: "(.+)"$/.exec(message)?.[1];
  if (unknownKeyword !== undefined) {
    const where = findPath(schema, (key) => key === unknownKeyword);
    return {
      path: where?.join('.') ?? '',
      message: `unknown keyword "${unknownKeyword}" (refused: a misspelt keyword would check nothing)`,
    };
  }
  const reference = /^can't resolve reference (.+) from id /.exec(message)?.[1];
  if (reference !== undefined) {
    const where = findPath(schema, (key, value) => key === '$ref' && value === reference);
    return {
      path: where?.join('.') ?? '',
      message: `$ref "${reference}" does not resolve inside this schema (only local references, e.g. #/$defs/name)`,
    };
  }
  const pattern = /^Invalid regular expression: \/(.*)\/[a-z]*: /s.exec(message)?.[1];
  if (pattern !== undefined) {
    const where = findPath(
      schema,
      (key, value) => (key === 'pattern' && value === pattern) || key === pattern,
    );
    return { path: where?.join('.') ?? '', message };
  }
  return { path: '', message: `does not compile: ${message}` };
}

/** The path of the first key (depth first) that `matches`. */
function findPath(
  value: unknown,
  matches: (key: string, value: unknown) => boolean,
  path: string[] = [],
): string[] | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, child] of Object.entries(value)) {
    if (matches(key, child)) return [...path, key];
    const found = findPath(child, matches, [...path, key]);
    if (found) return found;
  }
  return undefined;
}

/** `/properties/a~1b/type` → `properties.a/b.type` (the dotted paths of validation problems). */
export function pointerToPath(pointer: string): string {
  if (pointer === '') return '';
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .join('.');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
