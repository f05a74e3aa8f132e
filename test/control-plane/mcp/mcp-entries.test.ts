/**
 * Prompts, resources and completions as an MCP client sees them (issue 14):
 * the official SDK client over real HTTP against one control plane (SQLite)
 * whose prompt, template and completion code runs in real runner containers.
 * Capabilities follow what a server has; lists page by cursor; prompts/get,
 * resources/read and completion/complete answer templates, static contents
 * and code, with JSON-RPC errors of stable codes; code runs are logged and
 * counted by kind; subscriptions and list changes reach the session's GET
 * stream when an admin edits.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  LoggingMessageNotificationSchema,
  McpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loopbackFetch } from '../../support/loopback-fetch.js';
import { connectSdkSession, type SdkSession } from '../../support/sdk-session.js';
import {
  startTestControlPlane,
  TEST_ADMIN_TOKEN,
  type TestControlPlane,
} from '../../support/control-plane.js';

let plane: TestControlPlane;
const clients: Client[] = [];

/** A 1×1 transparent PNG (70 bytes). */
const PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

type Connected = SdkSession;

async function connect(subdomain: string): Promise<Connected> {
  const session = await connectSdkSession(plane.mcpUrl(subdomain));
  clients.push(session.client);
  return session;
}

/** The McpError `work` fails with (the test fails if it succeeds or fails otherwise). */
async function rpcError(work: Promise<unknown>): Promise<McpError> {
  try {
    await work;
  } catch (error) {
    if (error instanceof McpError) return error;
    throw error;
  }
  throw new Error('expected a JSON-RPC error, the request succeeded');
}

/** Saves through the admin API and expects the status. */
async function put(path: string, body: unknown, status: number): Promise<void> {
  const saved = await plane.admin('PUT', path, body);
  expect(saved.status, `${path}: ${JSON.stringify(saved.body)}`).toBe(status);
}

async function createServer(subdomain: string): Promise<void> {
  expect((await plane.admin('POST', '/api/servers', { subdomain })).status).toBe(201);
  // A test client makes many requests in seconds: more than a caller's default burst.
  const limits = await plane.admin('PATCH', `/api/servers/${subdomain}/settings`, {
    rateLimit: { perMinute: 100_000, burst: 10_000 },
  });
  expect(limits.status, JSON.stringify(limits.body)).toBe(200);
}

const ENTRIES = '/api/servers/entries';

const CITIES = ['Lisbon', 'paris', 'Comparison', 'Parma', 'PARIS-NORD', 'Paris', 'Oslo'];

beforeAll(async () => {
  plane = await startTestControlPlane();
  await createServer('bare');
  await createServer('entries');

  await put(
    `${ENTRIES}/prompts/summary`,
    {
      title: 'Summarise a city',
      description: 'Asks for a summary of a city',
      arguments: [
        { name: 'city', description: 'Which city', required: true },
        {
          name: 'style',
          complete: { code: "return ['short', 'long'].filter((s) => s.startsWith(params.value));" },
        },
      ],
      messages: [
        {
          role: 'user',
          content: { type: 'text', text: 'Summarise {{city}} in a {{ style }} style.' },
        },
        {
          role: 'user',
          content: {
            type: 'resource',
            resource: { uri: 'weather://{{city}}/today', mimeType: 'text/plain', text: '{{city}}' },
          },
        },
      ],
    },
    201,
  );
  await put(
    `${ENTRIES}/prompts/echo`,
    {
      description: 'Repeats a word',
      arguments: [{ name: 'word', required: true }],
      messages: [{ role: 'user', content: { type: 'text', text: '{{word}} '.repeat(100) } }],
    },
    201,
  );
  await put(
    `${ENTRIES}/prompts/greeting`,
    {
      description: 'Greets someone',
      arguments: [{ name: 'who', required: true }],
      code: 'console.log(`greeting ${params.who}`); return `Hello ${params.who}`;',
    },
    201,
  );
  await put(
    `${ENTRIES}/prompts/picture`,
    {
      description: 'Shows a picture',
      code: `return [
        { role: 'user', content: sdk.content.image(${JSON.stringify(PNG_BASE64)}, 'image/png') },
        { role: 'assistant', content: { type: 'text', text: 'A pixel.' } },
      ];`,
    },
    201,
  );
  await put(
    `${ENTRIES}/prompts/grumpy`,
    { description: 'Fails', code: "throw new Error('no prompt today');" },
    201,
  );
  expect(
    (await plane.admin('PUT', `${ENTRIES}/secrets/API_KEY`, { value: 'sk-0123456789' })).status,
  ).toBe(200);
  await put(
    `${ENTRIES}/prompts/keyed`,
    {
      description: 'Reads the secret it lists',
      secrets: ['API_KEY'],
      arguments: [{ name: 'hint', complete: { code: 'return [`key of ${env.API_KEY.length}`];' } }],
      code: 'return `key of ${env.API_KEY.length}`;',
    },
    201,
  );
  await put(
    `${ENTRIES}/prompts/keyless`,
    {
      description: 'Lists no secret',
      arguments: [{ name: 'hint', complete: { code: 'return [String(env.API_KEY)];' } }],
      code: 'return `key: ${env.API_KEY}`;',
    },
    201,
  );
  await put(
    `${ENTRIES}/prompts/endless`,
    {
      description: 'Never ends',
      limits: { timeoutMs: 1000 },
      code: 'await new Promise(() => undefined);',
    },
    201,
  );
  await put(
    `${ENTRIES}/prompts/ranked`,
    {
      description: 'Completions of every kind',
      arguments: [
        { name: 'city', complete: { values: CITIES } },
        {
          name: 'many',
          complete: {
            values: Array.from({ length: 150 }, (_, i) => `item-${String(i).padStart(3, '0')}`),
          },
        },
        { name: 'free' },
        {
          name: 'coded',
          complete: {
            code: "return [params.argument + '|' + params.value + '|' + JSON.stringify(params.arguments)];",
          },
        },
      ],
      messages: [{ role: 'user', content: { type: 'text', text: '{{city}} {{many}}' } }],
    },
    201,
  );

  await put(
    `${ENTRIES}/resources/handbook`,
    {
      uri: 'docs://handbook',
      title: 'Handbook',
      description: 'The handbook',
      mimeType: 'text/markdown',
      annotations: { audience: ['user'], priority: 0.5 },
      text: '# Handbook – été',
    },
    201,
  );
  await put(
    `${ENTRIES}/resources/logo`,
    { uri: 'images://logo', mimeType: 'image/png', blob: PNG_BASE64 },
    201,
  );
  await put(
    `${ENTRIES}/resources/weather`,
    {
      uriTemplate: 'weather://{city}/today',
      description: 'Today’s weather of a city',
      code: 'console.log(`reading ${params.city}`); return `sunny in ${params.city}`;',
      complete: { city: { values: ['Paris', 'Lisbon', 'London'] } },
    },
    201,
  );
  await put(
    `${ENTRIES}/resources/report`,
    {
      uriTemplate: 'report://{name}',
      mimeType: 'text/csv',
      code: "return sdk.content.resource({ uri: `report://${params.name}/data.csv`, mimeType: 'text/csv', text: 'a,b\\n1,2' });",
    },
    201,
  );
  await put(
    `${ENTRIES}/resources/inline`,
    {
      uriTemplate: 'inline://{name}',
      // An embedded resource block is answered as it is, under the URI it names.
      code: "return sdk.content.resource({ uri: 'inline://' + params.name + '.csv', mimeType: 'text/csv', text: 'x,y' });",
    },
    201,
  );
  await put(
    `${ENTRIES}/resources/stats`,
    {
      uriTemplate: 'stats://{kind}{?window}',
      code: 'return { kind: params.kind, window: params.window, count: 3 };',
    },
    201,
  );
  await put(
    `${ENTRIES}/resources/files`,
    {
      uriTemplate: 'files://{dir}/{file}',
      code: 'return params.dir + "/" + params.file;',
      complete: {
        file: {
          code: "return { values: [params.arguments.dir + '/' + params.value + '.txt'], total: 7, hasMore: true };",
        },
      },
    },
    201,
  );
}, 180_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await plane?.close();
});

describe('capabilities', () => {
  it('announces neither prompts, resources nor completions for a server without them', async () => {
    const { client } = await connect('bare');
    const capabilities = client.getServerCapabilities()!;
    expect(capabilities).toHaveProperty('tools');
    expect(capabilities).not.toHaveProperty('prompts');
    expect(capabilities).not.toHaveProperty('resources');
    expect(capabilities).not.toHaveProperty('completions');
    for (const refused of [
      client.listPrompts(),
      client.listResources(),
      client.readResource({ uri: 'docs://handbook' }),
      client.complete({
        ref: { type: 'ref/prompt', name: 'x' },
        argument: { name: 'a', value: '' },
      }),
    ]) {
      expect((await rpcError(refused)).code).toBe(-32601);
    }
  });

  it('announces prompts, resources with subscribe, and completions for a server with both', async () => {
    const { client } = await connect('entries');
    expect(client.getServerCapabilities()).toMatchObject({
      prompts: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      completions: {},
    });
  });

  it('keeps a session’s capabilities; a new session sees the first prompt', async () => {
    await createServer('late');
    const before = await connect('late');
    await put('/api/servers/late/prompts/first', { description: 'd', code: 'return "x";' }, 201);
    expect(before.client.getServerCapabilities()).not.toHaveProperty('prompts');
    expect((await rpcError(before.client.listPrompts())).code).toBe(-32601);
    const after = await connect('late');
    expect(after.client.getServerCapabilities()).toMatchObject({
      prompts: { listChanged: true },
      completions: {},
    });
    expect(after.client.getServerCapabilities()).not.toHaveProperty('resources');
    expect((await after.client.listPrompts()).prompts.map((p) => p.name)).toEqual(['first']);
  });
});

describe('prompts', () => {
  it('lists prompts by name with their arguments', async () => {
    const { client } = await connect('entries');
    const listed = await client.listPrompts();
    expect(listed.nextCursor).toBeUndefined();
    expect(listed.prompts.map((p) => p.name)).toEqual([
      'echo',
      'endless',
      'greeting',
      'grumpy',
      'keyed',
      'keyless',
      'picture',
      'ranked',
      'summary',
    ]);
    expect(listed.prompts.find((p) => p.name === 'summary')).toEqual({
      name: 'summary',
      title: 'Summarise a city',
      description: 'Asks for a summary of a city',
      arguments: [
        { name: 'city', description: 'Which city', required: true },
        { name: 'style', required: false },
      ],
    });
  });

  it('pages 105 prompts as 100 then 5, and refuses a cursor it did not give', async () => {
    await createServer('paged');
    const names = Array.from({ length: 105 }, (_, i) => `p${String(i).padStart(3, '0')}`);
    for (const name of names) {
      await put(
        `/api/servers/paged/prompts/${name}`,
        { description: name, code: 'return "x";' },
        201,
      );
    }
    const { client } = await connect('paged');
    const first = await client.listPrompts();
    expect(first.prompts).toHaveLength(100);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await client.listPrompts({ cursor: first.nextCursor });
    expect(second.prompts).toHaveLength(5);
    expect(second.nextCursor).toBeUndefined();
    const seen = [...first.prompts, ...second.prompts].map((p) => p.name);
    expect(new Set(seen).size).toBe(105);
    expect(seen).toEqual(names);

    const refused = await rpcError(client.listPrompts({ cursor: 'not a cursor!' }));
    expect(refused.code).toBe(-32602);
    expect(refused.data).toMatchObject({ code: 'ERR_VALIDATION' });
  }, 120_000);

  it('gets a template prompt with its arguments in place', async () => {
    const { client } = await connect('entries');
    const result = await client.getPrompt({
      name: 'summary',
      arguments: { city: 'Paris', style: 'short' },
    });
    expect(result).toEqual({
      description: 'Asks for a summary of a city',
      messages: [
        { role: 'user', content: { type: 'text', text: 'Summarise Paris in a short style.' } },
        {
          role: 'user',
          content: {
            type: 'resource',
            resource: { uri: 'weather://Paris/today', mimeType: 'text/plain', text: 'Paris' },
          },
        },
      ],
    });
    const withoutStyle = await client.getPrompt({
      name: 'summary',
      arguments: { city: '{{style}}' },
    });
    expect(withoutStyle.messages[0]!.content).toEqual({
      type: 'text',
      text: 'Summarise {{style}} in a  style.',
    });
  });

  it('refuses missing and undeclared arguments, and an unknown prompt, with -32602', async () => {
    const { client } = await connect('entries');
    const missing = await rpcError(
      client.getPrompt({ name: 'summary', arguments: { style: 'x' } }),
    );
    expect(missing.code).toBe(-32602);
    expect(missing.data).toMatchObject({ code: 'ERR_INVALID_ARGUMENT' });
    expect(missing.message).toContain('city');

    const undeclared = await rpcError(
      client.getPrompt({ name: 'summary', arguments: { city: 'Paris', mood: 'happy' } }),
    );
    expect(undeclared.code).toBe(-32602);
    expect(undeclared.data).toMatchObject({ code: 'ERR_INVALID_ARGUMENT' });
    expect(undeclared.message).toContain('mood');

    const unknown = await rpcError(client.getPrompt({ name: 'nothing' }));
    expect(unknown.code).toBe(-32602);
    expect(unknown.data).toMatchObject({ code: 'ERR_UNKNOWN_PROMPT' });
    expect(unknown.message).toContain('nothing');
  });

  it('refuses an argument that is not a string with -32602 ERR_INVALID_ARGUMENT', async () => {
    const { client } = await connect('entries');
    const notString = await rpcError(
      client.getPrompt({
        name: 'summary',
        arguments: { city: 3 } as unknown as Record<string, string>,
      }),
    );
    expect({ code: notString.code, data: notString.data }).toEqual({
      code: -32602,
      data: { code: 'ERR_INVALID_ARGUMENT' },
    });
    expect(notString.message).toContain('city');
  });

  it('refuses a template render past TOOL_MAX_RESULT_BYTES (placeholders multiply an argument)', async () => {
    const { client } = await connect('entries');
    const small = await client.getPrompt({ name: 'echo', arguments: { word: 'hi' } });
    expect(small.messages[0]!.content).toEqual({ type: 'text', text: 'hi '.repeat(100) });
    // 100 × 11 000 characters: 1.1 M, past the default 1 MiB.
    const failed = await rpcError(
      client.getPrompt({ name: 'echo', arguments: { word: 'x'.repeat(11_000) } }),
    );
    expect(failed.data).toMatchObject({ code: 'ERR_RESULT_TOO_LARGE' });
    expect(failed.message).toContain('TOOL_MAX_RESULT_BYTES');
  });

  it('runs a code prompt returning a string, its console lines sent as log messages', async () => {
    const { client } = await connect('entries');
    const logs: { level: string; logger?: string; data: unknown }[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      const { level, logger, data } = notification.params;
      logs.push({ level, logger, data });
    });
    const result = await client.getPrompt({ name: 'greeting', arguments: { who: 'Ada' } });
    expect(result).toEqual({
      description: 'Greets someone',
      messages: [{ role: 'user', content: { type: 'text', text: 'Hello Ada' } }],
    });
    expect(logs).toEqual([{ level: 'info', logger: 'greeting', data: 'greeting Ada' }]);
  }, 60_000);

  it('runs a code prompt returning messages with sdk.content blocks', async () => {
    const { client } = await connect('entries');
    const result = await client.getPrompt({ name: 'picture' });
    expect(result.messages).toEqual([
      { role: 'user', content: { type: 'image', data: PNG_BASE64, mimeType: 'image/png' } },
      { role: 'assistant', content: { type: 'text', text: 'A pixel.' } },
    ]);
  }, 60_000);

  it('answers a prompt whose code throws with a JSON-RPC error holding the thrown message', async () => {
    const { client } = await connect('entries');
    const failed = await rpcError(client.getPrompt({ name: 'grumpy' }));
    expect(failed.code).toBe(-32603);
    expect(failed.data).toMatchObject({ code: 'ERR_TOOL_ERROR' });
    // The SDK client prefixes the code; what the server sent is the thrown message itself.
    expect(failed.message).toBe('MCP error -32603: no prompt today');
  }, 60_000);
});

describe('prompt code', () => {
  it('reads only the secrets its prompt lists, in prompt and completion code', async () => {
    const { client } = await connect('entries');
    const keyed = await client.getPrompt({ name: 'keyed' });
    expect(keyed.messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'key of 13' } },
    ]);
    const keyless = await client.getPrompt({ name: 'keyless' });
    expect(keyless.messages[0]!.content).toEqual({ type: 'text', text: 'key: undefined' });
    const completed = await client.complete({
      ref: { type: 'ref/prompt', name: 'keyed' },
      argument: { name: 'hint', value: '' },
    });
    expect(completed.completion.values).toEqual(['key of 13']);
    const unlisted = await client.complete({
      ref: { type: 'ref/prompt', name: 'keyless' },
      argument: { name: 'hint', value: '' },
    });
    expect(unlisted.completion.values).toEqual(['undefined']);
  }, 60_000);

  it('answers prompt code past its time limit with ERR_TOOL_TIMEOUT', async () => {
    const { client } = await connect('entries');
    const failed = await rpcError(client.getPrompt({ name: 'endless' }));
    expect(failed.data).toMatchObject({ code: 'ERR_TOOL_TIMEOUT' });
    expect(failed.code).toBe(-32603);
  }, 60_000);
});

describe('resources', () => {
  it('lists static resources with their size, and templates apart', async () => {
    const { client } = await connect('entries');
    const listed = await client.listResources();
    expect(listed.nextCursor).toBeUndefined();
    expect(listed.resources).toEqual([
      {
        uri: 'docs://handbook',
        name: 'handbook',
        title: 'Handbook',
        description: 'The handbook',
        mimeType: 'text/markdown',
        annotations: { audience: ['user'], priority: 0.5 },
        size: Buffer.byteLength('# Handbook – été', 'utf8'),
      },
      {
        uri: 'images://logo',
        name: 'logo',
        mimeType: 'image/png',
        size: Buffer.from(PNG_BASE64, 'base64').length,
      },
    ]);
    const templates = await client.listResourceTemplates();
    expect(templates.nextCursor).toBeUndefined();
    expect(templates.resourceTemplates.map((t) => [t.name, t.uriTemplate])).toEqual([
      ['files', 'files://{dir}/{file}'],
      ['inline', 'inline://{name}'],
      ['report', 'report://{name}'],
      ['stats', 'stats://{kind}{?window}'],
      ['weather', 'weather://{city}/today'],
    ]);
    expect(templates.resourceTemplates.find((t) => t.name === 'weather')).toEqual({
      uriTemplate: 'weather://{city}/today',
      name: 'weather',
      description: 'Today’s weather of a city',
    });
  });

  it('reads static text and blob resources from memory', async () => {
    const { client } = await connect('entries');
    expect(await client.readResource({ uri: 'docs://handbook' })).toEqual({
      contents: [{ uri: 'docs://handbook', mimeType: 'text/markdown', text: '# Handbook – été' }],
    });
    expect(await client.readResource({ uri: 'images://logo' })).toEqual({
      contents: [{ uri: 'images://logo', mimeType: 'image/png', blob: PNG_BASE64 }],
    });
  });

  it('reads a template with its variables percent-decoded', async () => {
    const { client } = await connect('entries');
    const uri = 'weather://S%C3%A3o%20Paulo/today';
    expect(await client.readResource({ uri })).toEqual({
      contents: [{ uri, mimeType: 'text/plain', text: 'sunny in São Paulo' }],
    });
    expect(await client.readResource({ uri: 'files://docs/a%2Fb.txt' })).toEqual({
      contents: [{ uri: 'files://docs/a%2Fb.txt', mimeType: 'text/plain', text: 'docs/a/b.txt' }],
    });
  }, 60_000);

  it('reads a template whose code returns an embedded resource or a JSON object', async () => {
    const { client } = await connect('entries');
    expect(await client.readResource({ uri: 'report://sales' })).toEqual({
      contents: [{ uri: 'report://sales/data.csv', mimeType: 'text/csv', text: 'a,b\n1,2' }],
    });
    expect(await client.readResource({ uri: 'stats://visits?window=7d' })).toEqual({
      contents: [
        {
          uri: 'stats://visits?window=7d',
          mimeType: 'application/json',
          text: '{"kind":"visits","window":"7d","count":3}',
        },
      ],
    });
  }, 60_000);

  it('answers an embedded resource block as the code built it', async () => {
    const { client } = await connect('entries');
    expect(await client.readResource({ uri: 'inline://sheet' })).toEqual({
      contents: [{ uri: 'inline://sheet.csv', mimeType: 'text/csv', text: 'x,y' }],
    });
  }, 60_000);

  it('answers a URI nothing matches with -32602 and the URI in data (SEP-2164, as SDK v2 sends in both eras)', async () => {
    const { client } = await connect('entries');
    for (const uri of ['docs://nothing', 'weather://Paris/tomorrow', 'weather:///today']) {
      const refused = await rpcError(client.readResource({ uri }));
      expect(refused.code, uri).toBe(-32602);
      expect(refused.data, uri).toEqual({ uri });
    }
  });
});

describe('completion/complete', () => {
  const prompt = { type: 'ref/prompt' as const, name: 'ranked' };

  it('ranks a value list: same-case prefix, then prefix ignoring case, then substring', async () => {
    const { client } = await connect('entries');
    const { completion } = await client.complete({
      ref: prompt,
      argument: { name: 'city', value: 'Par' },
    });
    expect(completion).toEqual({
      values: ['Parma', 'Paris', 'paris', 'PARIS-NORD', 'Comparison'],
      total: 5,
      hasMore: false,
    });
  });

  it('answers at most 100 values, with total and hasMore', async () => {
    const { client } = await connect('entries');
    const { completion } = await client.complete({
      ref: prompt,
      argument: { name: 'many', value: 'item' },
    });
    expect(completion.values).toHaveLength(100);
    expect(completion.values[0]).toBe('item-000');
    expect(completion).toMatchObject({ total: 150, hasMore: true });
  });

  it('runs completion code with the other arguments the client resolved', async () => {
    const { client } = await connect('entries');
    const { completion } = await client.complete({
      ref: prompt,
      argument: { name: 'coded', value: 'x' },
      context: { arguments: { city: 'Paris' } },
    });
    expect(completion.values).toEqual(['coded|x|{"city":"Paris"}']);
    const noContext = await client.complete({
      ref: prompt,
      argument: { name: 'coded', value: '' },
    });
    expect(noContext.completion.values).toEqual(['coded||{}']);
    const summary = await client.complete({
      ref: { type: 'ref/prompt', name: 'summary' },
      argument: { name: 'style', value: 'sh' },
    });
    expect(summary.completion.values).toEqual(['short']);
  }, 60_000);

  it('completes a template variable by ref/resource, from a list or from code', async () => {
    const { client } = await connect('entries');
    const listed = await client.complete({
      ref: { type: 'ref/resource', uri: 'weather://{city}/today' },
      argument: { name: 'city', value: 'L' },
    });
    expect(listed.completion.values).toEqual(['Lisbon', 'London']);
    const coded = await client.complete({
      ref: { type: 'ref/resource', uri: 'files://{dir}/{file}' },
      argument: { name: 'file', value: 'notes' },
      context: { arguments: { dir: 'home' } },
    });
    expect(coded.completion).toEqual({ values: ['home/notes.txt'], total: 7, hasMore: true });
  }, 60_000);

  it('answers no values for an argument without a source', async () => {
    const { client } = await connect('entries');
    for (const argument of [
      { name: 'free', value: 'a' },
      { name: 'undeclared', value: 'a' },
    ]) {
      const { completion } = await client.complete({ ref: prompt, argument });
      expect(completion.values, argument.name).toEqual([]);
    }
    const variable = await client.complete({
      ref: { type: 'ref/resource', uri: 'files://{dir}/{file}' },
      argument: { name: 'dir', value: 'a' },
    });
    expect(variable.completion.values).toEqual([]);
  });

  it('refuses an unknown prompt or template with -32602', async () => {
    const { client } = await connect('entries');
    for (const ref of [
      { type: 'ref/prompt' as const, name: 'nothing' },
      { type: 'ref/resource' as const, uri: 'nothing://{x}' },
    ]) {
      const refused = await rpcError(client.complete({ ref, argument: { name: 'x', value: '' } }));
      expect(refused.code, JSON.stringify(ref)).toBe(-32602);
    }
  });
});

describe('the invocation log and metrics', () => {
  it('record prompt, resource and completion code runs with their kind', async () => {
    const { client } = await connect('entries');
    await client.getPrompt({ name: 'greeting', arguments: { who: 'Log' } });
    await client.readResource({ uri: 'weather://Oslo/today' });
    await client.complete({
      ref: { type: 'ref/prompt', name: 'ranked' },
      argument: { name: 'coded', value: 'z' },
    });
    // A static read and a value list run no code.
    await client.readResource({ uri: 'docs://handbook' });

    const byKind = async (kind: string) => {
      const log = await plane.admin('GET', `/api/invocations?server=entries&kind=${kind}`);
      expect(log.status).toBe(200);
      return log.body.invocations as { kind: string; tool: string; ok: boolean }[];
    };
    const prompts = await byKind('prompt');
    expect(prompts.every((i) => i.kind === 'prompt')).toBe(true);
    expect(prompts).toContainEqual(expect.objectContaining({ tool: 'greeting', ok: true }));
    expect(prompts).toContainEqual(expect.objectContaining({ tool: 'grumpy', ok: false }));
    const resources = await byKind('resource');
    expect(resources.every((i) => i.kind === 'resource')).toBe(true);
    expect(resources.map((i) => i.tool)).toContain('weather');
    expect(resources.map((i) => i.tool)).not.toContain('handbook');
    const completions = await byKind('completion');
    expect(completions.every((i) => i.kind === 'completion')).toBe(true);
    expect(completions.map((i) => i.tool)).toContain('ranked');
    expect(await byKind('tool')).toEqual([]);

    const metrics = await loopbackFetch(`${plane.adminUrl}/metrics`, {
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    });
    const text = await metrics.text();
    const counted = (kind: string, tool: string, outcome: string) =>
      text
        .split('\n')
        .some(
          (line) =>
            line.startsWith('mcphost_invocations_total{') &&
            line.includes('server="entries"') &&
            line.includes(`tool="${tool}"`) &&
            line.includes(`outcome="${outcome}"`) &&
            line.includes(`kind="${kind}"`) &&
            /\} [1-9]\d*$/.test(line),
        );
    expect(counted('prompt', 'greeting', 'ok')).toBe(true);
    expect(counted('prompt', 'grumpy', 'ERR_TOOL_ERROR')).toBe(true);
    expect(counted('resource', 'weather', 'ok')).toBe(true);
    expect(counted('completion', 'ranked', 'ok')).toBe(true);
  }, 60_000);
});

describe('subscriptions and list changes', () => {
  const LIVE = '/api/servers/live';
  let edition = 0;
  /** Saves a new edition of the static resource notes://today. */
  const editNotes = () =>
    put(`${LIVE}/resources/notes`, { uri: 'notes://today', text: `edition ${++edition}` }, 200);

  /** Collects the URIs of notifications/resources/updated a client receives. */
  function updatesOf(client: Client): string[] {
    const uris: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      uris.push(notification.params.uri);
    });
    return uris;
  }

  beforeAll(async () => {
    await createServer('live');
    await put(`${LIVE}/prompts/seed`, { description: 'd', code: 'return "x";' }, 201);
    await put(`${LIVE}/resources/notes`, { uri: 'notes://today', text: 'edition 0' }, 201);
    await put(
      `${LIVE}/resources/daily`,
      { uriTemplate: 'daily://{day}', code: 'return params.day;' },
      201,
    );
  });

  it('tells a subscriber its resource was updated, and stops after unsubscribe', async () => {
    const watcher = await connect('live');
    const witness = await connect('live');
    const watched = updatesOf(watcher.client);
    const witnessed = updatesOf(witness.client);
    await watcher.client.subscribeResource({ uri: 'notes://today' });
    await witness.client.subscribeResource({ uri: 'notes://today' });
    await Promise.all([watcher.streamOpen, witness.streamOpen]);

    await editNotes();
    await expect.poll(() => watched, { timeout: 5000 }).toEqual(['notes://today']);
    await expect.poll(() => witnessed, { timeout: 5000 }).toEqual(['notes://today']);

    await watcher.client.unsubscribeResource({ uri: 'notes://today' });
    await editNotes();
    // The witness, still subscribed, hears of the second edit: the watcher would have by now.
    await expect.poll(() => witnessed, { timeout: 5000 }).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(watched).toEqual(['notes://today']);
  });

  it('tells a subscriber of a templated URI when the template changes, and of a deletion', async () => {
    const { client, streamOpen } = await connect('live');
    const updates = updatesOf(client);
    await client.subscribeResource({ uri: 'daily://monday' });
    await client.subscribeResource({ uri: 'notes://today' });
    await streamOpen;
    await put(`${LIVE}/resources/daily`, { uriTemplate: 'daily://{day}', code: 'return 2;' }, 200);
    await expect.poll(() => updates, { timeout: 5000 }).toEqual(['daily://monday']);
    const rolledBack = await plane.admin('POST', `${LIVE}/resources/daily/rollback`, {
      version: 1,
    });
    expect(rolledBack.status, JSON.stringify(rolledBack.body)).toBe(200);
    await expect
      .poll(() => updates, { timeout: 5000 })
      .toEqual(['daily://monday', 'daily://monday']);
    expect((await plane.admin('DELETE', `${LIVE}/resources/notes`)).status).toBe(204);
    await expect
      .poll(() => updates, { timeout: 5000 })
      .toEqual(['daily://monday', 'daily://monday', 'notes://today']);
    await put(`${LIVE}/resources/notes`, { uri: 'notes://today', text: 'back' }, 201);
  });

  it('announces a new prompt and a new resource as list changes', async () => {
    const { client, streamOpen } = await connect('live');
    let promptChanges = 0;
    let resourceChanges = 0;
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => void promptChanges++);
    client.setNotificationHandler(
      ResourceListChangedNotificationSchema,
      () => void resourceChanges++,
    );
    await streamOpen;
    await put(`${LIVE}/prompts/sprout`, { description: 'new', code: 'return "y";' }, 201);
    await expect.poll(() => promptChanges, { timeout: 5000 }).toBe(1);
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['seed', 'sprout']);
    await put(`${LIVE}/resources/extra`, { uri: 'notes://extra', text: 'more' }, 201);
    await expect.poll(() => resourceChanges, { timeout: 5000 }).toBe(1);
    expect((await client.listResources()).resources.map((r) => r.uri)).toContain('notes://extra');
    expect(promptChanges).toBe(1);
  });

  it('holds at most 100 subscriptions, and 64 KiB of URIs, per session', async () => {
    const { client } = await connect('live');
    for (let day = 0; day < 100; day++) {
      await client.subscribeResource({ uri: `daily://d${day}` });
    }
    const refused = await rpcError(client.subscribeResource({ uri: 'daily://d100' }));
    expect(refused.code).toBe(-32602);
    expect(refused.data).toMatchObject({ code: 'ERR_VALIDATION' });
    // One it holds already is no new subscription; one given back makes room.
    await client.subscribeResource({ uri: 'daily://d99' });
    await client.unsubscribeResource({ uri: 'daily://d0' });
    await client.subscribeResource({ uri: 'daily://d100' });
    // Long URIs run out of characters first: 40 of 2 KiB pass 64 KiB.
    const { client: long } = await connect('live');
    const longUri = (i: number) => `daily://${String(i).padStart(2000, '0')}`;
    let held = 0;
    let refusal: McpError | undefined;
    for (; held < 40 && refusal === undefined; held++) {
      await long.subscribeResource({ uri: longUri(held) }).catch((error: McpError) => {
        refusal = error;
      });
    }
    expect(refusal?.data).toMatchObject({ code: 'ERR_VALIDATION' });
    expect(held).toBeGreaterThan(30);
    expect(held).toBeLessThan(40);
  }, 60_000);

  it('refuses a subscription to a URI that names no resource with -32602 and the URI in data', async () => {
    const { client } = await connect('live');
    const refused = await rpcError(client.subscribeResource({ uri: 'notes://nothing' }));
    expect(refused.code).toBe(-32602);
    expect(refused.data).toMatchObject({ uri: expect.any(String) });
  });
});
