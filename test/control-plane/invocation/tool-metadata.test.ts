/**
 * Tool metadata end to end: tools saved through the admin API with a title,
 * annotations, an outputSchema and a JSON Schema 2020-12 inputSchema; the
 * official SDK client lists them as written, is refused bad arguments before
 * any container runs (a loopback server counts what the tool's code reaches),
 * and gets structuredContent — or ERR_OUTPUT_INVALID naming the path — back.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolSchemaCache } from '../../../control-plane/invocation/tool-schemas.js';
import { createToolSchemaCompiler } from '../../../control-plane/store/index.js';
import { loopbackFetch } from '../../support/loopback-fetch.js';
import { INITIALIZE_BODY } from '../../support/mcp-requests.js';
import { startLoopbackServer, type LoopbackServer } from '../../support/loopback-server.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';

const SUB = 'meta';
const DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/** The tool the conformance scenario `json-schema-2020-12` looks for, exactly as it describes it. */
const CONFORMANCE_TOOL = {
  description: 'Tool with JSON Schema 2020-12 features',
  inputSchema: {
    $schema: DIALECT,
    type: 'object',
    $defs: {
      address: {
        type: 'object',
        properties: { street: { type: 'string' }, city: { type: 'string' } },
      },
    },
    properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
    additionalProperties: false,
  },
  code: 'return { received: params };',
};

const ORDER_INPUT = {
  $schema: DIALECT,
  type: 'object',
  $defs: {
    line: {
      type: 'object',
      properties: {
        sku: { type: 'string', pattern: '^[A-Z]{3}-[0-9]+$' },
        quantity: { type: 'integer', minimum: 1 },
      },
      required: ['sku', 'quantity'],
      additionalProperties: false,
    },
  },
  properties: {
    region: { enum: ['eu', 'us'], description: 'where the order ships' },
    lines: { type: 'array', items: { $ref: '#/$defs/line' }, minItems: 1 },
  },
  required: ['region', 'lines'],
  additionalProperties: false,
};
const ORDER_OUTPUT = {
  type: 'object',
  properties: {
    region: { type: 'string' },
    items: {
      type: 'array',
      items: {
        type: 'object',
        properties: { id: { type: 'integer' }, sku: { type: 'string' } },
        required: ['id', 'sku'],
      },
    },
  },
  required: ['region', 'items'],
};
const ORDER_ANNOTATIONS = { readOnlyHint: true, idempotentHint: true, openWorldHint: false };

let plane: TestControlPlane;
let counter: LoopbackServer;
const clients: Client[] = [];

async function connect(): Promise<Client> {
  const client = new Client({ name: 'tool-metadata-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(plane.mcpUrl(SUB), { fetch: loopbackFetch }),
  );
  clients.push(client);
  return client;
}

function textOf(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : '';
}

/** The raw JSON-RPC `tools/list` answer, as bytes on the wire (the SDK client re-parses). */
async function rawToolsList(): Promise<string> {
  const url = plane.mcpUrl(SUB);
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  const opened = await loopbackFetch(url, { method: 'POST', headers, body: INITIALIZE_BODY });
  expect(opened.status).toBe(200);
  const session = {
    ...headers,
    'mcp-session-id': opened.headers.get('mcp-session-id')!,
    'mcp-protocol-version': '2025-06-18',
  };
  await opened.text();
  const initialized = await loopbackFetch(url, {
    method: 'POST',
    headers: session,
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  expect(initialized.status).toBe(202);
  const listed = await loopbackFetch(url, {
    method: 'POST',
    headers: session,
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
  });
  expect(listed.status).toBe(200);
  // Plain JSON: nothing is streamed before a tools/list answer.
  expect(listed.headers.get('content-type')).toMatch(/^application\/json/);
  return listed.text();
}

beforeAll(async () => {
  counter = await startLoopbackServer((_request, response) => response.end('counted'));
  plane = await startTestControlPlane();
  expect((await plane.admin('POST', '/api/servers', { subdomain: SUB })).status).toBe(201);
  const save = async (name: string, body: object) => {
    const response = await plane.admin('PUT', `/api/servers/${SUB}/tools/${name}`, body);
    expect(response.status, JSON.stringify(response.body)).toBe(201);
  };
  await save('json_schema_2020_12_tool', CONFORMANCE_TOOL);
  await save('order_lookup', {
    title: 'Look up an order',
    description: 'Prices order lines.',
    annotations: ORDER_ANNOTATIONS,
    inputSchema: ORDER_INPUT,
    outputSchema: ORDER_OUTPUT,
    // The loopback request proves the code ran; the "us" region returns string ids on purpose.
    code: [
      `await sdk.http({ method: 'GET', url: '${counter.url}/ran' });`,
      'return {',
      '  region: params.region,',
      "  items: params.lines.map((line, i) => ({ id: params.region === 'eu' ? i + 1 : String(i + 1), sku: line.sku })),",
      '};',
    ].join('\n'),
  });
  await save('text_despite_schema', {
    description: 'Declares an outputSchema, returns text.',
    outputSchema: { type: 'object' },
    code: "return 'just text';",
  });
  await save('blocks_despite_schema', {
    description: 'Declares an outputSchema, returns content blocks.',
    outputSchema: { type: 'object' },
    code: "return sdk.content.text('a block');",
  });
}, 180_000);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  await plane?.close();
  await counter?.close();
});

describe('tools/list', () => {
  it('publishes title, annotations, outputSchema and the 2020-12 inputSchema as written', async () => {
    const { tools } = await (await connect()).listTools();
    expect(tools.find((tool) => tool.name === 'order_lookup')).toEqual({
      name: 'order_lookup',
      title: 'Look up an order',
      description: 'Prices order lines.',
      inputSchema: ORDER_INPUT,
      outputSchema: ORDER_OUTPUT,
      annotations: ORDER_ANNOTATIONS,
    });
    const conformance = tools.find((tool) => tool.name === 'json_schema_2020_12_tool');
    expect(conformance?.inputSchema).toEqual(CONFORMANCE_TOOL.inputSchema);
    expect(conformance).not.toHaveProperty('outputSchema');
    expect(conformance).not.toHaveProperty('annotations');
  });

  it('sends the schemas byte for byte as they were saved, key order included', async () => {
    const answer = JSON.parse(await rawToolsList());
    const listed = (name: string) =>
      answer.result.tools.find((tool: { name: string }) => tool.name === name);
    expect(JSON.stringify(listed('order_lookup').inputSchema)).toBe(JSON.stringify(ORDER_INPUT));
    expect(JSON.stringify(listed('order_lookup').outputSchema)).toBe(JSON.stringify(ORDER_OUTPUT));
    expect(JSON.stringify(listed('json_schema_2020_12_tool').inputSchema)).toBe(
      JSON.stringify(CONFORMANCE_TOOL.inputSchema),
    );
  });
});

describe('tools/call with an inputSchema', () => {
  it('refuses arguments that break the schema, naming the path, before any container runs', async () => {
    const client = await connect();
    const refusals: [Record<string, unknown>, string][] = [
      [
        { region: 'asia', lines: [{ sku: 'ABC-1', quantity: 1 }] },
        'arguments do not match inputSchema: /region must be one of "eu", "us"',
      ],
      [
        { region: 'eu', lines: [{ sku: 'ABC-1', quantity: 0 }] },
        'arguments do not match inputSchema: /lines/0/quantity must be >= 1',
      ],
      [
        { region: 'eu', lines: [{ sku: 'abc', quantity: 1 }] },
        'arguments do not match inputSchema: /lines/0/sku must match pattern "^[A-Z]{3}-[0-9]+$"',
      ],
      [{ region: 'eu' }, 'arguments do not match inputSchema: /lines is required'],
      [
        { region: 'eu', lines: [{ sku: 'ABC-1', quantity: 1 }], coupon: 'FREE' },
        'arguments do not match inputSchema: /coupon is not allowed (additionalProperties)',
      ],
    ];
    for (const [args, message] of refusals) {
      const result = (await client.callTool({
        name: 'order_lookup',
        arguments: args,
      })) as CallToolResult;
      expect(result.isError, message).toBe(true);
      expect(result._meta?.['mcphost/errorCode']).toBe('ERR_INVALID_ARGUMENT');
      expect(textOf(result)).toBe(message);
    }
    expect(counter.requests).toEqual([]);
    // Refused before any container: counted beside the invocation log, not a row each.
    const log = (await plane.admin('GET', `/api/invocations?server=${SUB}&tool=order_lookup`))
      .body as { invocations: unknown[]; refused: { code: string; count: number }[] };
    expect(log.invocations).toEqual([]);
    expect(log.refused).toContainEqual(
      expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT', count: refusals.length }),
    );
  });

  it('runs matching arguments and returns the object as structuredContent', async () => {
    const result = (await (
      await connect()
    ).callTool({
      name: 'order_lookup',
      arguments: { region: 'eu', lines: [{ sku: 'ABC-1', quantity: 2 }] },
    })) as CallToolResult;
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent).toEqual({ region: 'eu', items: [{ id: 1, sku: 'ABC-1' }] });
    expect(counter.requests).toEqual(['/ran']);
  });

  it('passes the conformance tool its arguments through $ref, and refuses extra ones', async () => {
    const client = await connect();
    const ok = (await client.callTool({
      name: 'json_schema_2020_12_tool',
      arguments: { name: 'Ada', address: { street: '1 Loop Rd', city: 'London' } },
    })) as CallToolResult;
    expect(ok.structuredContent).toEqual({
      received: { name: 'Ada', address: { street: '1 Loop Rd', city: 'London' } },
    });
    const wrong = (await client.callTool({
      name: 'json_schema_2020_12_tool',
      arguments: { address: { city: 7 } },
    })) as CallToolResult;
    expect(textOf(wrong)).toBe('arguments do not match inputSchema: /address/city must be string');
  });
});

describe('tools/call with an outputSchema', () => {
  it('fails a result that does not match with ERR_OUTPUT_INVALID naming the path', async () => {
    const before = counter.requests.length;
    const result = (await (
      await connect()
    ).callTool({
      name: 'order_lookup',
      arguments: { region: 'us', lines: [{ sku: 'XYZ-9', quantity: 1 }] },
    })) as CallToolResult;
    expect(counter.requests.length).toBe(before + 1);
    expect(result.isError).toBe(true);
    expect(result._meta?.['mcphost/errorCode']).toBe('ERR_OUTPUT_INVALID');
    expect(textOf(result)).toBe('result does not match outputSchema: /items/0/id must be integer');
    expect(result.structuredContent).toBeUndefined();
  });

  it('fails text and content blocks from a tool that promised an object', async () => {
    const client = await connect();
    const text = (await client.callTool({ name: 'text_despite_schema' })) as CallToolResult;
    expect(text._meta?.['mcphost/errorCode']).toBe('ERR_OUTPUT_INVALID');
    expect(textOf(text)).toBe(
      'the tool has an outputSchema, so it must return an object matching it, not a string',
    );
    const blocks = (await client.callTool({ name: 'blocks_despite_schema' })) as CallToolResult;
    expect(blocks._meta?.['mcphost/errorCode']).toBe('ERR_OUTPUT_INVALID');
    expect(textOf(blocks)).toContain('not sdk.content blocks');
  });

  it('answers the admin test run the same way', async () => {
    const run = await plane.admin('POST', `/api/servers/${SUB}/tools/order_lookup/invoke`, {
      params: { region: 'us', lines: [{ sku: 'XYZ-9', quantity: 1 }] },
    });
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({
      ok: false,
      error: {
        code: 'ERR_OUTPUT_INVALID',
        message: 'result does not match outputSchema: /items/0/id must be integer',
      },
    });
    const refused = await plane.admin('POST', `/api/servers/${SUB}/tools/order_lookup/invoke`, {
      params: { region: 'eu', lines: [] },
    });
    expect(refused.body.error).toEqual({
      code: 'ERR_INVALID_ARGUMENT',
      message: 'arguments do not match inputSchema: /lines must NOT have fewer than 1 items',
    });
  });
});

describe('saving', () => {
  it('refuses a bad schema with the path of the problem, and both input forms at once', async () => {
    const put = (body: object) => plane.admin('PUT', `/api/servers/${SUB}/tools/bad`, body);
    const base = { description: 'x', code: 'return {};' };
    const refusals: [object, string, RegExp][] = [
      [
        { inputSchema: { type: 'object', properties: { a: { type: 'strin' } } } },
        'inputSchema.properties.a.type',
        /must be one of/,
      ],
      [
        { inputSchema: { type: 'object', requierd: ['a'] } },
        'inputSchema.requierd',
        /unknown keyword "requierd"/,
      ],
      [
        { inputSchema: { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } } },
        'inputSchema.properties.a.$ref',
        /does not resolve/,
      ],
      [{ outputSchema: { type: 'array', items: {} } }, 'outputSchema.type', /must be "object"/],
      [
        { inputSchema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' } },
        'inputSchema.$schema',
        /2020-12/,
      ],
      [
        {
          inputSchema: { type: 'object' },
          parameters: [{ name: 'a', type: 'string', required: true }],
        },
        'inputSchema',
        /either as parameters or as an inputSchema/,
      ],
      [{ annotations: { readOnlyHint: 'yes' } }, 'annotations.readOnlyHint', /boolean/],
      [
        { inputSchema: { type: 'object', properties: { a: { pattern: '(a)\\1' } } } },
        'inputSchema.properties.a.pattern',
        /invalid escape sequence/,
      ],
      // RE2 reads these; JavaScript, which clients check with, does not.
      [
        { inputSchema: { type: 'object', properties: { a: { pattern: '(?i)^abc$' } } } },
        'inputSchema.properties.a.pattern',
        /not a JavaScript regular expression.*Invalid group/,
      ],
      [
        { outputSchema: { type: 'object', properties: { a: { pattern: '^abc\\z' } } } },
        'outputSchema.properties.a.pattern',
        /not a JavaScript regular expression.*Invalid escape/,
      ],
      [
        { inputSchema: { type: 'object', patternProperties: { '^[[:alpha:]]+$': {} } } },
        'inputSchema.patternProperties.^[[:alpha:]]+$',
        /not a JavaScript regular expression/,
      ],
      [
        {
          inputSchema: {
            type: 'object',
            properties: { tags: { type: 'array', items: { type: 'object' }, uniqueItems: true } },
          },
        },
        'inputSchema.properties.tags.uniqueItems',
        /scalar types .* or "maxItems" of at most 1000/,
      ],
      [
        {
          outputSchema: {
            type: 'object',
            $defs: { list: { type: 'array', uniqueItems: true, maxItems: 1001 } },
          },
        },
        'outputSchema.$defs.list.uniqueItems',
        /maxItems/,
      ],
    ];
    for (const [fields, path, message] of refusals) {
      const response = await put({ ...base, ...fields });
      expect(response.status, path).toBe(400);
      expect(response.body.error.code).toBe('ERR_VALIDATION');
      const problem = response.body.error.details.find(
        (issue: { path: string }) => issue.path === path,
      );
      expect(problem?.message, `${path}: ${JSON.stringify(response.body.error)}`).toMatch(message);
    }
    expect((await plane.admin('GET', `/api/servers/${SUB}/tools/bad`)).status).toBe(404);
  });

  it('keeps uniqueItems that is linear or short, and words that only look like keywords', async () => {
    const inputSchema = {
      type: 'object',
      properties: {
        tags: { type: 'array', items: { type: ['string', 'integer'] }, uniqueItems: true },
        pairs: { type: 'array', items: { type: 'array' }, uniqueItems: true, maxItems: 1000 },
        // Data, not schemas: a property named "pattern", a const holding keyword-like keys.
        pattern: { type: 'string' },
        fixed: { const: { uniqueItems: true, pattern: '(?i)x' } },
      },
    };
    const saved = await plane.admin('PUT', `/api/servers/${SUB}/tools/linear`, {
      description: 'x',
      code: 'return {};',
      inputSchema,
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    expect((await plane.admin('DELETE', `/api/servers/${SUB}/tools/linear`)).status).toBe(204);
  });

  it('refuses a number JSON cannot hold (it would be stored back as null)', async () => {
    const response = await plane.admin(
      'PUT',
      `/api/servers/${SUB}/tools/bad`,
      '{"description":"x","code":"return {};",' +
        '"inputSchema":{"type":"object","properties":{"a":{"const":1e400}}}}',
    );
    expect(response.status).toBe(400);
    expect(response.body.error.details).toContainEqual({
      path: 'inputSchema.properties.a.const',
      message: expect.stringMatching(/must be a finite number/),
    });
  });

  it('refuses a schema whose validator would be too much code, before the 61 s it once took', async () => {
    // One definition of 300 constrained properties, used 300 times: inlined, this took a minute and 1.8 GB.
    const fields: Record<string, unknown> = {};
    for (let i = 0; i < 300; i++) fields[`p${i}`] = { type: 'integer', minimum: i };
    const uses: Record<string, unknown> = {};
    for (let i = 0; i < 300; i++) uses[`r${i}`] = { $ref: '#/$defs/a' };
    const started = performance.now();
    const response = await plane.admin('PUT', `/api/servers/${SUB}/tools/bad`, {
      description: 'x',
      code: 'return {};',
      inputSchema: {
        type: 'object',
        $defs: { a: { type: 'object', properties: fields } },
        properties: uses,
      },
    });
    expect(response.status).toBe(400);
    expect(response.body.error.details).toContainEqual({
      path: 'inputSchema',
      message: expect.stringMatching(/needs too much validation code \(over 131072 characters\)/),
    });
    // Measured 80–200 ms; the bound only tells a compile of 61 s from one that is not.
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('bounds a schema’s size and depth', async () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 40; i++) deep = { type: 'object', properties: { a: deep } };
    const tooDeep = await plane.admin('PUT', `/api/servers/${SUB}/tools/bad`, {
      description: 'x',
      code: 'return {};',
      inputSchema: deep,
    });
    expect(tooDeep.status).toBe(400);
    expect(tooDeep.body.error.message).toMatch(/nested deeper than 64 levels/);
    const huge = await plane.admin('PUT', `/api/servers/${SUB}/tools/bad`, {
      description: 'x',
      code: 'return {};',
      inputSchema: { type: 'object', description: 'x'.repeat(70_000) },
    });
    expect(huge.status).toBe(400);
    expect(huge.body.error.message).toMatch(/at most 65536/);
  });
});

describe('the compiled-schema cache', () => {
  const subject = (version: number, schema: Record<string, unknown>) => ({
    server: 's',
    tool: 't',
    version,
    role: 'inputSchema' as const,
    schemaText: JSON.stringify(schema),
  });
  const cacheOf = (entries: number, generatedCharacters = 1 << 24) =>
    new ToolSchemaCache({ entries, generatedCharacters, createCompiler: createToolSchemaCompiler });
  const integers = { type: 'object', properties: { n: { type: 'integer' } } };
  const strings = { type: 'object', properties: { n: { type: 'string' } } };

  it('compiles once per version, and again when a recreated tool reuses a version with another schema', () => {
    const cache = cacheOf(4);
    expect(cache.check(subject(1, integers), { n: 1 })).toEqual({ ok: true });
    expect(cache.check(subject(1, integers), { n: 'x' })).toEqual({
      ok: false,
      reason: 'mismatch',
      problem: '/n must be integer',
    });
    expect(cache.size).toBe(1);
    // Deleted and saved again: version 1 once more, with another schema.
    expect(cache.check(subject(1, strings), { n: 'x' })).toEqual({ ok: true });
    expect(cache.size).toBe(1);
  });

  it('keeps at most its capacity and its generated code, dropping the least recently used', () => {
    const cache = cacheOf(2);
    for (const version of [1, 2, 3]) cache.check(subject(version, integers), {});
    expect(cache.size).toBe(2);
    const one = cache.generatedCharacters / 2;
    // Room for one and a half: the second pushes the first out; the newest always stays.
    const tight = cacheOf(8, Math.floor(one * 1.5));
    for (const version of [1, 2, 3]) tight.check(subject(version, integers), {});
    expect(tight.size).toBe(1);
    expect(tight.generatedCharacters).toBe(one);
    expect(() => cacheOf(0)).toThrow(TypeError);
  });

  it('answers a schema that does not compile, or a value too deep for the stack, as unchecked', () => {
    const cache = cacheOf(4);
    expect(cache.check(subject(1, { type: 'object', requierd: ['a'] }), {})).toMatchObject({
      ok: false,
      reason: 'unchecked',
      problem: expect.stringMatching(/^it does not compile: strict mode: unknown keyword/),
    });
    const recursive = {
      type: 'object',
      $defs: { n: { properties: { a: { $ref: '#/$defs/n' } } } },
      properties: { a: { $ref: '#/$defs/n' } },
    };
    const deep = JSON.parse('{"a":'.repeat(20_000) + '{}' + '}'.repeat(20_000));
    expect(cache.check(subject(2, recursive), deep)).toMatchObject({
      ok: false,
      reason: 'unchecked',
      problem: expect.stringMatching(/call stack/),
    });
  });

  it('matches patterns in linear time, so a nested quantifier cannot take a check deadline', () => {
    const cache = cacheOf(4);
    const nested = { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } };
    // JavaScript's backtracking engine takes seconds on this; RE2 answers in a few ms.
    const hostile = 'a'.repeat(28) + '!';
    const started = performance.now();
    expect(cache.check(subject(1, nested), { s: hostile })).toMatchObject({ ok: false });
    expect(cache.check(subject(1, nested), { s: 'aaaa' })).toEqual({ ok: true });
    // Each pattern keeps its own compiled expression (ajv keys them by their text).
    const two = {
      type: 'object',
      properties: { a: { pattern: '^a+$' }, b: { pattern: '^b+$' } },
    };
    expect(cache.check(subject(2, two), { a: 'aa', b: 'bb' })).toEqual({ ok: true });
    expect(cache.check(subject(2, two), { a: 'aa', b: 'aa' })).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/^\/b must match pattern/),
    });
    // Not a timing assertion on the happy path: 28 characters backtrack 2^28 times in JavaScript.
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('keeps each schema’s $id to itself', () => {
    const cache = cacheOf(4);
    const withId = (type: string) => ({
      $id: 'https://example.com/shared',
      type: 'object',
      properties: { n: { type } },
    });
    expect(cache.check(subject(1, withId('integer')), { n: 1 }).ok).toBe(true);
    expect(cache.check(subject(2, withId('string')), { n: 'x' }).ok).toBe(true);
  });
});
