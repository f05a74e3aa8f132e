/** Raw MCP requests for tests that look at HTTP answers the SDK client would hide. */
import { loopbackFetch } from './loopback-fetch.js';

/** The body of an `initialize` request. */
export const INITIALIZE_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'test', version: '1' },
  },
});

/** POSTs `initialize` to a hosted server's `/mcp` (or another path), with extra headers. */
export function postInitialize(url: URL, headers: Record<string, string> = {}): Promise<Response> {
  return loopbackFetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: INITIALIZE_BODY,
  });
}

/** The revision of the modern era, as its requests name it. */
export const MODERN_REVISION = '2026-07-28';

/** A modern client's per-request `_meta` that declares elicitation (what the asking tools need). */
export const MODERN_ELICITING_META = {
  'io.modelcontextprotocol/protocolVersion': MODERN_REVISION,
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
};

/** What a modern `tools/call` carries besides the tool's name. */
export interface ModernCallOptions {
  args?: object;
  /** The `requestState` of the round being answered. */
  state?: string;
  /** The `inputResponses` of that round. */
  answers?: object;
  /** An API key or token sent as `Authorization: Bearer`. */
  key?: string;
  meta?: object;
}

let nextModernId = 1;

/**
 * One modern `tools/call` POSTed by hand with its standard headers; the answer's
 * status and JSON-RPC body (the last event of a stream, or the text when neither).
 */
export async function modernToolCall(
  url: URL,
  tool: string,
  options: ModernCallOptions = {},
): Promise<{ status: number; body: any }> {
  const response = await loopbackFetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN_REVISION,
      'mcp-method': 'tools/call',
      'mcp-name': tool,
      ...(options.key === undefined ? {} : { authorization: `Bearer ${options.key}` }),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: nextModernId++,
      method: 'tools/call',
      params: {
        name: tool,
        arguments: options.args ?? {},
        ...(options.state === undefined ? {} : { requestState: options.state }),
        ...(options.answers === undefined ? {} : { inputResponses: options.answers }),
        _meta: options.meta ?? MODERN_ELICITING_META,
      },
    }),
  });
  return { status: response.status, body: jsonRpcAnswer(await response.text()) };
}

/** A JSON answer, or the last `data:` of an event stream; the text's start when it is neither. */
export function jsonRpcAnswer(text: string): any {
  try {
    return text.startsWith('{') ? JSON.parse(text) : JSON.parse(text.split('data: ').at(-1)!);
  } catch {
    return text.slice(0, 300);
  }
}
