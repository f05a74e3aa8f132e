/**
 * The compiler of tool schemas, as the store's save-time check
 * (tool-json-schema.ts, which explains each choice) and the schema-check
 * workers (invocation/schema-check-worker.ts) both use it: what saved is what
 * runs. A file of its own so that a worker loads ajv and RE2 only — neither
 * zod nor the rest of the store (zod alone took 1.5 s to load under tsx on a
 * loaded machine; a worker replaced after an overrun should be back at once).
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { RE2JS } from 're2js';

/** A tool schema as stored and published: a JSON object, kept exactly as written. */
export type ToolJsonSchema = Record<string, unknown>;

/**
 * Most JavaScript ajv may generate for one tool schema, in characters (all
 * its functions together). 128 K compiles in 40–110 ms in a freshly started
 * worker, well within the default check deadline (250 ms); it is about 135
 * string properties with a minLength and a maxLength each.
 */
export const TOOL_SCHEMA_MAX_CODE_CHARACTERS = 131_072;

/**
 * ajv's regular expressions, on RE2 (tool-json-schema.ts says why). ajv keys each compiled
 * pattern by its `toString()`, so the object answers with the pattern itself
 * (two patterns must never share a key); a pattern RE2 cannot parse fails the
 * way a JavaScript one does, so the save-time check (`compileProblem`) finds
 * where it sits. `code`
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

/** ajv's options for tool schemas (tool-json-schema.ts says why each). */
export const COMMON_OPTIONS = {
  code: { regExp: linearTimeRegExp, optimize: false },
  inlineRefs: false,
  strictSchema: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  validateFormats: false,
  allErrors: false,
  // Never console output from the control plane; everything that matters is an error.
  logger: false,
} as const;

/** Compiles one tool schema; see {@link createToolSchemaCompiler}. */
export interface ToolSchemaCompiler {
  /** The validator of `schema`; throws as ajv does, and past TOOL_SCHEMA_MAX_CODE_CHARACTERS. */
  compile(schema: ToolJsonSchema): ValidateFunction;
  /** Characters of JavaScript generated so far (what a compiled validator holds on to). */
  readonly generatedCharacters: number;
}

/**
 * A compiler for one tool schema: nothing shared with any other (a `$id` lives
 * only there; tool-json-schema.ts).
 * Meta-schema checks happened at save, so it skips them (and the meta-schemas).
 */
export function createToolSchemaCompiler(): ToolSchemaCompiler {
  let generatedCharacters = 0;
  // ajv hands over each function's code before turning it into one: the
  // count stops a schema there, before the JavaScript parser pays for it.
  const countCode = (source: string) => {
    generatedCharacters += source.length;
    if (generatedCharacters > TOOL_SCHEMA_MAX_CODE_CHARACTERS) {
      throw new RangeError(
        `${CODE_TOO_LARGE} (over ${TOOL_SCHEMA_MAX_CODE_CHARACTERS} characters); split it, or use fewer keywords`,
      );
    }
    return source;
  };
  const compiler = withAnchorKeyword(
    new Ajv2020({
      ...COMMON_OPTIONS,
      code: { ...COMMON_OPTIONS.code, process: countCode },
      validateSchema: false,
      meta: false,
    }),
  );
  return {
    compile: (schema) => compiler.compile(schema),
    get generatedCharacters() {
      return generatedCharacters;
    },
  };
}

/** How a compile past TOOL_SCHEMA_MAX_CODE_CHARACTERS fails (its message begins so). */
export const CODE_TOO_LARGE = 'needs too much validation code';

// ajv resolves `$anchor` but does not list it as a keyword, so strict mode
// would call a 2020-12 core keyword unknown.
export function withAnchorKeyword(compiler: Ajv2020): Ajv2020 {
  compiler.addKeyword({ keyword: '$anchor', schemaType: 'string' });
  // MCP's header mark (SEP-2243): an annotation for clients; its rules are mcp-header-declarations.ts's.
  compiler.addKeyword({ keyword: 'x-mcp-header' });
  return compiler;
}
