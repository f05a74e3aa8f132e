/**
 * Tool arguments against what the tool declares — a parameter list, or a
 * JSON Schema 2020-12 `inputSchema` — in both of their roles: the schema
 * clients see in `tools/list`, and the check every call passes before a
 * container is touched. Each role reads the same declaration.
 */
import type { ToolJsonSchema, ToolParameter } from '../store/index.js';
import type { SchemaBearingTool, SchemaChecker } from './schema-checker.js';

type ParameterDeclaration = ToolParameter;
type ParameterType = ToolParameter['type'];

export interface InputSchema {
  [key: string]: unknown;
  type: 'object';
  properties: Record<string, { type: ParameterType; description?: string }>;
  required?: string[];
  additionalProperties: false;
}

/** A tool as its arguments are checked: its declarations and, for the schema cache, its identity. */
export interface ArgumentDeclarations extends SchemaBearingTool {
  readonly parameters: readonly ParameterDeclaration[];
}

/** The `inputSchema` of a tool in `tools/list`: its own as written, or the one its parameters generate. */
export function publishedInputSchema(tool: ArgumentDeclarations): ToolJsonSchema {
  return tool.inputSchema ?? inputSchemaFor(tool.parameters);
}

/** The `inputSchema` that a parameter list generates. */
export function inputSchemaFor(parameters: readonly ParameterDeclaration[]): InputSchema {
  const properties: InputSchema['properties'] = {};
  for (const parameter of parameters) {
    properties[parameter.name] =
      parameter.description === undefined
        ? { type: parameter.type }
        : { type: parameter.type, description: parameter.description };
  }
  const required = parameters.filter((p) => p.required).map((p) => p.name);
  return required.length > 0
    ? { type: 'object', properties, required, additionalProperties: false }
    : { type: 'object', properties, additionalProperties: false };
}

export type ArgumentCheck =
  { ok: true; params: Record<string, unknown> } | { ok: false; message: string };

/**
 * Checks a call's arguments against the tool's declarations: its
 * `inputSchema` when it has one (in a worker thread, under a deadline), else
 * its parameter list (here and now: a few comparisons).
 */
export async function checkArguments(
  tool: ArgumentDeclarations,
  args: Record<string, unknown> | undefined,
  schemas: SchemaChecker,
): Promise<ArgumentCheck> {
  return tool.inputSchema === undefined
    ? checkDeclaredArguments(tool.parameters, args)
    : checkSchemaArguments(tool, args, schemas);
}

/**
 * Arguments against an `inputSchema` (absent arguments are `{}`): passed on
 * exactly as sent once they match — no defaults filled in, nothing coerced.
 */
async function checkSchemaArguments(
  tool: ArgumentDeclarations,
  args: Record<string, unknown> | undefined,
  schemas: SchemaChecker,
): Promise<ArgumentCheck> {
  const given = args ?? {};
  // Parsed from JSON it is an own key; copied into `params` by the protocol's
  // schema it would vanish without a word, so it is refused with one.
  if (Object.hasOwn(given, '__proto__')) {
    return { ok: false, message: 'an argument may not be named __proto__' };
  }
  const checked = await schemas.check(tool, 'inputSchema', given);
  if (checked.ok) return { ok: true, params: given };
  return {
    ok: false,
    message:
      checked.reason === 'mismatch'
        ? `arguments do not match inputSchema: ${checked.problem}`
        : `arguments could not be checked against inputSchema: ${checked.problem}`,
  };
}

/**
 * Checks arguments against a parameter list: every required parameter present,
 * each value of its declared type, nothing undeclared. `null` counts as absent
 * for optional parameters (clients send it for "no value").
 */
function checkDeclaredArguments(
  parameters: readonly ParameterDeclaration[],
  args: Record<string, unknown> | undefined,
): ArgumentCheck {
  const given = args ?? {};
  const declared = new Map(parameters.map((p) => [p.name, p]));
  for (const name of Object.keys(given)) {
    if (!declared.has(name)) {
      const known = parameters.map((p) => p.name).join(', ') || 'none';
      return { ok: false, message: `unknown parameter "${name}" (declared: ${known})` };
    }
  }
  // Own properties only: a parameter named toString or __proto__ must not find Object.prototype's.
  const params: Record<string, unknown> = Object.create(null);
  for (const parameter of parameters) {
    const value = Object.hasOwn(given, parameter.name) ? given[parameter.name] : undefined;
    if (value === undefined || (value === null && !parameter.required)) {
      if (parameter.required)
        return {
          ok: false,
          message: `missing required parameter "${parameter.name}" (${parameter.type})`,
        };
      continue;
    }
    const actual = typeOfValue(value);
    // An integer is also a number; a number is an integer only when whole.
    const matches =
      actual === parameter.type || (parameter.type === 'number' && actual === 'integer');
    if (!matches) {
      return {
        ok: false,
        message: `parameter "${parameter.name}" must be of type ${parameter.type}, got ${actual}`,
      };
    }
    params[parameter.name] = value;
  }
  return { ok: true, params };
}

function typeOfValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return 'non-finite number';
    return Number.isInteger(value) ? 'integer' : 'number';
  }
  return typeof value;
}
