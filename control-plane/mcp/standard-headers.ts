/**
 * The standard request headers of a modern-era POST (MCP 2026-07-28,
 * Streamable HTTP "Request Metadata", SEP-2243) that the SDK's classifier
 * does not check: `MCP-Protocol-Version` and `Mcp-Method` must be present,
 * and `Mcp-Name` must be present and equal (after its Base64 sentinel is
 * decoded) to the body's `params.name` (tools/call, prompts/get) or
 * `params.uri` (resources/read). The classifier (`classifyInboundRequest`)
 * already refuses a protocol-version or method header that disagrees with
 * the body. The SDK keeps its own copy of this rung private to
 * `createMcpHandler`, which mcphost does not use for calls (see
 * docs/decisions.md, "Modern era on SDK v2"); a failure is -32020 on 400.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { McpHeaderDeclaration } from '../store/index.js';

/** The body field `Mcp-Name` mirrors, per method. */
const NAME_SOURCE: Readonly<Record<string, 'name' | 'uri'>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
};

const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Why the headers of a modern request are refused; undefined when they are in order. */
export function standardHeaderProblem(
  headers: IncomingHttpHeaders,
  method: string,
  params: unknown,
): string | undefined {
  if (headers['mcp-protocol-version'] === undefined) {
    return 'the required MCP-Protocol-Version header is absent';
  }
  if (headers['mcp-method'] === undefined) {
    return `the body names method ${method} but the required Mcp-Method header is absent`;
  }
  const field = Object.hasOwn(NAME_SOURCE, method) ? NAME_SOURCE[method] : undefined;
  if (field === undefined) return undefined;
  const raw =
    params !== null && typeof params === 'object'
      ? (params as Record<string, unknown>)[field]
      : undefined;
  const bodyValue = typeof raw === 'string' ? raw : undefined;
  const header = headers['mcp-name'];
  if (header === undefined || Array.isArray(header)) {
    if (bodyValue === undefined && header === undefined) return undefined;
    return header === undefined
      ? `the body carries params.${field} but the required Mcp-Name header is absent`
      : 'the Mcp-Name header is sent more than once';
  }
  const decoded = decodeSentinel(header.replace(/^[\t ]+|[\t ]+$/g, ''));
  if (decoded === undefined) return 'the Mcp-Name header carries an invalid Base64 sentinel value';
  if (bodyValue !== undefined && decoded !== bodyValue) {
    return `the body carries params.${field}=${JSON.stringify(bodyValue)} but the Mcp-Name header names ${JSON.stringify(decoded)}`;
  }
  return undefined;
}

/**
 * Why the `Mcp-Param-{Name}` headers of a `tools/call` are refused: each
 * header a tool's `x-mcp-header` marks (store/mcp-header-declarations.ts)
 * must be sent when its argument is, and say the same once decoded (numbers
 * compared as numbers); undefined when they agree.
 */
export function paramHeaderProblem(
  headers: IncomingHttpHeaders,
  declarations: readonly McpHeaderDeclaration[],
  args: unknown,
): string | undefined {
  for (const declaration of declarations) {
    const headerName = `Mcp-Param-${declaration.name}`;
    const sent = headers[headerName.toLowerCase()];
    const value = valueAt(args, declaration.path);
    if (Array.isArray(sent)) return `the ${headerName} header is sent more than once`;
    if (value === undefined || value === null) {
      if (sent !== undefined)
        return `the ${headerName} header is sent but the argument it mirrors is not`;
      continue;
    }
    if (sent === undefined)
      return `the argument ${declaration.path.join('.')} is sent but the required ${headerName} header is absent`;
    const decoded = decodeSentinel(sent.replace(/^[\t ]+|[\t ]+$/g, ''));
    if (decoded === undefined)
      return `the ${headerName} header carries an invalid Base64 sentinel value`;
    if (!sameValue(decoded, value, declaration.type)) {
      return `the ${headerName} header does not match the argument ${declaration.path.join('.')}`;
    }
  }
  return undefined;
}

function valueAt(args: unknown, path: readonly string[]): unknown {
  let node = args;
  for (const key of path) {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function sameValue(header: string, value: unknown, type: McpHeaderDeclaration['type']): boolean {
  switch (type) {
    case 'string':
      return value === header;
    case 'boolean':
      return String(value) === header;
    default:
      return typeof value === 'number' && header.trim() !== '' && Number(header) === value;
  }
}

/** A header value with its `=?base64?…?=` sentinel decoded; undefined when the sentinel is malformed. */
function decodeSentinel(value: string): string | undefined {
  if (!value.startsWith(SENTINEL_PREFIX) || !value.endsWith(SENTINEL_SUFFIX)) return value;
  const payload = value.slice(SENTINEL_PREFIX.length, value.length - SENTINEL_SUFFIX.length);
  if (!CANONICAL_BASE64.test(payload)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(payload, 'base64'));
  } catch {
    return undefined;
  }
}
