/**
 * The MCP endpoint end to end: the official SDK client over real HTTP against
 * a running control plane whose tools run in real runner containers.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  LoggingMessageNotificationSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postInitialize } from '../../support/mcp-requests.js';
import { loopbackFetch } from '../../support/loopback-fetch.js';
import { busyContainers } from '../../support/busy-containers.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';

let plane: TestControlPlane;
const clients: Client[] = [];

async function connect(subdomain: string): Promise<Client> {
  const client = new Client({ name: 'mcphost-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(plane.mcpUrl(subdomain), { fetch: loopbackFetch }),
  );
  clients.push(client);
  return client;
}

function text(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : '';
}

beforeAll(async () => {
  plane = await startTestControlPlane();
  expect(
    (await plane.admin('POST', '/api/servers', { subdomain: 'tools', name: 'Test tools' })).status,
  ).toBe(201);
  const save = async (name: string, body: object) => {
    const response = await plane.admin('PUT', `/api/servers/tools/tools/${name}`, body);
    expect(response.status, JSON.stringify(response.body)).toBe(201);
  };
  await save('echo_types', {
    description: 'Echoes each parameter with its type.',
    parameters: [
      { name: 'text', type: 'string', required: true, description: 'some text' },
      { name: 'count', type: 'number', required: true },
      { name: 'flag', type: 'boolean', required: false },
      { name: 'options', type: 'object', required: false },
      { name: 'items', type: 'array', required: false },
    ],
    code: 'return { text: params.text, count: params.count, flag: params.flag ?? null, flagType: typeof params.flag, options: params.options ?? null, items: params.items ?? null };',
  });
  await save('say', {
    description: 'Returns a string.',
    parameters: [],
    code: "return 'plain text';",
  });
  await save('fail', { description: 'Throws.', code: "throw new Error('the tool said no');" });
  await save('chatty', {
    description: 'Logs, then answers.',
    code: "console.log('first line'); console.warn('second line'); console.error('third line'); return 'done';",
  });
  await save('slow', {
    description: 'Sleeps.',
    code: 'await new Promise((r) => setTimeout(r, 20000)); return 1;',
  });
  await save('secretive', {
    description: 'Logs its secret.',
    secrets: ['API_KEY'],
    code: "console.log('key is', env.API_KEY); throw new Error('failed with ' + env.API_KEY);",
  });
  expect(
    (
      await plane.admin('PUT', '/api/servers/tools/secrets/API_KEY', {
        value: 'sk-very-secret-value',
      })
    ).status,
  ).toBe(200);
  expect((await plane.admin('POST', '/api/servers', { subdomain: 'sleepy' })).status).toBe(201);
}, 180_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await plane?.close();
});

describe('tools/list', () => {
  it('lists tools with input schemas generated from the declarations', async () => {
    const client = await connect('tools');
    const { tools } = await client.listTools();
    const echo = tools.find((t) => t.name === 'echo_types');
    expect(echo).toMatchObject({
      description: 'Echoes each parameter with its type.',
      inputSchema: {
        type: 'object',
        properties: {
          text: { type: 'string', description: 'some text' },
          count: { type: 'number' },
          flag: { type: 'boolean' },
          options: { type: 'object' },
          items: { type: 'array' },
        },
        required: ['text', 'count'],
      },
    });
    expect(tools.map((t) => t.name).sort()).toEqual([
      'chatty',
      'echo_types',
      'fail',
      'say',
      'secretive',
      'slow',
    ]);
  });
});

describe('tools/call', () => {
  it('passes each parameter type through and returns objects as structured content', async () => {
    const client = await connect('tools');
    const result = (await client.callTool({
      name: 'echo_types',
      arguments: { text: 'hi', count: 2.5, flag: true, options: { a: [1] }, items: ['x', 2] },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const expected = {
      text: 'hi',
      count: 2.5,
      flag: true,
      flagType: 'boolean',
      options: { a: [1] },
      items: ['x', 2],
    };
    expect(result.structuredContent).toEqual(expected);
    expect(JSON.parse(text(result))).toEqual(expected);
  });

  it('gives an absent optional parameter as undefined', async () => {
    const client = await connect('tools');
    const result = (await client.callTool({
      name: 'echo_types',
      arguments: { text: 'a', count: 1 },
    })) as CallToolResult;
    expect(result.structuredContent).toMatchObject({ flag: null, flagType: 'undefined' });
  });

  it('returns a string as plain text content', async () => {
    const client = await connect('tools');
    const result = (await client.callTool({ name: 'say', arguments: {} })) as CallToolResult;
    expect(result.content).toEqual([{ type: 'text', text: 'plain text' }]);
    expect(result.structuredContent).toBeUndefined();
  });

  it('reports a wrong type or a missing parameter as an isError result naming it', async () => {
    const client = await connect('tools');
    const wrong = (await client.callTool({
      name: 'echo_types',
      arguments: { text: 'a', count: 'many' },
    })) as CallToolResult;
    expect(wrong.isError).toBe(true);
    expect(text(wrong)).toBe('parameter "count" must be of type number, got string');
    const missing = (await client.callTool({
      name: 'echo_types',
      arguments: { count: 1 },
    })) as CallToolResult;
    expect(missing.isError).toBe(true);
    expect(text(missing)).toContain('missing required parameter "text"');
  });

  it('reports a thrown error as an isError result with its message and code', async () => {
    const client = await connect('tools');
    const result = (await client.callTool({ name: 'fail', arguments: {} })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(text(result)).toBe('the tool said no');
    expect(result._meta).toMatchObject({
      'mcphost/errorCode': 'ERR_TOOL_ERROR',
      'mcphost/line': 1,
    });
  });

  it('answers an unknown tool with a JSON-RPC error', async () => {
    const client = await connect('tools');
    await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toThrow(
      /Unknown tool: nope/,
    );
  });

  it('streams console output as logging notifications during the call', async () => {
    const client = await connect('tools');
    const received: { level: string; data: unknown }[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      received.push({ level: notification.params.level, data: notification.params.data });
    });
    const result = (await client.callTool({ name: 'chatty', arguments: {} })) as CallToolResult;
    expect(text(result)).toBe('done');
    expect(received).toEqual([
      { level: 'info', data: 'first line' },
      { level: 'warning', data: 'second line' },
      { level: 'error', data: 'third line' },
    ]);
  });

  it('redacts secret values in logs and errors', async () => {
    const client = await connect('tools');
    const logs: unknown[] = [];
    client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (n) => void logs.push(n.params.data),
    );
    const result = (await client.callTool({ name: 'secretive', arguments: {} })) as CallToolResult;
    expect(text(result)).toBe('failed with [REDACTED:API_KEY]');
    expect(logs).toEqual(['key is [REDACTED:API_KEY]']);
    const log = await plane.admin('GET', '/api/invocations?server=tools&tool=secretive');
    expect(JSON.stringify(log.body)).not.toContain('sk-very-secret-value');
    expect(log.body.invocations[0]).toMatchObject({ ok: false, errorCode: 'ERR_TOOL_ERROR' });
  });

  it('stops an invocation when the client cancels it', async () => {
    const client = await connect('tools');
    const controller = new AbortController();
    const call = client.callTool({ name: 'slow', arguments: {} }, undefined, {
      signal: controller.signal,
    });
    // Running in its container (a cold start may come first), then cancelled.
    await expect.poll(() => busyContainers(plane, 'tools'), { timeout: 20_000 }).toBe(1);
    controller.abort('changed my mind');
    await expect(call).rejects.toThrow();
    // The pool recovers: the next call of the same tool's pool works.
    await plane.admin('PUT', '/api/servers/tools/tools/slow', {
      description: 'now fast',
      code: 'return 2;',
    });
    const next = (await client.callTool({ name: 'slow', arguments: {} })) as CallToolResult;
    expect(text(next)).toBe('2');
    await expect
      .poll(async () =>
        (await plane.admin('GET', '/api/invocations?tool=slow')).body.invocations.map(
          (i: { errorCode: string | null }) => i.errorCode,
        ),
      )
      .toContain('ERR_CANCELLED');
  });
});

describe('server state', () => {
  it('answers 503 for a deactivated server and 404 for an unknown one', async () => {
    const client = await connect('sleepy');
    await client.listTools();
    expect(
      (await plane.admin('PATCH', '/api/servers/sleepy/settings', { active: false })).status,
    ).toBe(200);
    const response = await postInitialize(plane.mcpUrl('sleepy'));
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({
      jsonrpc: '2.0',
      error: { message: 'server "sleepy" is deactivated' },
    });
    await expect(client.listTools()).rejects.toThrow();
    const unknown = await loopbackFetch(plane.mcpUrl('nobody'), { method: 'POST', body: '{}' });
    expect(unknown.status).toBe(404);
    expect(
      (await plane.admin('PATCH', '/api/servers/sleepy/settings', { active: true })).status,
    ).toBe(200);
    const again = await connect('sleepy');
    expect((await again.listTools()).tools).toEqual([]);
  });
});

describe('transport errors', () => {
  const post = (body: string, headers: Record<string, string> = {}) =>
    loopbackFetch(plane.mcpUrl('tools'), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body,
    });

  it('answers invalid JSON with a JSON-RPC parse error', async () => {
    const response = await post('{not json');
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
  });

  it('answers a wrong content type with 415', async () => {
    const response = await post('{}', { 'content-type': 'text/plain' });
    expect(response.status).toBe(415);
    expect(await response.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
  });

  it('answers an oversized body with 413', async () => {
    const response = await post(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', pad: 'x'.repeat(5 * 1024 * 1024) }),
    );
    expect(response.status).toBe(413);
  });

  it('answers an unknown session with 404 and a request without one with 400', async () => {
    const unknown = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }), {
      'mcp-session-id': 'made-up',
    });
    expect(unknown.status).toBe(404);
    const none = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
    expect(none.status).toBe(400);
  });

  it('negotiates an older protocol revision', async () => {
    const response = await post(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-03-26',
          capabilities: {},
          clientInfo: { name: 'old', version: '1' },
        },
      }),
    );
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('"protocolVersion":"2025-03-26"');
  });
});
