/**
 * `x-mcp-header` (MCP 2026-07-28, Streamable HTTP "Custom Headers", SEP-2243):
 * a tool's `inputSchema` may mark a primitive property so that clients mirror
 * its value into an `Mcp-Param-{Name}` header of each `tools/call`, for
 * gateways and load balancers that route on headers. Clients drop a tool
 * whose marks break the rules, so a save is refused when they do: a mark sits
 * on a property reached from the root through `properties` only, on a
 * property of one primitive type (string, number, integer, boolean), and
 * names a header token (visible ASCII, no space and no `:`), unique in the
 * tool whatever its case. The server checks each header against the
 * arguments (mcp/standard-headers.ts).
 */
export const MCP_HEADER_KEYWORD = 'x-mcp-header';

/** One marked property: where it is in the arguments, and the header that mirrors it. */
export interface McpHeaderDeclaration {
  /** The `properties` keys leading from the arguments to the value. */
  path: readonly string[];
  /** `{Name}` of `Mcp-Param-{Name}`, as written. */
  name: string;
  type: 'string' | 'number' | 'integer' | 'boolean';
}

/** RFC 9110 `tchar`: what a header name may hold (`:` and space are not among them). */
const HEADER_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const PRIMITIVE_TYPES = new Set(['string', 'number', 'integer', 'boolean']);

/** The declarations of a tool's input schema, or the first problem with them (path dotted from the schema). */
export function mcpHeaderDeclarations(
  schema: Record<string, unknown>,
):
  | { ok: true; declarations: McpHeaderDeclaration[] }
  | { ok: false; path: string; message: string } {
  const declarations: McpHeaderDeclaration[] = [];
  const valid = new Set<object>();
  const walk = (node: Record<string, unknown>, path: string[]) => {
    const properties = node.properties;
    if (!isObject(properties)) return;
    for (const [key, property] of Object.entries(properties)) {
      if (!isObject(property)) continue;
      const name = property[MCP_HEADER_KEYWORD];
      if (name !== undefined) {
        valid.add(property);
        declarations.push({
          path: [...path, key],
          name: name as string,
          type: property.type as never,
        });
      }
      walk(property, [...path, key]);
    }
  };
  walk(schema, []);
  const seen = new Map<string, string>();
  for (const declaration of declarations) {
    const where = [
      'properties',
      ...declaration.path.flatMap((key, i) => (i === 0 ? [key] : ['properties', key])),
    ].join('.');
    if (typeof declaration.name !== 'string' || !HEADER_TOKEN.test(declaration.name)) {
      return {
        ok: false,
        path: `${where}.${MCP_HEADER_KEYWORD}`,
        message:
          'must name a header: visible ASCII letters, digits or !#$%&\'*+-.^_`|~, no space and no ":"',
      };
    }
    if (typeof declaration.type !== 'string' || !PRIMITIVE_TYPES.has(declaration.type)) {
      return {
        ok: false,
        path: `${where}.${MCP_HEADER_KEYWORD}`,
        message: 'may mark only a property of one type: string, number, integer or boolean',
      };
    }
    const folded = declaration.name.toLowerCase();
    const earlier = seen.get(folded);
    if (earlier !== undefined) {
      return {
        ok: false,
        path: `${where}.${MCP_HEADER_KEYWORD}`,
        message: `names the header of ${earlier} again (header names are compared whatever their case)`,
      };
    }
    seen.set(folded, where);
  }
  const stray = findStray(schema, valid, []);
  if (stray !== undefined) {
    return {
      ok: false,
      path: `${stray}.${MCP_HEADER_KEYWORD}`,
      message: 'may mark only a property reached from the root through "properties"',
    };
  }
  return { ok: true, declarations };
}

/** The dotted path of an `x-mcp-header` outside the places a declaration may be. */
function findStray(node: unknown, valid: ReadonlySet<object>, path: string[]): string | undefined {
  if (Array.isArray(node)) {
    for (const [index, item] of node.entries()) {
      const found = findStray(item, valid, [...path, String(index)]);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (!isObject(node)) return undefined;
  if (Object.hasOwn(node, MCP_HEADER_KEYWORD) && !valid.has(node)) return path.join('.');
  for (const [key, value] of Object.entries(node)) {
    const found = findStray(value, valid, [...path, key]);
    if (found !== undefined) return found;
  }
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
