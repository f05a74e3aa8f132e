/**
 * Hostile tenants against both protocol eras, on a real control plane with
 * real containers (found by the hostile review of issues 28 and 29; each
 * test failed before its fix, and prints the attacker's and the victim's
 * figures):
 *
 * 1. A tool's form (`sdk.elicit` requestedSchema) is rebuilt of MCP's form
 *    keywords alone before a client sees it or an answer is checked:
 *    `allOf`, `patternProperties`, `$defs` and their `pattern`s, which a
 *    JSON Schema engine once ran on the control plane's thread over a
 *    client's text (one 0.3 KB request stalled every tenant 5 s), are gone.
 * 2. Checking answers keeps nothing: a shared ajv once kept every form it
 *    compiled (+22 MB of heap for 500 forms).
 * 3. What a client declares of itself (`_meta` clientCapabilities and
 *    clientInfo, `initialize`'s) is bounded before the SDK reads it: its
 *    recursive schemas once cost seconds of main-thread CPU for a 3.6 MB
 *    declaration, and deep nesting overflowed their stack (a 500).
 * 4. A `subscriptions/listen` stream ends when the key that opened it is
 *    revoked.
 * 5. The pre-authentication brake counts wrong keys per server: another
 *    tenant's wrong keys from the same network do not lock a valid key out.
 */
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { loopbackFetch } from '../../support/loopback-fetch.js';
import {
  MODERN_ELICITING_META,
  MODERN_REVISION,
  modernToolCall,
  type ModernCallOptions,
} from '../../support/mcp-requests.js';

v8.setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;

let plane: TestControlPlane;

const MODERN = MODERN_REVISION;
const META = MODERN_ELICITING_META;

interface Answer {
  status: number;
  body: any;
}

/** One modern `tools/call`. */
function modernCall(server: string, tool: string, extra: ModernCallOptions = {}): Promise<Answer> {
  return modernToolCall(plane.mcpUrl(server), tool, extra);
}

/** A modern request of `method` with a body written by hand. */
async function modernRaw(server: string, method: string, body: string, key?: string) {
  const response = await loopbackFetch(plane.mcpUrl(server), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
    },
    body,
  });
  return { status: response.status, text: await response.text() };
}

/**
 * Calls the victim's echo tool back to back until `attack` settles; returns
 * the attack's value and the victim's latencies. The control plane runs in
 * this process: a stalled event loop shows as a call that took that long.
 */
async function whileVictimCalls<T>(
  attack: () => Promise<T>,
): Promise<{ value: T; attackMs: number; victimMs: number[] }> {
  await modernCall('victim', 'echo', { args: { n: 0 } });
  const victimMs: number[] = [];
  let done = false;
  const victim = (async () => {
    while (!done) {
      const started = performance.now();
      const answer = await modernCall('victim', 'echo', { args: { n: 1 } });
      expect(answer.body.result?.content?.[0]?.text, JSON.stringify(answer.body)).toBe('1');
      victimMs.push(performance.now() - started);
    }
  })();
  await new Promise((resolve) => setTimeout(resolve, 100));
  const started = performance.now();
  const value = await attack().finally(() => (done = true));
  const attackMs = performance.now() - started;
  await victim;
  return { value, attackMs, victimMs };
}

/** Latencies in short: count, median and the slowest few. */
const ms = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
  return `${values.length} calls, median ${median.toFixed(0)}, slowest ${sorted
    .slice(-3)
    .map((value) => value.toFixed(0))
    .join(' ')}`;
};

/** A form whose `allOf` hides a backtracking pattern: MCP forms have no such keyword. */
const REDOS_ASK = `const answer = await sdk.elicit('Name?', {
    type: 'object',
    properties: { name: { type: 'string' } },
    allOf: [{ properties: { name: { pattern: '^(a|a)*$' } } }],
  }, { key: 'name' });
  return 'hello ' + answer.content.name;`;

/** A form with a keyword MCP has: at most 64 characters. */
const BOUNDED_ASK = `const answer = await sdk.elicit('Name?', {
    type: 'object',
    properties: { name: { type: 'string', maxLength: 64 } },
  }, { key: 'name' });
  return answer.content.name;`;

/** 100 forms in one call, each with only the keywords MCP allows (a long description). */
const FORMS_PER_CALL = 100;
const MANY_FORMS = `for (let i = 0; i < ${FORMS_PER_CALL}; i++) {
    await sdk.elicit('Q' + i, {
      type: 'object',
      properties: { n: { type: 'string', description: 'd'.repeat(40000) + i } },
    }, { key: 'k' + i });
  }
  return 'asked';`;

let victimKey = '';
let victimKeyId = '';

beforeAll(async () => {
  plane = await startTestControlPlane({
    RATE_LIMIT_PER_MINUTE: '0',
    TOOL_TIMEOUT_MS: '60000',
    MCP_AUTH_FAILURES_PER_MINUTE: '20',
  });
  for (const server of ['evil', 'victim', 'keyed', 'attacker-keys']) {
    expect((await plane.admin('POST', '/api/servers', { subdomain: server })).status).toBe(201);
  }
  const tools: [string, string, string][] = [
    ['evil', 'ask', REDOS_ASK],
    ['evil', 'forms', MANY_FORMS],
    ['evil', 'bounded', BOUNDED_ASK],
    ['victim', 'echo', 'return params.n;'],
    ['keyed', 'echo', 'return params.n;'],
    ['attacker-keys', 'echo', 'return params.n;'],
  ];
  for (const [server, name, code] of tools) {
    const saved = await plane.admin('PUT', `/api/servers/${server}/tools/${name}`, {
      description: name,
      code,
      parameters: name === 'echo' ? [{ name: 'n', type: 'number', required: true }] : [],
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
  }
  const key = await plane.admin('POST', '/api/servers/keyed/api-keys', { label: 'victim' });
  expect(key.status).toBe(201);
  victimKey = key.body.key;
  victimKeyId = key.body.id;
  for (const server of ['keyed', 'attacker-keys']) {
    const mode = await plane.admin('PATCH', `/api/servers/${server}/settings`, {
      securityMode: 'apikey',
    });
    expect(mode.status).toBe(200);
  }
}, 180_000);

afterAll(async () => {
  await plane?.close();
});

/** The keys a rebuilt form may have, at the top and in a field of REDOS_ASK. */
const FORM_KEYS = ['properties', 'type'];

/** Opens a legacy session on `server` whose client offers elicitation; returns its request headers. */
async function legacySession(server: string): Promise<Record<string, string>> {
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  const init = await loopbackFetch(plane.mcpUrl(server), {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: { elicitation: {} },
        clientInfo: { name: 'hostile', version: '1' },
      },
    }),
  });
  const session = init.headers.get('mcp-session-id')!;
  await init.text();
  expect(session).toBeTruthy();
  const sessionHeaders = {
    ...headers,
    'mcp-session-id': session,
    'mcp-protocol-version': '2025-11-25',
  };
  await (
    await loopbackFetch(plane.mcpUrl(server), {
      method: 'POST',
      headers: sessionHeaders,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    })
  ).text();
  return sessionHeaders;
}

/** Reads SSE `data:` messages of a response until `stop` says so; returns the one it stopped at. */
async function readUntil(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  stop: (message: any) => boolean,
): Promise<any> {
  let text = '';
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended first:\n${text}`);
    text += decoder.decode(value, { stream: true });
    const lines = text.split('\n');
    text = lines.pop()!;
    for (const line of lines) {
      // The priming event of a resumable stream has empty data.
      if (!line.startsWith('data: ') || line.length === 6) continue;
      const message = JSON.parse(line.slice(6));
      if (stop(message)) return message;
    }
  }
}

describe("a tool's form reaches clients and checks answers with MCP's keywords only", () => {
  it('modern era: the form asked has no allOf or pattern, and an answer it forbade is taken', async () => {
    const asked = await modernCall('evil', 'ask');
    expect(asked.body.result?.resultType, JSON.stringify(asked.body)).toBe('input_required');
    const form = asked.body.result.inputRequests.name.params.requestedSchema;
    expect(Object.keys(form).sort()).toEqual(FORM_KEYS);
    expect(form.properties).toEqual({ name: { type: 'string' } });

    // The answer the hidden pattern would have backtracked on, sent with the first request.
    const hostile = `${'a'.repeat(40)}!`;
    const answers = { name: { action: 'accept', content: { name: hostile } } };
    const { value, attackMs, victimMs } = await whileVictimCalls(() =>
      modernCall('evil', 'ask', { answers }),
    );
    expect(value.body.result?.content?.[0]?.text, JSON.stringify(value.body)).toBe(
      `hello ${hostile}`,
    );
    console.log(
      `[figures] one modern tools/call with a 41-character answer: ${attackMs.toFixed(0)} ms; another server's calls meanwhile, ms: ${ms(victimMs)} (before the fix: 26 characters, 6.2 s, and the other server's worst call 5,971 ms)`,
    );
  }, 120_000);

  it('modern era: an answer that breaks a keyword MCP has is refused, naming its field', async () => {
    const tooLong = { name: { action: 'accept', content: { name: 'x'.repeat(65) } } };
    const answer = await modernCall('evil', 'bounded', { answers: tooLong });
    expect(answer.body.error?.code, JSON.stringify(answer.body)).toBe(-32602);
    expect(answer.body.error?.message).toMatch(/name/);
  });

  it('legacy era: elicitation/create carries the rebuilt form, and the answer is taken', async () => {
    const url = plane.mcpUrl('evil');
    const sessionHeaders = await legacySession('evil');
    const call = await loopbackFetch(url, {
      method: 'POST',
      headers: sessionHeaders,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'ask', arguments: {} },
      }),
    });
    const reader = call.body!.getReader();
    const request = await readUntil(reader, (message) => message.method === 'elicitation/create');
    expect(Object.keys(request.params.requestedSchema).sort()).toEqual(FORM_KEYS);
    expect(request.params.requestedSchema.properties).toEqual({ name: { type: 'string' } });
    const hostile = `${'a'.repeat(40)}!`;
    const { attackMs, victimMs } = await whileVictimCalls(async () => {
      const answered = await loopbackFetch(url, {
        method: 'POST',
        headers: sessionHeaders,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: request.id,
          result: { action: 'accept', content: { name: hostile } },
        }),
      });
      await answered.text();
      return answered.status;
    });
    const result = await readUntil(reader, (message) => message.id === 2);
    await reader.cancel().catch(() => undefined);
    expect(result.result?.content?.[0]?.text, JSON.stringify(result)).toBe(`hello ${hostile}`);
    console.log(
      `[figures] one legacy elicitation answer: ${attackMs.toFixed(0)} ms; another server's calls meanwhile, ms: ${ms(victimMs)} (before the fix: 28 characters, the other server's worst call 1,555 ms)`,
    );
  }, 120_000);

  it('keeps nothing of the forms it checked: the heap does not grow with answered forms', async () => {
    const answers: Record<string, unknown> = {};
    for (let i = 0; i < FORMS_PER_CALL; i++) {
      answers[`k${i}`] = { action: 'accept', content: { n: 'x' } };
    }
    // A first call warms the pools and the code paths.
    expect((await modernCall('evil', 'forms', { answers })).body.result?.content?.[0]?.text).toBe(
      'asked',
    );
    gc();
    const before = process.memoryUsage().heapUsed;
    const calls = 5;
    for (let i = 0; i < calls; i++) {
      const answer = await modernCall('evil', 'forms', { answers });
      expect(answer.body.result?.content?.[0]?.text, JSON.stringify(answer.body)).toBe('asked');
    }
    gc();
    const grownMb = (process.memoryUsage().heapUsed - before) / 1e6;
    console.log(
      `[figures] ${calls * FORMS_PER_CALL} forms of ~40 KB answered: the control plane's heap grew ${grownMb.toFixed(1)} MB after GC (before the fix: +22.0 MB, kept)`,
    );
    // Before: 22 MB. A bound far above noise, far below the leak.
    expect(grownMb, 'heap kept after GC').toBeLessThan(8);
  }, 180_000);
});

describe('what a client declares of itself is bounded before the SDK reads it', () => {
  /** 1.2 million empty arrays where a capability is a JSON object: 3.6 MB, under MAX_BODY_BYTES. */
  const huge = `{"elicitation":{"zz":{"a":[${Array(1_200_000).fill('[]').join(',')}]}}}`;
  const listWith = (capabilities: string) =>
    `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"${MODERN}","io.modelcontextprotocol/clientCapabilities":${capabilities}}}}`;
  const nested = (depth: number) => `${'{"x":'.repeat(depth)}{}${'}'.repeat(depth)}`;

  it('modern era: a 3.6 MB clientCapabilities is refused -32602 at once; one of a real size is served', async () => {
    const before = process.cpuUsage();
    const refused = await modernRaw('evil', 'tools/list', listWith(huge));
    const used = process.cpuUsage(before);
    expect(refused.status).toBe(400);
    const error = JSON.parse(refused.text).error;
    expect(error.code).toBe(-32602);
    expect(error.message).toMatch(/clientCapabilities.*16384 bytes/);
    console.log(
      `[figures] a 3.6 MB clientCapabilities: refused in ${((used.user + used.system) / 1000).toFixed(0)} ms of CPU (before the fix: 6,860 ms, served)`,
    );
    const padded = JSON.stringify({
      elicitation: {},
      experimental: { 'acme.notes': { text: 'n'.repeat(8_000) } },
    });
    const served = await modernRaw('evil', 'tools/list', listWith(padded));
    expect(served.status, served.text).toBe(200);
  }, 60_000);

  it('modern era: capabilities nested past 16 levels are refused; any message past 64 levels is Invalid Request, not a 500', async () => {
    const deepCapabilities = await modernRaw('evil', 'tools/list', listWith(nested(20)));
    expect(deepCapabilities.status).toBe(400);
    expect(JSON.parse(deepCapabilities.text).error.message).toMatch(/nests deeper than 16/);
    const deepArguments = await modernRaw(
      'victim',
      'tools/call',
      `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"n":${nested(2_000)}},"_meta":${JSON.stringify(META)}}}`,
    );
    expect(deepArguments.status).toBe(400);
    expect(JSON.parse(deepArguments.text).error).toMatchObject({ code: -32600 });
  });

  it('legacy era: an initialize with 3.6 MB of capabilities is refused -32602', async () => {
    const body = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"c","version":"1"},"capabilities":${huge}}}`;
    const before = process.cpuUsage();
    const answer = await loopbackFetch(plane.mcpUrl('evil'), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body,
    });
    const text = await answer.text();
    const used = process.cpuUsage(before);
    expect(answer.status).toBe(400);
    expect(JSON.parse(text)).toMatchObject({ id: 1, error: { code: -32602 } });
    console.log(
      `[figures] a 3.6 MB initialize: refused in ${((used.user + used.system) / 1000).toFixed(0)} ms of CPU (before the fix: 4,215 ms)`,
    );
  }, 60_000);
});

describe('a listen stream ends with the API key that opened it', () => {
  it('tells a revoked key nothing more of the server’s changes', async () => {
    const response = await loopbackFetch(plane.mcpUrl('keyed'), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
        'mcp-method': 'subscriptions/listen',
        authorization: `Bearer ${victimKey}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 71,
        method: 'subscriptions/listen',
        params: { notifications: { toolsListChanged: true }, _meta: META },
      }),
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    let seen = '';
    const pump = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        seen += new TextDecoder().decode(value);
      }
    })().catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await plane.admin('DELETE', `/api/servers/keyed/api-keys/${victimKeyId}`)).status).toBe(
      204,
    );
    const refused = await modernCall('keyed', 'echo', { args: { n: 1 }, key: victimKey });
    await plane.admin('PUT', '/api/servers/keyed/tools/added_after_revocation', {
      description: 'new',
      code: 'return 1;',
    });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await reader.cancel().catch(() => undefined);
    await pump;
    const changes = seen.split('notifications/tools/list_changed').length - 1;
    console.log(
      `[figures] revoked key: a call is refused ${refused.status}; its listen stream got ${changes} list_changed after the revocation (before the fix: 1)`,
    );
    expect(changes, 'notifications to a revoked key').toBe(0);
  }, 60_000);
});

describe('the pre-authentication brake counts wrong keys per server', () => {
  it('wrong keys at one tenant’s server do not lock out a valid key of another tenant’s', async () => {
    const fresh = await plane.admin('POST', '/api/servers/keyed/api-keys', { label: 'fresh' });
    expect(fresh.status).toBe(201);
    const before = await modernCall('keyed', 'echo', { args: { n: 5 }, key: fresh.body.key });
    expect(before.body.result?.content?.[0]?.text, JSON.stringify(before.body)).toBe('5');
    let wrong = 0;
    for (let i = 0; i < 25; i++) {
      const answer = await modernCall('attacker-keys', 'echo', {
        args: { n: 1 },
        key: `mcph_ak_made_up_${i}`,
      });
      if (answer.status !== 200) wrong += 1;
    }
    const after = await modernCall('keyed', 'echo', { args: { n: 6 }, key: fresh.body.key });
    console.log(
      `[figures] attacker: ${wrong} wrong keys at its own server "attacker-keys"; victim's valid key at "keyed": before ${before.status}, after ${after.status} (before the fix: 429) ${JSON.stringify(after.body.error ?? '').slice(0, 120)}`,
    );
    expect(after.status, 'a valid key of another server').toBe(200);
  }, 60_000);
});
