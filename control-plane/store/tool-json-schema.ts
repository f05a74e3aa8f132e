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
 * - Size and depth are bounded at save (below), before ajv sees the schema;
 *   so is every number (finite: JSON has no 1e400, it would be stored back
 *   as null).
 * - `$ref`s are compiled as calls, never inlined (`inlineRefs` off): inlined,
 *   each use of a definition copies its code, and a 20 KB schema took 61 s
 *   and 1.8 GB to compile. Without inlining, generated code grows with the
 *   schema (about 20 characters of code per character of schema, 50 at
 *   worst), and it is bounded too: a schema whose code passes
 *   TOOL_SCHEMA_MAX_CODE_CHARACTERS is refused, so that what saved compiles
 *   within the invoker's check deadline. ajv's optimiser passes are off
 *   (`code.optimize`): they cost three to five times the rest of compiling
 *   and make the code 7% smaller, no faster (measured).
 * - `uniqueItems` compares any two items unless they are scalars: quadratic
 *   in the array's length (a 4 MB array, 40 minutes). It is refused unless
 *   `items` declares scalar types (ajv then hashes them) or `maxItems` is at
 *   most TOOL_SCHEMA_MAX_UNIQUE_ITEMS.
 * - Schemas whose validation multiplies its work with each level of a value
 *   (alternatives that each go into the same property of a recursive `$ref`:
 *   a 200-byte schema took a minute over a value 30 levels deep), or whose
 *   work at one place of a value passes TOOL_SCHEMA_MAX_WEIGHT, are refused,
 *   naming the subschema (tool-schema-cost.ts reads that from the schema).
 * - Validation itself runs off the control plane's thread, under a deadline
 *   (invocation/schema-checker.ts): what the reading above cannot follow
 *   (dynamic references, other `$id`s) is saved, and checked as possibly slow.
 *
 * - `pattern` and `patternProperties` run on RE2's linear-time engine
 *   (re2js, a pure-JavaScript port; ajv's `code.regExp`), not JavaScript's
 *   backtracking one: with JavaScript's engine one operator's `^(a+)+$`
 *   would let any client take a whole check deadline with 30 characters.
 *   RE2 has no lookaround and no backreferences: a pattern using them is
 *   refused at save with the parser's message. A pattern must also be a
 *   JavaScript (`u` flag) regular expression: clients compile published
 *   schemas with one (the official SDK client compiles every outputSchema in
 *   `listTools()`), so RE2-only syntax (`(?i)`, `\z`, `[[:alpha:]]`) would
 *   break them. Both engines read the pattern, with a few differences
 *   (docs/tool-code.md).
 */
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import { MCP_HEADER_KEYWORD, mcpHeaderDeclarations } from './mcp-header-declarations.js';
import { z } from 'zod';
import {
  CODE_TOO_LARGE,
  COMMON_OPTIONS,
  createToolSchemaCompiler,
  withAnchorKeyword,
  type ToolJsonSchema,
} from './tool-schema-compiler.js';
import { schemaCost } from './tool-schema-cost.js';

export {
  createToolSchemaCompiler,
  TOOL_SCHEMA_MAX_CODE_CHARACTERS,
  type ToolJsonSchema,
  type ToolSchemaCompiler,
} from './tool-schema-compiler.js';

/** The only `$schema` a tool schema may name (and what an absent one means, per MCP). */
export const JSON_SCHEMA_2020_12 = 'https://json-schema.org/draft/2020-12/schema';
/** Largest tool schema, as JSON text, in characters. */
export const TOOL_SCHEMA_MAX_CHARACTERS = 65_536;
/** Deepest nesting of objects and arrays in a tool schema (the schema itself is depth 1). */
export const TOOL_SCHEMA_MAX_DEPTH = 64;
/** Longest array `uniqueItems` may compare item by item (`maxItems`), when items are not scalars. */
export const TOOL_SCHEMA_MAX_UNIQUE_ITEMS = 1000;

/** One problem of a schema; `path` is dotted and relative to the schema (empty: the schema itself). */
export interface ToolSchemaProblem {
  path: string;
  message: string;
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
      const problems = toolSchemaProblems(schema);
      // Header marks mean something only on inputs (the client mirrors arguments into headers).
      if (problems.length === 0) {
        const marks = mcpHeaderDeclarations(what === 'inputSchema' ? schema : { properties: {} });
        if (!marks.ok) problems.push({ path: marks.path, message: marks.message });
        else if (
          what !== 'inputSchema' &&
          JSON.stringify(schema).includes(`"${MCP_HEADER_KEYWORD}"`)
        ) {
          problems.push({ path: '', message: `${MCP_HEADER_KEYWORD} marks inputs only` });
        }
      }
      for (const problem of problems) {
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

/** Schemas checked lately, by JSON text: a save parses its definition twice (API, then store). */
const RECENTLY_CHECKED = 16;
const recentProblems = new Map<string, readonly ToolSchemaProblem[]>();

/** Everything wrong with `schema` as a tool schema; empty when it may be saved. */
export function toolSchemaProblems(schema: ToolJsonSchema): ToolSchemaProblem[] {
  const text = JSON.stringify(schema);
  // Shape first: it finds what the text cannot show (1e400 reads as null there).
  const shape = shapeProblem(schema, text);
  if (shape) return [shape];
  let problems = recentProblems.get(text);
  if (problems === undefined) {
    problems = schemaProblems(schema);
    if (recentProblems.size >= RECENTLY_CHECKED) {
      recentProblems.delete(recentProblems.keys().next().value!);
    }
  }
  recentProblems.delete(text);
  recentProblems.set(text, problems);
  return [...problems];
}

/** What JSON Schema 2020-12, MCP clients and the validator make of a schema of a sound shape. */
function schemaProblems(schema: ToolJsonSchema): ToolSchemaProblem[] {
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
  const keywordProblem = findKeywordProblem(schema, []);
  if (keywordProblem) return [keywordProblem];
  try {
    createToolSchemaCompiler().compile(schema);
  } catch (error) {
    return [compileProblem(schema, error instanceof Error ? error.message : String(error))];
  }
  // What compiles may still not validate in time: schemas whose work multiplies
  // with each level of a value, or is huge at one place (tool-schema-cost.ts).
  const cost = schemaCost(schema);
  if (cost.kind === 'unbounded') return [{ path: cost.path, message: cost.message }];
  return [];
}

/** Size, depth, keys and numbers before any JSON Schema reading: what ajv should never have to see. */
function shapeProblem(schema: ToolJsonSchema, text: string): ToolSchemaProblem | undefined {
  if (text.length > TOOL_SCHEMA_MAX_CHARACTERS) {
    return {
      path: '',
      message: `is ${text.length} characters of JSON; at most ${TOOL_SCHEMA_MAX_CHARACTERS}`,
    };
  }
  const pending: { value: unknown; path: string[] }[] = [{ value: schema, path: [] }];
  while (pending.length > 0) {
    const { value, path } = pending.pop()!;
    if (typeof value === 'number' && !Number.isFinite(value)) {
      return {
        path: path.join('.'),
        message: 'must be a finite number (1e400 reads as Infinity, which JSON stores as null)',
      };
    }
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

// Where 2020-12 keywords hold subschemas (ajv's 2020 vocabularies); anything
// else (const, enum, default, examples…) is data, whatever its keys say.
const ONE_SUBSCHEMA = new Set([
  'additionalProperties',
  'contains',
  'contentSchema',
  'else',
  'if',
  'items',
  'not',
  'propertyNames',
  'then',
  'unevaluatedItems',
  'unevaluatedProperties',
]);
const NAMED_SUBSCHEMAS = new Set([
  '$defs',
  'definitions',
  'dependencies',
  'dependentSchemas',
  'patternProperties',
  'properties',
]);
const LISTED_SUBSCHEMAS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null']);

/**
 * The first keyword, depth first, that validates in more than linear time or
 * that clients cannot read: `uniqueItems` over arbitrary items, a pattern
 * JavaScript cannot compile. (The meta-schema has checked every type.)
 */
function findKeywordProblem(schema: unknown, path: string[]): ToolSchemaProblem | undefined {
  if (!isPlainObject(schema)) return undefined;
  if (schema.uniqueItems === true && !uniqueItemsAreLinear(schema)) {
    return {
      path: [...path, 'uniqueItems'].join('.'),
      message:
        `needs "items" with scalar types (${[...SCALAR_TYPES].join(', ')}) or "maxItems" ` +
        `of at most ${TOOL_SCHEMA_MAX_UNIQUE_ITEMS}: other items are compared two by two, ` +
        'in time that grows with the square of their number',
    };
  }
  const patterns: [string[], string][] = [];
  if (typeof schema.pattern === 'string') patterns.push([[...path, 'pattern'], schema.pattern]);
  if (isPlainObject(schema.patternProperties)) {
    for (const key of Object.keys(schema.patternProperties)) {
      patterns.push([[...path, 'patternProperties', key], key]);
    }
  }
  for (const [where, pattern] of patterns) {
    const problem = javaScriptPatternProblem(pattern);
    if (problem !== undefined) return { path: where.join('.'), message: problem };
  }
  for (const [keyword, value] of Object.entries(schema)) {
    let found: ToolSchemaProblem | undefined;
    if (ONE_SUBSCHEMA.has(keyword)) {
      found = findKeywordProblem(value, [...path, keyword]);
    } else if (NAMED_SUBSCHEMAS.has(keyword) && isPlainObject(value)) {
      for (const [name, child] of Object.entries(value)) {
        found ??= findKeywordProblem(child, [...path, keyword, name]);
      }
    } else if (LISTED_SUBSCHEMAS.has(keyword) && Array.isArray(value)) {
      value.forEach((child, index) => {
        found ??= findKeywordProblem(child, [...path, keyword, String(index)]);
      });
    }
    if (found) return found;
  }
  return undefined;
}

/** ajv hashes items when `items` names only scalar types; else a short array is compared pairwise. */
function uniqueItemsAreLinear(schema: Record<string, unknown>): boolean {
  const types = isPlainObject(schema.items) ? schema.items.type : undefined;
  const listed = typeof types === 'string' ? [types] : Array.isArray(types) ? types : [];
  if (listed.length > 0 && listed.every((type) => SCALAR_TYPES.has(type as string))) return true;
  return typeof schema.maxItems === 'number' && schema.maxItems <= TOOL_SCHEMA_MAX_UNIQUE_ITEMS;
}

/** Clients compile patterns as JavaScript does, with the `u` flag (ajv's default); undefined when they can. */
function javaScriptPatternProblem(pattern: string): string | undefined {
  try {
    new RegExp(pattern, 'u');
    return undefined;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return `is not a JavaScript regular expression, which MCP clients check with (${reason}); write it in the syntax RE2 and JavaScript share`;
  }
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
  if (message.startsWith(CODE_TOO_LARGE)) return { path: '', message };
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
