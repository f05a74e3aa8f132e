/**
 * The modern era (MCP 2026-07-28) of a hosted server, through the official
 * SDK v2 client — pinned to 2026-07-28, and in `auto` mode — beside the
 * legacy era through the v1 client, on one control plane with real
 * containers: tools, prompts, resources and completions; tool code asking
 * its client (elicitation, sampling, roots) answered by input rounds in the
 * modern era and by requests on the call's stream in the legacy one, with
 * the same tool code; `sdk.client`; subscriptions/listen; cache hints.
 */
import { Client } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { loopbackFetch } from '../../support/loopback-fetch.js';

const SUB = 'modern';
let plane: TestControlPlane;

const TOOLS: Record<string, { code: string; parameters?: unknown[] }> = {
  echo: {
    code: 'return `echo ${params.text}`;',
    parameters: [{ name: 'text', type: 'string', required: true }],
  },
  greet: {
    code: `const answer = await sdk.elicit('Your name?', { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] }, { key: 'who' });
      if (answer.action !== 'accept') return 'no name';
      return 'hello ' + answer.content.name;`,
  },
  twoRounds: {
    code: `const first = await sdk.elicit('First?', { type: 'object', properties: { a: { type: 'string' } } }, { key: 'first' });
      const second = await sdk.elicit('Second?', { type: 'object', properties: { b: { type: 'string' } } }, { key: 'second' });
      return first.content.a + second.content.b;`,
  },
  all: {
    code: `const [name, sample, roots] = await Promise.all([
        sdk.elicit('Name?', { type: 'object', properties: { name: { type: 'string' } } }, { key: 'name' }),
        sdk.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 }, { key: 'llm' }),
        sdk.roots({ key: 'roots' }),
      ]);
      return [name.content.name, sample.content.text, roots.roots.length].join(',');`,
  },
  whoCalls: {
    code: 'return { era: sdk.client.era, version: sdk.client.protocolVersion, elicits: sdk.client.capabilities.elicitation !== undefined, name: sdk.client.info && sdk.client.info.name };',
  },
  logs: { code: "console.info('a line'); console.error('a worse line'); return 'logged';" },
  chatty: {
    code: `sdk.progress(1, 2, 'asking');
      console.info('before the question');
      const answer = await sdk.elicit('Colour?', { type: 'object', properties: { colour: { type: 'string' } } }, { key: 'colour' });
      sdk.progress(2, 2, 'answered');
      console.info('after the question');
      return 'colour ' + answer.content.colour;`,
  },
  sleepy: { code: "await new Promise((r) => setTimeout(r, 15000)); return 'woke';" },
};

beforeAll(async () => {
  plane = await startTestControlPlane();
  expect((await plane.admin('POST', '/api/servers', { subdomain: SUB })).status).toBe(201);
  for (const [name, tool] of Object.entries(TOOLS)) {
    const saved = await plane.admin('PUT', `/api/servers/${SUB}/tools/${name}`, {
      description: `${name} tool`,
      code: tool.code,
      parameters: tool.parameters ?? [],
      limits: { timeoutMs: 20_000 },
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
  }
  const prompt = await plane.admin('PUT', `/api/servers/${SUB}/prompts/ask`, {
    description: 'asks from code',
    arguments: [],
    code: `const answer = await sdk.elicit('Topic?', { type: 'object', properties: { topic: { type: 'string' } } }, { key: 'topic' });
      return [{ role: 'user', content: { type: 'text', text: 'Tell me about ' + answer.content.topic } }];`,
  });
  expect(prompt.status, JSON.stringify(prompt.body)).toBe(201);
  const resource = await plane.admin('PUT', `/api/servers/${SUB}/resources/readme`, {
    uri: 'docs://readme',
    mimeType: 'text/plain',
    text: 'read me',
  });
  expect(resource.status, JSON.stringify(resource.body)).toBe(201);
}, 180_000);

afterAll(async () => {
  await plane?.close();
});

const clients: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => undefined)));
});

type Mode = 'auto' | { pin: '2026-07-28' };

async function modernClient(mode: Mode = { pin: '2026-07-28' }): Promise<Client> {
  const client = new Client(
    { name: 'modern-test', version: '2.0.0' },
    {
      versionNegotiation: { mode },
      capabilities: { elicitation: {}, sampling: {}, roots: {} },
    },
  );
  client.setRequestHandler('elicitation/create', async (request) => ({
    action: 'accept',
    content: {
      name: 'Ada',
      a: 'x',
      b: 'y',
      topic: (request.params as { message: string }).message,
    },
  }));
  client.setRequestHandler('sampling/createMessage', async () => ({
    role: 'assistant',
    content: { type: 'text', text: 'sampled' },
    model: 'test-model',
    stopReason: 'endTurn',
  }));
  client.setRequestHandler('roots/list', async () => ({
    roots: [{ uri: 'file:///tmp', name: 'tmp' }],
  }));
  await client.connect(
    new StreamableHTTPClientTransport(plane.mcpUrl(SUB), { fetch: loopbackFetch }),
  );
  clients.push(client);
  return client;
}

async function legacyClient(): Promise<LegacyClient> {
  const client = new LegacyClient(
    { name: 'legacy-test', version: '1.0.0' },
    { capabilities: { elicitation: {}, sampling: {}, roots: {} } },
  );
  client.setRequestHandler(ElicitRequestSchema, async () => ({
    action: 'accept',
    content: { name: 'Ada', a: 'x', b: 'y', topic: 'Topic?' },
  }));
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({
    role: 'assistant',
    content: { type: 'text', text: 'sampled' },
    model: 'test-model',
  }));
  client.setRequestHandler(ListRootsRequestSchema, async () => ({
    roots: [{ uri: 'file:///tmp', name: 'tmp' }],
  }));
  await client.connect(new LegacyTransport(plane.mcpUrl(SUB), { fetch: loopbackFetch }));
  clients.push(client);
  return client;
}

function textOf(result: unknown): string {
  return ((result as { content: { text: string }[] }).content[0] ?? { text: '' }).text;
}

describe('the modern era through the SDK v2 client', () => {
  it('connects pinned to 2026-07-28 and in auto mode, and lists and calls tools', async () => {
    for (const mode of [{ pin: '2026-07-28' } as const, 'auto' as const]) {
      const client = await modernClient(mode);
      expect(client.getProtocolEra()).toBe('modern');
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain('echo');
      const result = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
      expect(textOf(result)).toBe('echo hi');
    }
  });

  it('answers tool code that asks its client, one round or several, with the same code as the legacy era', async () => {
    const modern = await modernClient();
    const legacy = await legacyClient();
    for (const client of [modern, legacy] as const) {
      expect(textOf(await client.callTool({ name: 'greet', arguments: {} }))).toBe('hello Ada');
      expect(textOf(await client.callTool({ name: 'twoRounds', arguments: {} }))).toBe('xy');
      expect(textOf(await client.callTool({ name: 'all', arguments: {} }))).toBe('Ada,sampled,1');
    }
  });

  it('records the era and the input rounds of each call in the invocation log', async () => {
    const log = await plane.admin('GET', `/api/invocations?server=${SUB}&tool=twoRounds`);
    const calls = (log.body.invocations as { era: string; inputRounds: number; ok: boolean }[]).map(
      ({ era, inputRounds, ok }) => ({ era, inputRounds, ok }),
    );
    expect(calls).toEqual(
      expect.arrayContaining([
        { era: 'modern', inputRounds: 2, ok: true },
        { era: 'legacy', inputRounds: 2, ok: true },
      ]),
    );
  });

  it('tells tool code which client calls (sdk.client)', async () => {
    const modern = await modernClient();
    const legacy = await legacyClient();
    const seen = [modern, legacy].map(async (client) =>
      JSON.parse(textOf(await client.callTool({ name: 'whoCalls', arguments: {} }))),
    );
    expect(await Promise.all(seen)).toEqual([
      { era: 'modern', version: '2026-07-28', elicits: true, name: 'modern-test' },
      { era: 'legacy', version: '2025-11-25', elicits: true, name: 'legacy-test' },
    ]);
  });

  it('renders a prompt whose code asks, and reads a resource', async () => {
    const client = await modernClient();
    const prompt = await client.getPrompt({ name: 'ask' });
    expect(JSON.stringify(prompt.messages)).toContain('Tell me about Topic?');
    const read = await client.readResource({ uri: 'docs://readme' });
    expect(read.contents[0]).toMatchObject({ uri: 'docs://readme', text: 'read me' });
  });

  it('listens for changes: updated resources and list changes it asked for, nothing else', async () => {
    const client = await modernClient();
    const heard: string[] = [];
    client.setNotificationHandler('notifications/resources/updated', async (notification) => {
      heard.push(`updated ${notification.params.uri}`);
    });
    client.setNotificationHandler('notifications/tools/list_changed', async () => {
      heard.push('tools changed');
    });
    const subscription = await client.listen({
      resourceSubscriptions: ['docs://readme'],
      promptsListChanged: true,
    });
    expect(subscription.honoredFilter).toEqual({
      resourceSubscriptions: ['docs://readme'],
      promptsListChanged: true,
    });
    const saved = await plane.admin('PUT', `/api/servers/${SUB}/resources/readme`, {
      uri: 'docs://readme',
      mimeType: 'text/plain',
      text: 'read me again',
    });
    expect(saved.status).toBe(200);
    const tool = await plane.admin('PUT', `/api/servers/${SUB}/tools/echo`, {
      description: 'echo, saved again',
      code: TOOLS.echo!.code,
      parameters: TOOLS.echo!.parameters,
    });
    expect(tool.status).toBe(200);
    await expect.poll(() => heard, { timeout: 5_000 }).toContain('updated docs://readme');
    expect(heard).not.toContain('tools changed');
    await subscription.close();
  });

  it('sends log lines only at or above the request log level', async () => {
    const lines: string[] = [];
    const client = await modernClient();
    client.setNotificationHandler('notifications/message', async (notification) => {
      lines.push(String(notification.params.data));
    });
    expect(textOf(await client.callTool({ name: 'logs', arguments: {} }))).toBe('logged');
    expect(lines).toEqual([]);
  });
});

describe('the modern wire', () => {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  async function post(body: unknown, headers: Record<string, string> = {}) {
    const message = body as { method: string; params?: { name?: string; uri?: string } };
    const response = await loopbackFetch(plane.mcpUrl(SUB), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': message.method,
        ...(message.params?.name === undefined ? {} : { 'mcp-name': message.params.name }),
        ...headers,
      },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  }

  it('answers server/discover with versions, capabilities, identity and cache hints', async () => {
    const { status, body } = await post({
      jsonrpc: '2.0',
      id: 7,
      method: 'server/discover',
      params: { _meta: meta },
    });
    expect(status).toBe(200);
    expect(body.id).toBe(7);
    expect(body.result).toMatchObject({
      resultType: 'complete',
      supportedVersions: ['2026-07-28'],
      capabilities: { tools: { listChanged: true } },
      cacheScope: 'public',
      ttlMs: 30_000,
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: `mcphost/${SUB}` } },
    });
  });

  it("tells server/discover the server's own cacheTtlMs, and the default again once it is cleared", async () => {
    const discover = async () =>
      (await post({ jsonrpc: '2.0', id: 8, method: 'server/discover', params: { _meta: meta } }))
        .body.result.ttlMs;
    const set = await plane.admin('PATCH', `/api/servers/${SUB}/settings`, { cacheTtlMs: 1_500 });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.server?.cacheTtlMs ?? set.body.cacheTtlMs).toBe(1_500);
    await expect.poll(discover).toBe(1_500);
    const refused = await plane.admin('PATCH', `/api/servers/${SUB}/settings`, { cacheTtlMs: -1 });
    expect(refused.status).toBe(400);
    expect(await discover()).toBe(1_500);
    const cleared = await plane.admin('PATCH', `/api/servers/${SUB}/settings`, {
      cacheTtlMs: null,
    });
    expect(cleared.status).toBe(200);
    await expect.poll(discover).toBe(30_000);
  });

  it('refuses an unsupported version, a header that contradicts the body, and removed methods', async () => {
    const unsupported = await post(
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: { _meta: { ...meta, 'io.modelcontextprotocol/protocolVersion': 'v9' } },
      },
      { 'mcp-protocol-version': 'v9' },
    );
    expect(unsupported.status).toBe(400);
    expect(unsupported.body).toMatchObject({
      id: 1,
      error: { code: -32022, data: { requested: 'v9', supported: ['2026-07-28'] } },
    });
    const mismatch = await post({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/list',
      params: { _meta: { ...meta, 'io.modelcontextprotocol/protocolVersion': 'v9' } },
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body).toMatchObject({ id: 2, error: { code: -32020 } });
    for (const method of ['initialize', 'ping', 'logging/setLevel', 'resources/subscribe']) {
      const removed = await post({ jsonrpc: '2.0', id: 3, method, params: { _meta: meta } });
      expect(removed.status, method).toBe(404);
      expect(removed.body, method).toMatchObject({ id: 3, error: { code: -32601 } });
    }
    const noName = await post(
      {
        jsonrpc: '2.0',
        id: 4,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'x' }, _meta: meta },
      },
      { 'mcp-name': 'other' },
    );
    expect(noName.status).toBe(400);
    expect(noName.body).toMatchObject({ id: 4, error: { code: -32020 } });
  });

  it('refuses a malformed _meta envelope with the classifier’s own answer, however the request was routed', async () => {
    // Routed without the classifier (era-routing.ts): the protocol layer refuses the envelope,
    // and the answer is the one the classifier gives (400, -32602, the key and its problem).
    const cases = [
      { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' },
      { ...meta, 'io.modelcontextprotocol/clientCapabilities': 'none' },
      { ...meta, 'io.modelcontextprotocol/clientInfo': { name: 7 } },
      { ...meta, 'io.modelcontextprotocol/logLevel': 'loud' },
    ];
    for (const [index, envelope] of cases.entries()) {
      for (const method of ['tools/list', 'tools/call']) {
        const params =
          method === 'tools/call'
            ? { name: 'echo', arguments: { text: 'x' }, _meta: envelope }
            : { _meta: envelope };
        const refused = await post({ jsonrpc: '2.0', id: index, method, params });
        const what = `${method} ${JSON.stringify(envelope)}`;
        expect(refused.status, what).toBe(400);
        expect(refused.body, what).toMatchObject({
          id: index,
          error: {
            code: -32602,
            message: expect.stringMatching(
              /^Invalid _meta envelope for protocol revision 2026-07-28: io\.modelcontextprotocol\//,
            ),
            data: { envelope: { key: expect.any(String), problem: expect.any(String) } },
          },
        });
      }
    }
    // The classifier's rung comes before the standard headers' (-32020), shortcut or not.
    const headerless = await post(
      { jsonrpc: '2.0', id: 8, method: 'tools/list', params: { _meta: cases[0] } },
      { 'mcp-method': '' },
    );
    expect(headerless.status).toBe(400);
    expect(headerless.body).toMatchObject({ id: 8, error: { code: -32602 } });
    const nameless = await post(
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', _meta: cases[1] } },
      { 'mcp-name': 'other' },
    );
    expect(nameless.status).toBe(400);
    expect(nameless.body).toMatchObject({ id: 7, error: { code: -32602 } });
    // The same request with a valid envelope is served.
    const served = await post({
      jsonrpc: '2.0',
      id: 9,
      method: 'tools/list',
      params: { _meta: meta },
    });
    expect(served.status).toBe(200);
  });

  it('cancels a call whose client closes its response (the 2026-07-28 way to cancel)', async () => {
    const controller = new AbortController();
    const response = loopbackFetch(plane.mcpUrl(SUB), {
      method: 'POST',
      signal: controller.signal,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'sleepy',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 12,
        method: 'tools/call',
        params: { name: 'sleepy', arguments: {}, _meta: meta },
      }),
    });
    setTimeout(() => controller.abort(), 800);
    await expect(response).rejects.toThrow();
    await expect
      .poll(
        async () => {
          const log = await plane.admin('GET', `/api/invocations?server=${SUB}&tool=sleepy`);
          return (log.body.invocations as { errorCode: string | null; durationMs: number }[])[0];
        },
        { timeout: 10_000 },
      )
      .toMatchObject({ errorCode: 'ERR_CANCELLED', durationMs: expect.any(Number) });
    const log = await plane.admin('GET', `/api/invocations?server=${SUB}&tool=sleepy`);
    expect(log.body.invocations[0].durationMs).toBeLessThan(10_000);
  });

  it('answers a missing resource with -32602 and its URI', async () => {
    const { body } = await post(
      {
        jsonrpc: '2.0',
        id: 9,
        method: 'resources/read',
        params: { uri: 'docs://nothing', _meta: meta },
      },
      { 'mcp-name': 'docs://nothing' },
    );
    expect(body).toMatchObject({ id: 9, error: { code: -32602, data: { uri: 'docs://nothing' } } });
  });

  it('answers -32021 with HTTP 400 when tool code asks for what the request did not declare', async () => {
    const { status, body } = await post({
      jsonrpc: '2.0',
      id: 11,
      method: 'tools/call',
      params: { name: 'greet', arguments: {}, _meta: meta },
    });
    expect(status).toBe(400);
    expect(body).toMatchObject({
      id: 11,
      error: { code: -32021, data: { requiredCapabilities: { elicitation: { form: {} } } } },
    });
  });
});

describe('notifications of a call on each round', () => {
  /** One modern tools/call of `chatty` on the raw wire; the SSE events' data, in order. */
  async function round(extra: Record<string, unknown>, token: string): Promise<any[]> {
    const response = await loopbackFetch(plane.mcpUrl(SUB), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'chatty',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: token,
        method: 'tools/call',
        params: {
          name: 'chatty',
          arguments: {},
          ...extra,
          _meta: {
            progressToken: token,
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
            'io.modelcontextprotocol/logLevel': 'info',
          },
        },
      }),
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const text = await response.text();
    return text
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice('data: '.length)));
  }

  it('sends what the code says before its first question on the first response, and the rest on the retry', async () => {
    const first = await round({}, 'first');
    expect(first.map((event) => event.method ?? event.result?.resultType)).toEqual([
      'notifications/progress',
      'notifications/message',
      'input_required',
    ]);
    expect(first[0].params).toMatchObject({ progressToken: 'first', progress: 1, total: 2 });
    expect(first[1].params).toMatchObject({ level: 'info', data: 'before the question' });
    const asked = first[2].result;
    expect(Object.keys(asked.inputRequests)).toEqual(['colour']);

    const second = await round(
      {
        requestState: asked.requestState,
        inputResponses: { colour: { action: 'accept', content: { colour: 'teal' } } },
      },
      'second',
    );
    expect(second.map((event) => event.method ?? event.result?.resultType)).toEqual([
      'notifications/progress',
      'notifications/message',
      'complete',
    ]);
    expect(second[0].params).toMatchObject({ progressToken: 'second', progress: 2 });
    expect(second[1].params).toMatchObject({ data: 'after the question' });
    expect(second[2].result.content[0].text).toBe('colour teal');
  });
});
