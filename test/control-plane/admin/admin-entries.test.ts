/**
 * The admin API of prompts and resources against a real control plane:
 * saves, versions, rollback and deletion of both kinds; definitions refused
 * whole (400 with each problem, 422 naming the code field that does not
 * compile, 409 for a URI another resource has, the server's byte budget),
 * leaving the saved version as it was; previews — a prompt rendered and a
 * resource read through the path MCP clients take, code run in a container —
 * and the invocation log filtered by kind; every route in the OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loopbackFetch } from '../../support/loopback-fetch.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';

const SUB = 'entries';
const PROMPTS = `/api/servers/${SUB}/prompts`;
const RESOURCES = `/api/servers/${SUB}/resources`;

const SUMMARY_PROMPT = {
  title: 'Summarise a city',
  description: 'Asks for a summary of a city',
  arguments: [
    {
      name: 'city',
      description: 'Which city',
      required: true,
      complete: { values: ['Paris', 'Parma', 'Lisbon'] },
    },
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
  ],
};

const HANDBOOK = {
  uri: 'docs://handbook',
  title: 'Handbook',
  mimeType: 'text/markdown',
  text: '# Handbook',
};

const WEATHER = {
  uriTemplate: 'weather://{city}/today',
  description: 'Today’s weather of a city',
  code: 'console.log(`reading ${params.city}`); return `sunny in ${params.city}`;',
  complete: { city: { values: ['Paris', 'Lisbon'] } },
};

let plane: TestControlPlane;

beforeAll(async () => {
  plane = await startTestControlPlane();
  expect((await plane.admin('POST', '/api/servers', { subdomain: SUB })).status).toBe(201);
}, 180_000);

afterAll(async () => {
  await plane?.close();
});

/** Saves and expects the status, with the answer in the failure message. */
async function put(path: string, body: unknown, status: number): Promise<any> {
  const saved = await plane.admin('PUT', path, body);
  expect(saved.status, JSON.stringify(saved.body)).toBe(status);
  return saved.body;
}

describe('prompts', () => {
  it('creates, replaces, lists, versions, rolls back and deletes a prompt', async () => {
    const created = await put(`${PROMPTS}/summary`, SUMMARY_PROMPT, 201);
    expect(created).toMatchObject({
      subdomain: SUB,
      name: 'summary',
      version: 1,
      title: 'Summarise a city',
      arguments: [
        { name: 'city', required: true },
        { name: 'style', required: false },
      ],
    });

    const replaced = await put(
      `${PROMPTS}/summary`,
      { ...SUMMARY_PROMPT, description: 'The second wording' },
      200,
    );
    expect(replaced).toMatchObject({ version: 2, description: 'The second wording' });

    const listed = await plane.admin('GET', PROMPTS);
    expect(listed.status).toBe(200);
    expect(listed.body.prompts.map((p: any) => [p.name, p.version])).toEqual([['summary', 2]]);
    expect((await plane.admin('GET', `${PROMPTS}/summary`)).body).toMatchObject({
      version: 2,
      description: 'The second wording',
    });

    const rolledBack = await plane.admin('POST', `${PROMPTS}/summary/rollback`, { version: 1 });
    expect(rolledBack.status).toBe(200);
    expect(rolledBack.body).toMatchObject({
      version: 3,
      description: 'Asks for a summary of a city',
    });
    const versions = await plane.admin('GET', `${PROMPTS}/summary/versions`);
    expect(versions.body.versions.map((v: any) => [v.version, v.description])).toEqual([
      [3, 'Asks for a summary of a city'],
      [2, 'The second wording'],
      [1, 'Asks for a summary of a city'],
    ]);
    expect(
      (await plane.admin('POST', `${PROMPTS}/summary/rollback`, { version: 9 })).body.error.code,
    ).toBe('ERR_NOT_FOUND');

    await put(`${PROMPTS}/doomed`, { description: 'd', code: 'return "x";' }, 201);
    expect((await plane.admin('DELETE', `${PROMPTS}/doomed`)).status).toBe(204);
    expect((await plane.admin('GET', `${PROMPTS}/doomed`)).status).toBe(404);
    const again = await plane.admin('DELETE', `${PROMPTS}/doomed`);
    expect(again.status).toBe(404);
    expect(again.body.error.message).toBe('prompt "doomed" does not exist on server "entries"');
    expect((await plane.admin('GET', '/api/servers/nowhere/prompts')).status).toBe(404);
  });

  it('refuses invalid definitions whole, each problem with its path', async () => {
    const before = (await plane.admin('GET', `${PROMPTS}/summary`)).body.version;
    const refusals: [string, unknown, string, string][] = [
      [
        'both messages and code',
        { ...SUMMARY_PROMPT, code: 'return "x";' },
        'messages',
        'exactly one of them',
      ],
      ['neither messages nor code', { description: 'empty' }, 'messages', 'exactly one of them'],
      [
        'a placeholder of an undeclared argument',
        {
          ...SUMMARY_PROMPT,
          messages: [{ role: 'user', content: { type: 'text', text: 'About {{town}}' } }],
        },
        'messages.0.content',
        '{{town}} is not a declared argument',
      ],
      [
        'an argument declared twice',
        { ...SUMMARY_PROMPT, arguments: [{ name: 'city' }, { name: 'style' }, { name: 'city' }] },
        'arguments.2.name',
        'argument "city" is declared twice',
      ],
      ['an unknown field', { ...SUMMARY_PROMPT, temperature: 1 }, '', 'temperature'],
    ];
    for (const [what, body, path, message] of refusals) {
      const refused = await plane.admin('PUT', `${PROMPTS}/summary`, body);
      expect(refused.status, what).toBe(400);
      expect(refused.body.error.code, what).toBe('ERR_VALIDATION');
      expect(refused.body.error.details, what).toContainEqual({
        path,
        message: expect.stringContaining(message),
      });
    }
    const badName = await plane.admin('PUT', `${PROMPTS}/bad%20name`, SUMMARY_PROMPT);
    expect(badName.status).toBe(400);
    expect(badName.body.error.message).toContain('prompt name');
    expect((await plane.admin('GET', `${PROMPTS}/bad%20name`)).status).toBe(404);
    expect((await plane.admin('GET', `${PROMPTS}/summary`)).body.version).toBe(before);
  });

  it('refuses code that does not compile, naming the field, line and column', async () => {
    const inCode = await plane.admin('PUT', `${PROMPTS}/broken`, {
      description: 'broken',
      code: 'const a = 1;\nreturn (;',
    });
    expect(inCode.status).toBe(422);
    expect(inCode.body.error).toMatchObject({
      code: 'ERR_TOOL_SYNTAX',
      message: expect.stringMatching(/^syntax error in code at line 2, column \d+: /),
      details: { field: 'code', line: 2, column: expect.any(Number), message: expect.any(String) },
    });

    const inCompletion = await plane.admin('PUT', `${PROMPTS}/summary`, {
      ...SUMMARY_PROMPT,
      arguments: [SUMMARY_PROMPT.arguments[0], { name: 'style', complete: { code: 'return [;' } }],
    });
    expect(inCompletion.status).toBe(422);
    expect(inCompletion.body.error.message).toMatch(
      /^syntax error in arguments\.1\.complete\.code at line 1, column \d+: /,
    );
    expect(inCompletion.body.error.details).toMatchObject({
      field: 'arguments.1.complete.code',
      line: 1,
    });
    expect((await plane.admin('GET', `${PROMPTS}/broken`)).status).toBe(404);
    expect(
      (await plane.admin('GET', `${PROMPTS}/summary`)).body.arguments[1].complete.code,
    ).toContain("['short', 'long']");
  });
});

describe('resources', () => {
  it('creates, replaces, lists, versions, rolls back and deletes static resources and templates', async () => {
    expect(await put(`${RESOURCES}/handbook`, HANDBOOK, 201)).toMatchObject({
      name: 'handbook',
      version: 1,
      uri: 'docs://handbook',
      text: '# Handbook',
    });
    expect(await put(`${RESOURCES}/weather`, WEATHER, 201)).toMatchObject({
      name: 'weather',
      version: 1,
      uriTemplate: 'weather://{city}/today',
      secrets: [],
    });
    expect(
      await put(`${RESOURCES}/handbook`, { ...HANDBOOK, text: '# Handbook, second edition' }, 200),
    ).toMatchObject({ version: 2, text: '# Handbook, second edition' });

    const listed = (await plane.admin('GET', RESOURCES)).body.resources;
    expect(listed.map((r: any) => [r.name, r.version])).toEqual([
      ['handbook', 2],
      ['weather', 1],
    ]);

    const rolledBack = await plane.admin('POST', `${RESOURCES}/handbook/rollback`, { version: 1 });
    expect(rolledBack.body).toMatchObject({ version: 3, text: '# Handbook' });
    expect(
      (await plane.admin('GET', `${RESOURCES}/handbook/versions`)).body.versions.map(
        (v: any) => v.version,
      ),
    ).toEqual([3, 2, 1]);
    expect((await plane.admin('GET', `${RESOURCES}/handbook`)).body.text).toBe('# Handbook');

    await put(`${RESOURCES}/doomed`, { uri: 'docs://doomed', blob: 'AAEC' }, 201);
    expect((await plane.admin('DELETE', `${RESOURCES}/doomed`)).status).toBe(204);
    expect((await plane.admin('GET', `${RESOURCES}/doomed`)).status).toBe(404);
    // Its URI is free again.
    await put(`${RESOURCES}/reborn`, { uri: 'docs://doomed', text: 'back' }, 201);
    expect((await plane.admin('DELETE', `${RESOURCES}/reborn`)).status).toBe(204);
  });

  it('refuses invalid definitions whole, each problem with its path', async () => {
    const refusals: [string, unknown, string, string][] = [
      [
        'both uri and uriTemplate',
        { ...HANDBOOK, uriTemplate: 'docs://{page}' },
        'uri',
        'either a uri (static) or a uriTemplate',
      ],
      ['neither uri nor uriTemplate', { text: 'orphan' }, 'uri', 'exactly one of them'],
      [
        'both text and blob',
        { ...HANDBOOK, blob: 'AAEC' },
        'text',
        'either text or blob, exactly one of them',
      ],
      [
        'neither text nor blob',
        { uri: 'docs://handbook' },
        'text',
        'either text or blob, exactly one of them',
      ],
      [
        'an exploded template variable',
        { ...WEATHER, uriTemplate: 'weather://{city*}/today' },
        'uriTemplate',
        'explode (*) and prefix (:n) modifiers are not supported',
      ],
      [
        'a completion of no template variable',
        { ...WEATHER, complete: { town: { values: ['Paris'] } } },
        'complete',
        '"town" is not a variable of weather://{city}/today',
      ],
      ['a template without code', { uriTemplate: 'weather://{city}/today' }, 'code', 'needs code'],
    ];
    for (const [what, body, path, message] of refusals) {
      for (const name of ['handbook', 'weather']) {
        const refused = await plane.admin('PUT', `${RESOURCES}/${name}`, body);
        expect(refused.status, what).toBe(400);
        expect(refused.body.error.code, what).toBe('ERR_VALIDATION');
        expect(refused.body.error.details, what).toContainEqual({
          path,
          message: expect.stringContaining(message),
        });
      }
    }
    expect((await plane.admin('GET', `${RESOURCES}/handbook`)).body).toMatchObject({
      version: 3,
      text: '# Handbook',
    });
    expect((await plane.admin('GET', `${RESOURCES}/weather`)).body.version).toBe(1);
  });

  it('refuses a completion code that does not compile, naming its variable', async () => {
    const refused = await plane.admin('PUT', `${RESOURCES}/weather`, {
      ...WEATHER,
      complete: { city: { code: 'return [' } },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({
      code: 'ERR_TOOL_SYNTAX',
      message: expect.stringMatching(/^syntax error in complete\.city\.code at line 1, column \d+/),
      details: { field: 'complete.city.code', line: 1 },
    });
    const inCode = await plane.admin('PUT', `${RESOURCES}/weather`, { ...WEATHER, code: '}' });
    expect(inCode.status).toBe(422);
    expect(inCode.body.error.details.field).toBe('code');
    expect((await plane.admin('GET', `${RESOURCES}/weather`)).body.version).toBe(1);
  });

  it('keeps a URI to one static resource of a server', async () => {
    const refused = await plane.admin('PUT', `${RESOURCES}/handbook-copy`, HANDBOOK);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({
      code: 'ERR_CONFLICT',
      message: 'resource "handbook" of this server already has the uri docs://handbook',
    });
    expect((await plane.admin('GET', `${RESOURCES}/handbook-copy`)).status).toBe(404);
    const template = await plane.admin('PUT', `${RESOURCES}/weather-copy`, WEATHER);
    expect(template.status).toBe(409);
  });
});

it('bounds what a server stores by SERVER_ENTRIES_MAX_BYTES, and one static resource by TOOL_MAX_RESULT_BYTES', async () => {
  const small = await startTestControlPlane({
    SERVER_ENTRIES_MAX_BYTES: '1500',
    TOOL_MAX_RESULT_BYTES: '900',
    GENERIC_POOL_SIZE: '0',
    POOL_MIN_WARM: '0',
  });
  try {
    expect((await small.admin('POST', '/api/servers', { subdomain: 'tight' })).status).toBe(201);
    const path = '/api/servers/tight/resources';
    const tooBig = await small.admin('PUT', `${path}/huge`, {
      uri: 'a://huge',
      text: 'h'.repeat(901),
    });
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.error.message).toContain('TOOL_MAX_RESULT_BYTES');
    const first = await small.admin('PUT', `${path}/one`, {
      uri: 'a://one',
      text: 'x'.repeat(600),
    });
    expect(first.status).toBe(201);
    // Prompts count too: the budget is what the server stores.
    const prompt = await small.admin('PUT', '/api/servers/tight/prompts/long', {
      description: 'd'.repeat(600),
      messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }],
    });
    expect(prompt.status).toBe(201);
    const second = await small.admin('PUT', `${path}/two`, {
      uri: 'a://two',
      text: 'y'.repeat(600),
    });
    expect(second.status).toBe(400);
    expect(second.body.error).toMatchObject({
      code: 'ERR_VALIDATION',
      message: expect.stringContaining('SERVER_ENTRIES_MAX_BYTES'),
    });
    expect((await small.admin('GET', `${path}/two`)).status).toBe(404);
    // A replacement counts its own new size, not its old one beside it.
    const grown = await small.admin('PUT', `${path}/one`, {
      uri: 'a://one',
      text: 'z'.repeat(700),
    });
    expect(grown.status).toBe(200);
  } finally {
    await small.close();
  }
}, 120_000);

describe('previews', () => {
  beforeAll(async () => {
    const greet = {
      description: 'Greets someone',
      arguments: [{ name: 'who', required: true }],
      code: 'console.log(`greeting ${params.who}`); return `Hello ${params.who}`;',
    };
    await put(`${PROMPTS}/greet`, greet, 201);
    await put(
      `${PROMPTS}/grumpy`,
      { description: 'Fails', code: "throw new Error('no prompt today');" },
      201,
    );
  }, 60_000);

  it('renders a template prompt with its arguments', async () => {
    const rendered = await plane.admin('POST', `${PROMPTS}/summary/render`, {
      arguments: { city: 'Paris', style: 'short' },
    });
    expect(rendered.status).toBe(200);
    expect(rendered.body).toMatchObject({
      ok: true,
      result: {
        description: 'Asks for a summary of a city',
        messages: [
          { role: 'user', content: { type: 'text', text: 'Summarise Paris in a short style.' } },
        ],
      },
      logs: [],
      durationMs: expect.any(Number),
    });
  });

  it('answers ok: false when the arguments or the code fail, 404 for an unknown prompt', async () => {
    const missing = await plane.admin('POST', `${PROMPTS}/summary/render`, {});
    expect(missing.status).toBe(200);
    expect(missing.body).toMatchObject({
      ok: false,
      error: { code: 'ERR_INVALID_ARGUMENT', message: expect.stringContaining('city') },
    });
    const failed = await plane.admin('POST', `${PROMPTS}/grumpy/render`, {});
    expect(failed.status).toBe(200);
    expect(failed.body).toMatchObject({
      ok: false,
      error: { code: 'ERR_TOOL_ERROR', message: 'no prompt today' },
    });
    const unknown = await plane.admin('POST', `${PROMPTS}/nothing/render`, {});
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('ERR_UNKNOWN_PROMPT');
    const badBody = await plane.admin('POST', `${PROMPTS}/summary/render`, {
      arguments: { city: 3 },
    });
    expect(badBody.status).toBe(400);
  });

  it('renders a code prompt in a container, with its log, recorded as kind prompt', async () => {
    const rendered = await plane.admin('POST', `${PROMPTS}/greet/render`, {
      arguments: { who: 'Ada' },
    });
    expect(rendered.status, JSON.stringify(rendered.body)).toBe(200);
    expect(rendered.body).toMatchObject({
      ok: true,
      result: { messages: [{ role: 'user', content: { type: 'text', text: 'Hello Ada' } }] },
      logs: [expect.objectContaining({ text: 'greeting Ada' })],
    });
    const prompts = await plane.admin('GET', `/api/invocations?server=${SUB}&kind=prompt`);
    expect(prompts.status).toBe(200);
    expect(prompts.body.invocations.length).toBeGreaterThan(0);
    expect(prompts.body.invocations.every((i: any) => i.kind === 'prompt')).toBe(true);
    expect(prompts.body.invocations.map((i: any) => i.tool)).toContain('greet');
    const tools = await plane.admin('GET', `/api/invocations?server=${SUB}&kind=tool`);
    expect(tools.body.invocations).toEqual([]);
  }, 60_000);

  it('reads a static resource from memory', async () => {
    const read = await plane.admin('POST', `${RESOURCES}/handbook/read`, {});
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      ok: true,
      result: {
        contents: [{ uri: 'docs://handbook', mimeType: 'text/markdown', text: '# Handbook' }],
      },
    });
    const withVariables = await plane.admin('POST', `${RESOURCES}/handbook/read`, {
      variables: { page: '1' },
    });
    expect(withVariables.status).toBe(400);
    expect(withVariables.body.error.message).toContain('is static');
  });

  it('reads a template by its variables or by a URI, running its code', async () => {
    const byVariables = await plane.admin('POST', `${RESOURCES}/weather/read`, {
      variables: { city: 'Paris' },
    });
    expect(byVariables.status, JSON.stringify(byVariables.body)).toBe(200);
    expect(byVariables.body).toMatchObject({
      ok: true,
      result: {
        contents: [
          { uri: 'weather://Paris/today', mimeType: 'text/plain', text: 'sunny in Paris' },
        ],
      },
      logs: [expect.objectContaining({ text: 'reading Paris' })],
    });
    const byUri = await plane.admin('POST', `${RESOURCES}/weather/read`, {
      uri: 'weather://Lisbon/today',
    });
    expect(byUri.body.result.contents[0]).toMatchObject({ text: 'sunny in Lisbon' });

    const reads = await plane.admin('GET', `/api/invocations?server=${SUB}&kind=resource`);
    expect(reads.body.invocations.map((i: any) => [i.kind, i.tool])).toContainEqual([
      'resource',
      'weather',
    ]);
  }, 60_000);

  it('refuses a template read that names no URI, and 404s what does not exist', async () => {
    const nothing = await plane.admin('POST', `${RESOURCES}/weather/read`, {});
    expect(nothing.status).toBe(400);
    expect(nothing.body.error.message).toContain('{"variables": {city}}');
    const wrongVariable = await plane.admin('POST', `${RESOURCES}/weather/read`, {
      variables: { town: 'Paris' },
    });
    expect(wrongVariable.status).toBe(400);
    expect(wrongVariable.body.error.details).toEqual([
      { path: 'variables.city', message: 'missing' },
      { path: 'variables.town', message: 'not a variable of weather://{city}/today' },
    ]);
    const both = await plane.admin('POST', `${RESOURCES}/weather/read`, {
      uri: 'weather://Paris/today',
      variables: { city: 'Paris' },
    });
    expect(both.status).toBe(400);
    // Values the template cannot make into a URI it matches: refused, not a 404 or a 500.
    for (const city of ['', '\ud800']) {
      const unmakeable = await plane.admin('POST', `${RESOURCES}/weather/read`, {
        variables: { city },
      });
      expect(unmakeable.status, JSON.stringify(unmakeable.body)).toBe(400);
      expect(unmakeable.body.error.message).toContain('do not make a URI that');
    }
    const unmatched = await plane.admin('POST', `${RESOURCES}/weather/read`, {
      uri: 'docs://handbook',
    });
    expect(unmatched.status).toBe(404);
    expect(unmatched.body.error.code).toBe('ERR_UNKNOWN_RESOURCE');
    const unknown = await plane.admin('POST', `${RESOURCES}/nothing/read`, {});
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({
      code: 'ERR_NOT_FOUND',
      message: 'resource "nothing" does not exist on server "entries"',
    });
  });
});

it('filters the invocation log by a known kind only', async () => {
  expect((await plane.admin('GET', '/api/invocations?kind=completion')).status).toBe(200);
  const refused = await plane.admin('GET', '/api/invocations?kind=widget');
  expect(refused.status).toBe(400);
  expect(refused.body.error.details[0].path).toBe('kind');
});

it('describes every prompt and resource route in OpenAPI, from the same schemas', async () => {
  const document = await (await loopbackFetch(`${plane.adminUrl}/api/openapi.json`)).json();
  const expected: Record<string, string[]> = {};
  for (const plural of ['prompts', 'resources']) {
    const base = `/api/servers/{sub}/${plural}`;
    expected[base] = ['get'];
    expected[`${base}/{name}`] = ['delete', 'get', 'put'];
    expected[`${base}/{name}/versions`] = ['get'];
    expected[`${base}/{name}/rollback`] = ['post'];
  }
  expected['/api/servers/{sub}/prompts/{name}/render'] = ['post'];
  expected['/api/servers/{sub}/resources/{name}/read'] = ['post'];
  for (const [path, methods] of Object.entries(expected)) {
    expect(Object.keys(document.paths[path] ?? {}).sort(), path).toEqual(methods);
  }
  const bodyOf = (path: string, method: string) =>
    document.paths[path][method].requestBody.content['application/json'].schema;
  expect(Object.keys(bodyOf('/api/servers/{sub}/prompts/{name}', 'put').properties)).toEqual(
    expect.arrayContaining(['arguments', 'messages', 'code', 'secrets']),
  );
  expect(Object.keys(bodyOf('/api/servers/{sub}/resources/{name}', 'put').properties)).toEqual(
    expect.arrayContaining(['uri', 'uriTemplate', 'text', 'blob', 'code', 'complete']),
  );
  expect(bodyOf('/api/servers/{sub}/prompts/{name}/render', 'post').properties).toHaveProperty(
    'arguments',
  );
  expect(bodyOf('/api/servers/{sub}/resources/{name}/read', 'post').anyOf).toHaveLength(2);
  expect(
    document.paths['/api/invocations'].get.parameters.map((p: { name: string }) => p.name),
  ).toContain('kind');
});
