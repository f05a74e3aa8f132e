/**
 * An MCP client made of raw HTTP requests on one undici agent: what every MCP
 * client does (initialize, initialized, tools/call), without an SDK's own
 * costs in the figures. Shared by the benchmarks so only the server differs.
 */
import { Agent, request } from 'undici';

/** One client for everything measured, so only the server side differs. */
export const benchAgent = new Agent({ connections: 64, pipelining: 1, keepAliveTimeout: 30_000 });

/** An MCP session opened with raw requests (what every MCP client does first). */
export class RawMcpSession {
  #id = '';
  #next = 1;
  /** `headers` go on every request (e.g. an API key). */
  constructor(
    private readonly url: string,
    private readonly host: string,
    private readonly headers: Record<string, string> = {},
  ) {}

  async #post(body: object): Promise<{ status: number; text: string; session?: string }> {
    const response = await request(this.url, {
      method: 'POST',
      dispatcher: benchAgent,
      headers: {
        ...this.headers,
        host: this.host,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
        ...(this.#id ? { 'mcp-session-id': this.#id } : {}),
      },
      body: JSON.stringify(body),
    });
    const text = await response.body.text();
    const session = response.headers['mcp-session-id'];
    return {
      status: response.statusCode,
      text,
      session: typeof session === 'string' ? session : undefined,
    };
  }

  /** The session id the server gave (empty before `open`). */
  get id(): string {
    return this.#id;
  }

  /** Takes a session another client opened (the same session through another replica). */
  adopt(id: string): void {
    this.#id = id;
    this.#next = 1_000_000;
  }

  async open(): Promise<void> {
    const init = await this.#post({
      jsonrpc: '2.0',
      id: this.#next++,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'bench', version: '1' },
      },
    });
    if (init.status !== 200 || !init.session)
      throw new Error(`initialize failed: ${init.status} ${init.text}`);
    this.#id = init.session;
    await this.#post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }

  /** One tools/call; throws unless the tool answered without error. */
  async call(name: string): Promise<void> {
    await this.request('tools/call', { name, arguments: {} });
  }

  /** One request; throws unless it answered with a result (not an error, not `isError`). */
  async request(method: string, params: object): Promise<string> {
    const answer = await this.#post({ jsonrpc: '2.0', id: this.#next++, method, params });
    if (
      answer.status !== 200 ||
      !answer.text.includes('"result"') ||
      answer.text.includes('"isError":true')
    ) {
      throw new Error(`${method} failed: ${answer.status} ${answer.text.slice(0, 200)}`);
    }
    return answer.text;
  }
}

/**
 * A modern-era (MCP 2026-07-28) client made of raw HTTP requests: no session,
 * each request carries its `_meta` and the standard headers, as every modern
 * client sends them. On the same agent as RawMcpSession, so the two eras
 * differ only on the server side.
 */
export class RawModernClient {
  #next = 1;
  constructor(
    private readonly url: string,
    private readonly host: string,
    private readonly headers: Record<string, string> = {},
  ) {}

  /** One tools/call; throws unless the tool answered without error. */
  async call(name: string): Promise<void> {
    const response = await request(this.url, {
      method: 'POST',
      dispatcher: benchAgent,
      headers: {
        ...this.headers,
        host: this.host,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': name,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: this.#next++,
        method: 'tools/call',
        params: {
          name,
          arguments: {},
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
            'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
          },
        },
      }),
    });
    const text = await response.body.text();
    if (
      response.statusCode !== 200 ||
      !text.includes('"resultType":"complete"') ||
      text.includes('"isError":true')
    ) {
      throw new Error(`tools/call failed: ${response.statusCode} ${text.slice(0, 200)}`);
    }
  }
}
