/**
 * The Streamable HTTP transport (mcp-endpoint.ts → streamable-http-transport.ts)
 * against the official SDK client over real HTTP on loopback, with SDK servers
 * of the test's own: the transport must carry every MCP behaviour a hosted
 * server needs — JSON or SSE answers, notifications inside a call,
 * server→client requests inside a call (elicitation, sampling), cancellation
 * without a response, the GET stream, keep-alive, session end — and answer
 * every malformed request as the specification says.
 */
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/server';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EntryRunner } from '../../../control-plane/invocation/entry-runner.js';
import { createHostedMcpServer } from '../../../control-plane/mcp/hosted-mcp-server.js';
import { McpEndpoint } from '../../../control-plane/mcp/mcp-endpoint.js';
import { SessionRegistry } from '../../../control-plane/mcp/session-registry.js';
import { ResumeBudget } from '../../../control-plane/mcp/resume-budget.js';
import { resumeBoundsFrom } from '../../../control-plane/app/component-settings.js';
import { DEFAULT_CONFIG } from '../../support/config-defaults.js';

const KEEP_ALIVE_MS = 100;
/** Every request's scope here: an anonymous caller. */
const ANONYMOUS = { caller: { kind: 'anonymous' as const }, quotaKey: 'caller', requestId: 'test' };
let http: HttpServer;
let url: URL;
let sessions: SessionRegistry;
const servers: Server[] = [];
/** Resolves when a `slow` call's handler sees its signal abort. */
let aborted: Promise<unknown>;
let noteAborted: (reason: unknown) => void;

function resetAborted(): void {
  aborted = new Promise((resolve) => (noteAborted = resolve));
}

/** An SDK server with tools that exercise the transport. */
function testServer(): Server {
  const server = new Server(
    { name: 'transport-test', version: '1' },
    { capabilities: { tools: { listChanged: true }, logging: {} } },
  );
  server.setRequestHandler('tools/list', async () => ({ tools: [] }));
  server.setRequestHandler('tools/call', async (request, ctx) => {
    const extra = ctx.mcpReq;
    const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });
    switch (request.params.name) {
      case 'quick':
        return text('quick answer');
      case 'chatty':
        await extra.notify({
          method: 'notifications/message',
          params: { level: 'info', data: 'working on it' },
        });
        return text('chatty answer');
      case 'ask': {
        const answer = await extra.send({
          method: 'elicitation/create',
          params: {
            mode: 'form',
            message: 'Your name?',
            requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
          },
        });
        return text(`hello ${String(answer.content?.name)}`);
      }
      case 'sample': {
        const answer = await extra.send({
          method: 'sampling/createMessage',
          params: {
            messages: [{ role: 'user', content: { type: 'text', text: 'a haiku' } }],
            maxTokens: 20,
          },
        });
        const block = Array.isArray(answer.content) ? answer.content[0] : answer.content;
        return text(block?.type === 'text' ? block.text : '?');
      }
      case 'slow':
        await new Promise((resolve) => {
          const timer = setTimeout(resolve, 3 * KEEP_ALIVE_MS);
          extra.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            noteAborted(extra.signal.reason);
            resolve(undefined);
          });
        });
        return text('slow answer');
      case 'forever':
        await new Promise((resolve) =>
          extra.signal.addEventListener('abort', () => {
            noteAborted(extra.signal.reason);
            resolve(undefined);
          }),
        );
        return text('never sent');
      default:
        throw Object.assign(new Error(`Unknown tool: ${request.params.name}`), { code: -32602 });
    }
  });
  servers.push(server);
  return server;
}

beforeAll(async () => {
  sessions = new SessionRegistry({
    idleMs: 60_000,
    maxSessions: 50,
    maxPerServer: 50,
    maxPerCaller: 50,
  });
  const endpoint = new McpEndpoint({
    sessions,
    maxBodyBytes: 64 * 1024,
    resumeBudget: new ResumeBudget({ ...resumeBoundsFrom(DEFAULT_CONFIG), share: () => 1 }),
    serverFor: () => ({ server: testServer() }),
    keepAliveMs: KEEP_ALIVE_MS,
  });
  http = createServer((req, res) => {
    void endpoint.handle(req, res, 'acme', ANONYMOUS).catch(() => {
      res.destroy();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  url = new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
});

afterAll(async () => {
  await sessions.closeAll();
  await new Promise((resolve) => http.close(resolve));
});

const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

async function connect(capabilities: object = {}): Promise<Client> {
  const client = new Client({ name: 'transport-test', version: '1' }, { capabilities });
  await client.connect(new StreamableHTTPClientTransport(url));
  clients.push(client);
  return client;
}

function textOf(result: unknown): string {
  const first = (result as CallToolResult).content[0];
  return first?.type === 'text' ? first.text : '';
}

/** A raw session: its id and a POST helper that returns the fetch Response. */
async function rawSession(protocolVersion = '2025-06-18') {
  const initialize = await post(undefined, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  expect(initialize.status).toBe(200);
  const sessionId = initialize.headers.get('mcp-session-id')!;
  await initialize.text();
  const initialized = await post(sessionId, {
    jsonrpc: '2.0',
    method: 'notifications/initialized',
  });
  expect(initialized.status).toBe(202);
  return { sessionId, post: (body: unknown) => post(sessionId, body) };
}

function post(
  sessionId: string | undefined,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** A GET resuming a stream after the event `lastEventId` names. */
function resume(sessionId: string, lastEventId: string): Promise<Response> {
  return fetch(url, {
    headers: {
      accept: 'text/event-stream',
      'mcp-session-id': sessionId,
      'last-event-id': lastEventId,
    },
  });
}

const call = (id: number, name: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: {} },
});

describe('answers', () => {
  it('sends a lone answer as JSON and a call that notifies first as SSE', async () => {
    const session = await rawSession();
    const quick = await session.post(call(1, 'quick'));
    expect(quick.headers.get('content-type')).toBe('application/json');
    expect(quick.headers.get('mcp-session-id')).toBe(session.sessionId);
    expect(await quick.json()).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: { content: [{ type: 'text', text: 'quick answer' }] },
    });
    const chatty = await session.post(call(2, 'chatty'));
    expect(chatty.headers.get('content-type')).toBe('text/event-stream');
    const events = (await chatty.text()).split('\n\n').filter((event) => event.length > 0);
    expect(events.map((event) => JSON.parse(event.split('data: ')[1]!))).toEqual([
      {
        jsonrpc: '2.0',
        method: 'notifications/message',
        params: { level: 'info', data: 'working on it' },
      },
      { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'chatty answer' }] } },
    ]);
  });

  it('delivers notifications sent inside a call to the SDK client before the result', async () => {
    const client = await connect();
    const lines: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      lines.push(String(notification.params.data));
    });
    const result = await client.callTool({ name: 'chatty', arguments: {} });
    expect(textOf(result)).toBe('chatty answer');
    expect(lines).toEqual(['working on it']);
  });

  it('turns a silent long answer into a stream with keep-alive comments', async () => {
    const session = await rawSession();
    const slow = await session.post(call(3, 'slow'));
    expect(slow.headers.get('content-type')).toBe('text/event-stream');
    const body = await slow.text();
    expect(body).toContain(': keepalive\n\n');
    expect(body).toContain('"slow answer"');
  });

  it('answers a batch (protocol 2025-03-26) with an array in request order', async () => {
    const session = await rawSession('2025-03-26');
    const response = await session.post([call(5, 'chatty'), call(4, 'quick')]);
    const text = await response.text();
    const answers = text
      .split('\n\n')
      .filter((event) => event.includes('"result"'))
      .map((event) => JSON.parse(event.split('data: ')[1]!) as { id: number });
    expect(answers.map((answer) => answer.id).sort()).toEqual([4, 5]);
  });

  it('reports an unknown tool with one prefix, not two', async () => {
    const client = await connect();
    await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toThrow(
      /^MCP error -32602: Unknown tool: nope$/,
    );
  });
});

describe('server→client requests inside a call', () => {
  it('carries an elicitation request on the call and its answer back', async () => {
    const client = await connect({ elicitation: { form: {} } });
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      expect(request.params.message).toBe('Your name?');
      return { action: 'accept', content: { name: 'Ada' } };
    });
    expect(textOf(await client.callTool({ name: 'ask', arguments: {} }))).toBe('hello Ada');
  });

  it('carries a sampling request on the call and its answer back', async () => {
    const client = await connect({ sampling: {} });
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({
      role: 'assistant',
      model: 'test-model',
      content: { type: 'text', text: 'autumn leaves fall' },
    }));
    expect(textOf(await client.callTool({ name: 'sample', arguments: {} }))).toBe(
      'autumn leaves fall',
    );
  });
});

describe('cancellation', () => {
  it('aborts the handler and sends no response for the cancelled request', async () => {
    resetAborted();
    const session = await rawSession();
    // A call that runs until aborted: however slow the machine, it is still running when cancelled.
    const running = session.post(call(7, 'forever'));
    // The call's response opens (as a stream, after the keep-alive interval) before we cancel it.
    const response = await running;
    const cancel = await session.post({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 7, reason: 'changed my mind' },
    });
    expect(cancel.status).toBe(202);
    expect(await aborted).toBe('changed my mind');
    const body = await response.text();
    expect(body).not.toContain('"id":7');
  });

  it('cancels a call whose client closed its response (nothing could deliver the answer)', async () => {
    resetAborted();
    const session = await rawSession();
    const controller = new AbortController();
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': session.sessionId,
      },
      body: JSON.stringify(call(21, 'forever')),
      signal: controller.signal,
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    controller.abort();
    expect(await aborted).toBe('the client closed the response');
    // The id is free again, and a new request under it gets its own answer.
    const reused = await session.post(call(21, 'quick'));
    expect(await reused.text()).toContain('quick answer');
  });

  it('keeps a call of a 2025-11-25 session running when its client cuts the response, and resumes it with Last-Event-ID', async () => {
    resetAborted();
    const session = await rawSession('2025-11-25');
    const controller = new AbortController();
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': session.sessionId,
      },
      body: JSON.stringify(call(31, 'slow')),
      signal: controller.signal,
    });
    // Silent past the keep-alive interval: an SSE stream that opens with a priming event.
    const reader = response.body!.getReader();
    const { value } = await reader.read();
    const priming = new TextDecoder().decode(value);
    const primingId = /^id: ([0-9a-f]{16}\.0)\nretry: \d+\ndata: \n\n/.exec(priming)?.[1];
    expect(primingId, priming).toBeDefined();
    controller.abort();
    const resumed = await resume(session.sessionId, primingId!);
    expect(resumed.status).toBe(200);
    const rest = await resumed.text();
    expect(rest).toContain('slow answer');
    expect(rest).toContain(`id: ${primingId!.replace('.0', '.1')}`);
    // Resuming after the answer was delivered finds nothing left to resume.
    const again = await resume(session.sessionId, primingId!);
    expect(again.status).toBe(400);
    expect((await again.json()).error.data.code).toBe('ERR_STREAM_NOT_FOUND');
  });

  it('refuses a Last-Event-ID that names no stream of the session', async () => {
    const session = await rawSession('2025-11-25');
    for (const lastEventId of ['0123456789abcdef.3', 'not an id']) {
      const response = await resume(session.sessionId, lastEventId);
      expect(response.status).toBe(400);
      expect((await response.json()).error.data.code).toBe('ERR_STREAM_NOT_FOUND');
    }
  });

  it('lets the SDK client cancel a call with an AbortSignal', async () => {
    resetAborted();
    const client = await connect();
    const controller = new AbortController();
    const result = client.callTool({ name: 'forever', arguments: {} }, undefined, {
      signal: controller.signal,
    });
    setImmediate(() => controller.abort('stop'));
    await expect(result).rejects.toThrow();
    expect(await aborted).toBe('stop');
  });
});

describe('the GET stream and the session end', () => {
  it('carries notifications unrelated to a request, one stream per session', async () => {
    const client = await connect();
    const changed = new Promise((resolve) =>
      client.setNotificationHandler(ToolListChangedNotificationSchema, resolve),
    );
    // The SDK client opens the GET stream after initialization; send once it is there.
    const server = servers.at(-1)!;
    const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId!;
    await expect
      .poll(async () => {
        await server.sendToolListChanged();
        return Promise.race([
          changed.then(() => true),
          new Promise((r) => setTimeout(r, 50, false)),
        ]);
      })
      .toBe(true);
    const second = await fetch(url, {
      headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId },
    });
    expect(second.status).toBe(409);
    expect((await second.json()).error).toMatchObject({
      code: -32000,
      data: { code: 'ERR_CONFLICT' },
    });
  });

  it('ends a running call with a session error when the session is deleted, then forgets it', async () => {
    const session = await rawSession();
    const running = session.post(call(8, 'forever'));
    const response = await running;
    const deleted = await fetch(url, {
      method: 'DELETE',
      headers: { 'mcp-session-id': session.sessionId },
    });
    expect(deleted.status).toBe(200);
    const body = await response.text();
    expect(body).toContain('"id":8');
    expect(body).toContain('ERR_SESSION_NOT_FOUND');
    const after = await session.post(call(9, 'quick'));
    expect(after.status).toBe(404);
    expect((await after.json()).error).toMatchObject({ code: -32001 });
    expect(sessions.peek(session.sessionId)).toBeUndefined();
  });
});

describe('malformed requests', () => {
  const cases: [string, () => Promise<Response>, number, number, string][] = [
    [
      'no session id on a non-initialize POST',
      () => post(undefined, call(1, 'quick')),
      400,
      -32000,
      'ERR_BAD_REQUEST',
    ],
    [
      'an Accept without text/event-stream',
      () => post(undefined, call(1, 'quick'), { accept: 'application/json' }),
      406,
      -32000,
      'ERR_NOT_ACCEPTABLE',
    ],
    [
      'a body that is not application/json',
      () => post(undefined, call(1, 'quick'), { 'content-type': 'text/plain' }),
      415,
      -32000,
      'ERR_UNSUPPORTED_MEDIA_TYPE',
    ],
    ['a body that is not JSON', () => post(undefined, '{"jsonrpc":'), 400, -32700, 'ERR_PARSE'],
    [
      'JSON that is not JSON-RPC',
      () => post(undefined, { hello: 'world' }),
      400,
      -32600,
      'ERR_INVALID_REQUEST',
    ],
    ['an empty batch', () => post(undefined, []), 400, -32600, 'ERR_INVALID_REQUEST'],
    [
      'an unknown session',
      () => post('no-such-session', call(1, 'quick')),
      404,
      -32001,
      'ERR_SESSION_NOT_FOUND',
    ],
    [
      'a GET without a session',
      () => fetch(url, { headers: { accept: 'text/event-stream' } }),
      400,
      -32000,
      'ERR_BAD_REQUEST',
    ],
    [
      'a PUT',
      () => fetch(url, { method: 'PUT', body: '{}' }),
      405,
      -32000,
      'ERR_METHOD_NOT_ALLOWED',
    ],
  ];
  const oversized = JSON.stringify({ ...call(1, 'quick'), padding: 'x'.repeat(70 * 1024) });
  cases.push(
    [
      'a body over the limit',
      () => post(undefined, oversized),
      413,
      -32000,
      'ERR_PAYLOAD_TOO_LARGE',
    ],
    [
      'a chunked body over the limit (no Content-Length)',
      () =>
        fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body: new Blob([oversized]).stream(),
          duplex: 'half',
        } as RequestInit),
      413,
      -32000,
      'ERR_PAYLOAD_TOO_LARGE',
    ],
  );
  it.each(cases)('answers %s with %i and JSON-RPC %i', async (_, send, status, code, stable) => {
    const response = await send();
    expect(response.status).toBe(status);
    const body = (await response.json()) as { error: { code: number; data: { code: string } } };
    expect(body.error.code).toBe(code);
    expect(body.error.data.code).toBe(stable);
    if (status === 405) expect(response.headers.get('allow')).toBe('GET, POST, DELETE');
  });

  it('refuses a request id still in use in the session, and one repeated in a batch', async () => {
    const session = await rawSession();
    const running = await session.post(call(11, 'forever'));
    const again = await session.post(call(11, 'quick'));
    expect(again.status).toBe(400);
    expect(
      ((await again.json()) as { error: { code: number; message: string } }).error,
    ).toMatchObject({
      code: -32600,
      message: 'Invalid Request: request id 11 is already in use in this session',
    });
    const batch = await rawSession('2025-03-26');
    const twice = await batch.post([call(12, 'quick'), call(12, 'quick')]);
    expect(twice.status).toBe(400);
    // The first request is still answered: here, by the session's end.
    await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': session.sessionId } });
    expect(await running.text()).toContain('ERR_SESSION_NOT_FOUND');
  });

  it('refuses a batch from a client of protocol 2025-06-18 or later (batching was removed)', async () => {
    const session = await rawSession();
    const batch = await post(session.sessionId, [call(31, 'quick')], {
      'mcp-protocol-version': '2025-06-18',
    });
    expect(batch.status).toBe(400);
    expect(((await batch.json()) as { error: { code: number } }).error.code).toBe(-32600);
  });

  it('refuses an unsupported protocol version and a second initialize on a session', async () => {
    const session = await rawSession();
    const version = await post(session.sessionId, call(1, 'quick'), {
      'mcp-protocol-version': '1999-01-01',
    });
    expect(version.status).toBe(400);
    expect(((await version.json()) as { error: { message: string } }).error.message).toMatch(
      /Unsupported protocol version: 1999-01-01/,
    );
    const again = await session.post({
      jsonrpc: '2.0',
      id: 2,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'x', version: '1' },
      },
    });
    expect(again.status).toBe(400);
    expect(((await again.json()) as { error: { code: number } }).error.code).toBe(-32600);
  });
});

describe('a hosted server over the transport', () => {
  it('answers a bug in the call path as ERR_INTERNAL with the generic message, and reports it', async () => {
    const reported: unknown[] = [];
    const tool = { subdomain: 'acme', name: 'leaky', description: 'x', parameters: [] };
    const catalog = { prompts: () => [], prompt: () => undefined, resources: () => [] };
    const leakyInvoker = {
      invoke: async () => {
        throw new TypeError('connect ECONNREFUSED 10.1.2.3:5432');
      },
    } as never;
    const endpoint = new McpEndpoint({
      sessions,
      maxBodyBytes: 64 * 1024,
      resumeBudget: new ResumeBudget({ ...resumeBoundsFrom(DEFAULT_CONFIG), share: () => 1 }),
      keepAliveMs: KEEP_ALIVE_MS,
      serverFor: (subdomain) =>
        createHostedMcpServer({
          catalog: { ...catalog, tools: () => [tool as never], tool: () => tool as never },
          invoker: leakyInvoker,
          entries: new EntryRunner({
            catalog,
            invoker: leakyInvoker,
            maxRenderedBytes: 1024 * 1024,
          }),
          version: '1',
          subdomain,
          onInternalError: (error) => reported.push(error),
        }),
    });
    const hosted = createServer((req, res) => {
      void endpoint.handle(req, res, 'acme', ANONYMOUS);
    });
    await new Promise<void>((resolve) => hosted.listen(0, '127.0.0.1', resolve));
    try {
      const client = new Client({ name: 'transport-test', version: '1' });
      await client.connect(
        new StreamableHTTPClientTransport(
          new URL(`http://127.0.0.1:${(hosted.address() as AddressInfo).port}/mcp`),
        ),
      );
      await expect(client.callTool({ name: 'leaky', arguments: {} })).rejects.toThrow(
        /^MCP error -32603: internal error; see the control plane log$/,
      );
      await client.close();
      expect(reported).toHaveLength(1);
      expect(String(reported[0])).toContain('ECONNREFUSED');
    } finally {
      hosted.closeAllConnections();
      await new Promise((resolve) => hosted.close(resolve));
    }
  });
});
