/**
 * An official-SDK client session on a hosted server, with a promise that
 * settles once the session's GET stream is open: notifications that belong to
 * no request (list changes, resource updates) travel on it, and the server
 * drops them while there is none, so a test waits for it before it expects one.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loopbackFetch } from './loopback-fetch.js';

export interface SdkSession {
  client: Client;
  transport: StreamableHTTPClientTransport;
  streamOpen: Promise<void>;
}

export interface SdkSessionOptions {
  /** How requests travel; default loopbackFetch (every name to 127.0.0.1). */
  fetch?: typeof fetch;
  /** Headers and the like sent with every request. */
  requestInit?: RequestInit;
}

export async function connectSdkSession(
  url: URL,
  options: SdkSessionOptions = {},
): Promise<SdkSession> {
  const send = options.fetch ?? loopbackFetch;
  let opened!: () => void;
  const streamOpen = new Promise<void>((resolve) => (opened = resolve));
  const watching: typeof fetch = async (input, init) => {
    const response = await send(input, init);
    const isStream = response.headers.get('content-type')?.startsWith('text/event-stream');
    if (init?.method === 'GET' && response.ok && isStream) opened();
    return response;
  };
  const transport = new StreamableHTTPClientTransport(url, {
    fetch: watching,
    requestInit: options.requestInit,
  });
  const client = new Client({ name: 'mcphost-test', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  return { client, transport, streamOpen };
}
