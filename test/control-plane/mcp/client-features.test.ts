/**
 * What tool code sends to the calling client within a call — rich content,
 * progress, elicitation and sampling — end to end: the official SDK client
 * over real HTTP against a control plane whose tools run in real runner
 * containers.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  McpError,
  type CallToolResult,
  type ClientCapabilities,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODE_META_KEY } from '../../../control-plane/mcp/tool-result.js';
import { loopbackFetch } from '../../support/loopback-fetch.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';

let plane: TestControlPlane;
const clients: Client[] = [];

/** A 1×1 transparent PNG. */
const PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

const RESULT_LIMIT = 16 * 1024;

async function connect(capabilities: ClientCapabilities = {}): Promise<Client> {
  const client = new Client({ name: 'mcphost-test', version: '1.0.0' }, { capabilities });
  await client.connect(
    new StreamableHTTPClientTransport(plane.mcpUrl('features'), { fetch: loopbackFetch }),
  );
  clients.push(client);
  return client;
}

function errorCode(result: CallToolResult): unknown {
  return result._meta?.[ERROR_CODE_META_KEY];
}

function text(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : '';
}

async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

beforeAll(async () => {
  // A small result limit, so that one picture passes it.
  plane = await startTestControlPlane({ TOOL_MAX_RESULT_BYTES: String(RESULT_LIMIT) });
  expect((await plane.admin('POST', '/api/servers', { subdomain: 'features' })).status).toBe(201);
  // One test client makes a few hundred requests in seconds: more than a caller's default burst.
  const limits = await plane.admin('PATCH', '/api/servers/features/settings', {
    rateLimit: { perMinute: 100_000, burst: 10_000 },
  });
  expect(limits.status, JSON.stringify(limits.body)).toBe(200);
  const save = async (name: string, body: object) => {
    const response = await plane.admin('PUT', `/api/servers/features/tools/${name}`, {
      description: `The ${name} fixture.`,
      ...body,
    });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
  };
  await save('picture', {
    code: `return sdk.content.image(${JSON.stringify(PNG_BASE64)}, 'image/png');`,
  });
  await save('mixed', {
    code: `return [
      sdk.content.text('a picture and a file'),
      sdk.content.image(${JSON.stringify(PNG_BASE64)}, 'image/png'),
      sdk.content.audio('UklGRiQAAABXQVZF', 'audio/wav'),
      sdk.content.resource({ uri: 'file:///notes.txt', mimeType: 'text/plain', text: 'hello' }),
      sdk.content.resource({ uri: 'mem://blob', blob: 'Ynl0ZXM=' }),
    ];`,
  });
  await save('look_alike', {
    description: 'A plain object shaped like a block is data, not content.',
    code: "return { type: 'image', data: 'AAAA', mimeType: 'image/png' };",
  });
  await save('half_blocks', {
    code: "return [sdk.content.text('a'), 'b'];",
  });
  await save('bad_block', {
    code: "return sdk.content.image('not base64!', 'image/png');",
  });
  await save('huge_picture', {
    code: `return sdk.content.image('A'.repeat(${RESULT_LIMIT}), 'image/png');`,
  });
  await save('steps', {
    code: `for (let i = 1; i <= 3; i++) sdk.progress(i, 3, 'step ' + i);
      return 'done';`,
  });
  await save('backwards', {
    code: 'sdk.progress(2); sdk.progress(1); return "unreachable";',
  });
  await save('interview', {
    code: `const answer = await sdk.elicit('What is your name?', {
        type: 'object',
        properties: { name: { type: 'string', description: 'your name' } },
        required: ['name'],
      });
      if (answer.action !== 'accept') return { declined: answer.action };
      const reply = await sdk.sample({
        messages: [{ role: 'user', content: { type: 'text', text: 'Greet ' + answer.content.name } }],
        maxTokens: 50,
        systemPrompt: 'Be brief.',
      });
      return { name: answer.content.name, greeting: reply.content.text, model: reply.model };`,
  });
  await save('ask_only', {
    code: `try {
        await sdk.elicit('Sure?', { type: 'object', properties: { ok: { type: 'boolean' } } });
        return 'answered';
      } catch (error) {
        return { code: error.code, message: error.message };
      }`,
  });
  await save('big_form', {
    code: `const properties = {};
      for (let i = 0; i < 65; i++) properties['field' + i] = { type: 'string' };
      try {
        await sdk.elicit('Too many questions', { type: 'object', properties });
        return 'asked';
      } catch (error) {
        return { code: error.code, message: error.message };
      }`,
  });
  await save('typed_form', {
    code: `try {
        return await sdk.elicit('How many?', {
          type: 'object',
          properties: { count: { type: 'integer', minimum: 1 } },
          required: ['count'],
        });
      } catch (error) {
        return { code: error.code, message: error.message };
      }`,
  });
  await save('bad_sample', {
    code: `try {
        return await sdk.sample({ messages: 'hello', maxTokens: 10 });
      } catch (error) {
        return { code: error.code, message: error.message };
      }`,
  });
  await save('waits', {
    limits: { timeoutMs: 1500 },
    code: "await sdk.elicit('Never answered', { type: 'object', properties: {} }); return 'no';",
  });
}, 180_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await plane?.close();
});

describe('rich results', () => {
  it('gives image content', async () => {
    const result = await call(await connect(), 'picture');
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: 'image', data: PNG_BASE64, mimeType: 'image/png' }]);
    expect(result.structuredContent).toBeUndefined();
  });

  it('gives text, image, audio and embedded resources in one result, in order', async () => {
    const result = await call(await connect(), 'mixed');
    expect(result.content.map((block) => block.type)).toEqual([
      'text',
      'image',
      'audio',
      'resource',
      'resource',
    ]);
    expect(result.content[3]).toEqual({
      type: 'resource',
      resource: { uri: 'file:///notes.txt', mimeType: 'text/plain', text: 'hello' },
    });
    expect(result.content[4]).toEqual({
      type: 'resource',
      resource: { uri: 'mem://blob', blob: 'Ynl0ZXM=' },
    });
  });

  it('treats a look-alike plain object as data, as before', async () => {
    const result = await call(await connect(), 'look_alike');
    expect(result.content).toEqual([
      { type: 'text', text: '{"type":"image","data":"AAAA","mimeType":"image/png"}' },
    ]);
    expect(result.structuredContent).toEqual({
      type: 'image',
      data: 'AAAA',
      mimeType: 'image/png',
    });
  });

  it('refuses an array mixing blocks and plain values, and data that is not base64', async () => {
    const client = await connect();
    const mixed = await call(client, 'half_blocks');
    expect(mixed.isError).toBe(true);
    expect(text(mixed)).toMatch(/mixes sdk\.content blocks with other values/);
    const bad = await call(client, 'bad_block');
    expect(bad.isError).toBe(true);
    expect(errorCode(bad)).toBe('ERR_TOOL_ERROR');
    expect(text(bad)).toMatch(/sdk\.content\.image: data must be base64/);
  });

  it('applies the result size limit to the encoded content', async () => {
    const result = await call(await connect(), 'huge_picture');
    expect(result.isError).toBe(true);
    expect(errorCode(result)).toBe('ERR_RESULT_TOO_LARGE');
  });
});

describe('sdk.progress', () => {
  it('sends progress notifications in order when the client sent a progress token', async () => {
    const client = await connect();
    const seen: Progress[] = [];
    const result = (await client.callTool({ name: 'steps', arguments: {} }, CallToolResultSchema, {
      onprogress: (progress) => seen.push(progress),
    })) as CallToolResult;
    expect(text(result)).toBe('done');
    expect(seen).toEqual([
      { progress: 1, total: 3, message: 'step 1' },
      { progress: 2, total: 3, message: 'step 2' },
      { progress: 3, total: 3, message: 'step 3' },
    ]);
  });

  it('sends nothing, and fails nothing, without a progress token', async () => {
    const result = await call(await connect(), 'steps');
    expect(result.isError).toBeFalsy();
    expect(text(result)).toBe('done');
  });

  it('refuses progress that does not increase', async () => {
    const result = await call(await connect(), 'backwards');
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/progress must increase/);
  });
});

describe('sdk.elicit and sdk.sample', () => {
  it('asks the calling client for a form and a completion within one call', async () => {
    const client = await connect({ elicitation: {}, sampling: {} });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(`elicit: ${request.params.message}`);
      return { action: 'accept', content: { name: 'Ada' } };
    });
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      const first = request.params.messages[0]?.content;
      asked.push(`sample: ${first && 'text' in first ? first.text : ''}`);
      expect(request.params.systemPrompt).toBe('Be brief.');
      return {
        role: 'assistant',
        content: { type: 'text', text: 'Hello, Ada!' },
        model: 'test-model',
      };
    });
    const result = await call(client, 'interview');
    expect(result.isError, text(result)).toBeFalsy();
    expect(result.structuredContent).toEqual({
      name: 'Ada',
      greeting: 'Hello, Ada!',
      model: 'test-model',
    });
    expect(asked).toEqual(['elicit: What is your name?', 'sample: Greet Ada']);
  });

  it('gives the tool the action when the user declines', async () => {
    const client = await connect({ elicitation: {} });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'decline' }));
    const result = await call(client, 'interview');
    expect(result.structuredContent).toEqual({ declined: 'decline' });
  });

  it('is a clear tool error when the client lacks the capability', async () => {
    const result = await call(await connect(), 'ask_only');
    expect(result.structuredContent).toMatchObject({
      code: 'ERR_CLIENT_UNSUPPORTED',
      message: expect.stringMatching(/does not offer elicitation/),
    });
  });

  it('passes the client’s error answer to the tool as ERR_CLIENT_FAILED', async () => {
    const client = await connect({ elicitation: {} });
    client.setRequestHandler(ElicitRequestSchema, async () => {
      throw new McpError(-32603, 'the user closed the window');
    });
    const result = await call(client, 'ask_only');
    expect(result.structuredContent).toMatchObject({
      code: 'ERR_CLIENT_FAILED',
      message: expect.stringMatching(/the user closed the window/),
    });
  });

  it('bounds the form a tool may ask for', async () => {
    const client = await connect({ elicitation: {} });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'decline' }));
    const result = await call(client, 'big_form');
    expect(result.structuredContent).toMatchObject({
      code: 'ERR_INVALID_ARGUMENT',
      message: expect.stringMatching(/65 properties; a form may have at most 64/),
    });
  });

  it('checks an accepted answer against the form before the tool sees it', async () => {
    const client = await connect({ elicitation: {} });
    const answers = [{ count: 0 }, { count: 3 }];
    client.setRequestHandler(ElicitRequestSchema, async () => ({
      action: 'accept',
      content: answers.shift()!,
    }));
    const refused = await call(client, 'typed_form');
    expect(refused.structuredContent).toMatchObject({
      code: 'ERR_CLIENT_FAILED',
      message: expect.stringMatching(/does not match requested schema/),
    });
    const accepted = await call(client, 'typed_form');
    expect(accepted.structuredContent).toEqual({ action: 'accept', content: { count: 3 } });
  });

  it('refuses a malformed sampling request before the client sees it', async () => {
    const client = await connect({ sampling: {} });
    let asked = false;
    client.setRequestHandler(CreateMessageRequestSchema, async () => {
      asked = true;
      return { role: 'assistant', content: { type: 'text', text: '' }, model: 'm' };
    });
    const result = await call(client, 'bad_sample');
    expect(result.structuredContent).toMatchObject({
      code: 'ERR_INVALID_ARGUMENT',
      message: expect.stringMatching(/^sdk\.sample: messages/),
    });
    expect(asked).toBe(false);
  });

  it('ends the wait with the tool timeout and tells the client its request is cancelled', async () => {
    const client = await connect({ elicitation: {} });
    let cancelled!: () => void;
    const clientSawCancel = new Promise<void>((resolve) => (cancelled = resolve));
    client.setRequestHandler(ElicitRequestSchema, (_request, extra) => {
      extra.signal.addEventListener('abort', () => cancelled(), { once: true });
      return new Promise(() => undefined);
    });
    const result = await call(client, 'waits');
    expect(result.isError).toBe(true);
    expect(errorCode(result)).toBe('ERR_TOOL_TIMEOUT');
    await clientSawCancel;
  });

  it('answers a test run with "not available in a test run"', async () => {
    const response = await plane.admin('POST', '/api/servers/features/tools/ask_only/invoke', {
      params: {},
    });
    expect(response.status).toBe(200);
    expect(response.body.result).toMatchObject({
      code: 'ERR_CLIENT_UNSUPPORTED',
      message: expect.stringMatching(/not available in a test run/),
    });
  });

  it('returns content blocks from a test run as content', async () => {
    const response = await plane.admin('POST', '/api/servers/features/tools/picture/invoke', {
      params: {},
    });
    expect(response.body).toMatchObject({
      ok: true,
      content: [{ type: 'image', data: PNG_BASE64, mimeType: 'image/png' }],
    });
  });
});
