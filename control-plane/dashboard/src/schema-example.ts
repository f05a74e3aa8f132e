/**
 * A starting value for a JSON Schema: the arguments a test run is prefilled
 * with. Required properties only, each with its `const`, first `enum` value,
 * `default`, first example, or an empty value of its type; local `$ref`s are
 * followed. A guess to edit, not a promise: the server checks the real thing.
 */

type Schema = Record<string, unknown>;

/** Deepest nesting followed (recursive schemas end here). */
const MAX_DEPTH = 6;

/** An example value of `schema`, a schema of the document `root`. */
export function exampleOf(schema: unknown, root: unknown = schema, depth = 0): unknown {
  if (!isObject(schema) || depth > MAX_DEPTH) return null;
  if (typeof schema.$ref === 'string') {
    return exampleOf(resolveLocal(root, schema.$ref), root, depth + 1);
  }
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if ('default' in schema) return schema.default;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type ?? (isObject(schema.properties) ? 'object' : undefined)) {
    case 'object': {
      const value: Record<string, unknown> = {};
      const properties = isObject(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required) ? schema.required : [];
      for (const name of required) {
        if (typeof name === 'string') value[name] = exampleOf(properties[name], root, depth + 1);
      }
      return value;
    }
    case 'array': {
      const minItems = typeof schema.minItems === 'number' ? schema.minItems : 0;
      return minItems > 0 ? [exampleOf(schema.items, root, depth + 1)] : [];
    }
    case 'string':
      return '';
    case 'number':
    case 'integer':
      return typeof schema.minimum === 'number' ? schema.minimum : 0;
    case 'boolean':
      return false;
    default:
      return null;
  }
}

/** `#/$defs/name` (a JSON pointer into `root`); anything else resolves to nothing. */
function resolveLocal(root: unknown, reference: string): unknown {
  if (!reference.startsWith('#/')) return undefined;
  let at: unknown = root;
  for (const raw of reference.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    if (!isObject(at) || !Object.hasOwn(at, key)) return undefined;
    at = at[key];
  }
  return at;
}

function isObject(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
