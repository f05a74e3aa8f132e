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
