/**
 * How an invocation's result reaches an MCP client: the content blocks the tool
 * built with `sdk.content` as they are, a returned string as text, any other
 * value as JSON text (plus `structuredContent` for objects), a
 * failure as an `isError` result carrying the message and its stable code.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { errorSpecOf, GENERIC_MESSAGE } from '../errors.js';
import type { InvokeResult } from '../invocation/index.js';

/** Key under `_meta` carrying the stable error code of a failed call. */
export const ERROR_CODE_META_KEY = 'mcphost/errorCode';
/** Keys under `_meta` carrying where in the tool's code a failure happened (1-based). */
export const ERROR_LINE_META_KEY = 'mcphost/line';
export const ERROR_COLUMN_META_KEY = 'mcphost/column';

/** The MCP result of an invocation: its verdict as content; logs and timings stay behind. */
export function toCallToolResult(result: InvokeResult): CallToolResult {
  if (!result.ok) {
    const { error } = result;
    // The text is the message as thrown (tool authors write it for the user)
    // unless the registry hides its code's messages; where in the code it
    // happened travels beside it.
    const meta: Record<string, unknown> = { [ERROR_CODE_META_KEY]: error.code };
    if (error.line !== undefined) meta[ERROR_LINE_META_KEY] = error.line;
    if (error.column !== undefined) meta[ERROR_COLUMN_META_KEY] = error.column;
    const text = errorSpecOf(error.code).exposable ? error.message : GENERIC_MESSAGE;
    return { isError: true, content: [{ type: 'text', text }], _meta: meta };
  }
  if (result.content !== undefined) return { content: result.content };
  const { value } = result;
  if (typeof value === 'string') return { content: [{ type: 'text', text: value }] };
  const text = JSON.stringify(value);
  if (isPlainObject(value)) {
    return { content: [{ type: 'text', text }], structuredContent: value };
  }
  return { content: [{ type: 'text', text }] };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
