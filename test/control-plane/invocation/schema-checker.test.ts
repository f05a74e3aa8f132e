/**
 * Tool schemas checked off the control plane's thread, under a deadline
 * (control-plane/invocation/schema-checker.ts), against the attacks an
 * attacker review found: a 200-byte schema exponential in the nesting of
 * the value (F1), `uniqueItems` quadratic in an array's length (F2), a
 * schema whose compile inlined every `$ref` (F3). Such schemas are refused
 * at save now; a store may hold ones saved before, which are written into
 * its database here. Real worker threads; the last part runs a real control
 * plane with two servers, one hostile, through the official SDK client, and
 * shows the other server answered meanwhile.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import SqliteDatabase from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SCHEMA_CHECK_WORKERS,
  SchemaChecker,
  type SchemaBearingTool,
  type SchemaCheckRecord,
} from '../../../control-plane/invocation/schema-checker.js';
import { SQLITE_FILE_NAME } from '../../../control-plane/store/store-dialect.js';
import { toolSchemaProblems } from '../../../control-plane/store/tool-json-schema.js';
import { DEFAULT_SCHEMA_CHECKS } from '../../support/config-defaults.js';
import { loopbackFetch } from '../../support/loopback-fetch.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';

/** F1: each level validates the child twice (a branch that then fails, one that passes). 202 characters. */
const EXPONENTIAL = {
  type: 'object',
  $defs: {
    n: {
      anyOf: [
        { allOf: [{ properties: { a: { $ref: '#/$defs/n' } } }, { required: ['never'] }] },
        { properties: { a: { $ref: '#/$defs/n' } } },
      ],
    },
  },
  properties: { a: { $ref: '#/$defs/n' } },
};
const SIMPLE = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };

/** `{"a":{"a":…{}}}`, `depth` levels: 30 take a minute against EXPONENTIAL. */
function nested(depth: number): Record<string, unknown> {
  return JSON.parse('{"a":'.repeat(depth) + '{}' + '}'.repeat(depth));
}

function tool(
  subdomain: string,
  schema: Record<string, unknown>,
  role: 'inputSchema' | 'outputSchema' = 'inputSchema',
): SchemaBearingTool {
  return { subdomain, name: 't', version: 1, [role]: schema };
}

/** One server's refs of a 300-property definition, 300 times over: 20 KB, inlined 61 s and 1.8 GB. */
function inlinedRefs(): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (let i = 0; i < 300; i++) fields[`p${i}`] = { type: 'integer', minimum: i };
  const uses: Record<string, unknown> = {};
  for (let i = 0; i < 300; i++) uses[`r${i}`] = { $ref: '#/$defs/a' };
  return { type: 'object', $defs: { a: { type: 'object', properties: fields } }, properties: uses };
}

describe('SchemaChecker', () => {
  const TIMEOUT_MS = 250;
  let checker: SchemaChecker;
  const records: SchemaCheckRecord[] = [];
  beforeAll(async () => {
    checker = new SchemaChecker({
      timeoutMs: TIMEOUT_MS,
      onCheck: (record) => records.push(record),
    });
    // Both lanes' workers loaded (under tsx, most of a second): the deadlines below
    // time checks only. A large value goes to the heavy lane.
    await Promise.all([
      checker.check(tool('warm-light', SIMPLE), 'inputSchema', { n: 1 }),
      checker.check(tool('warm-heavy', SIMPLE), 'inputSchema', { n: 1, pad: 'x'.repeat(200_000) }),
    ]);
    expect(checker.readyWorkers).toBe(SCHEMA_CHECK_WORKERS);
  });
  afterAll(() => checker?.close());

  it('refuses settings it cannot run with', () => {
    expect(() => new SchemaChecker({ timeoutMs: 0 })).toThrow(TypeError);
    expect(() => new SchemaChecker({ timeoutMs: 1.5 })).toThrow(TypeError);
  });

  it('checks a value against the schema in each role, naming the path of a mismatch', async () => {
    const both: SchemaBearingTool = {
      subdomain: 's',
      name: 'roles',
      version: 1,
      inputSchema: SIMPLE,
      outputSchema: { type: 'object', required: ['out'] },
    };
    expect(await checker.check(both, 'inputSchema', { n: 1 })).toEqual({ ok: true });
    expect(await checker.check(both, 'inputSchema', { n: 'x' })).toEqual({
      ok: false,
      reason: 'mismatch',
      problem: '/n must be integer',
    });
    expect(await checker.check(both, 'outputSchema', {})).toEqual({
      ok: false,
      reason: 'mismatch',
      problem: '/out is required',
    });
    expect(await checker.check({ ...both, outputSchema: undefined }, 'outputSchema', 7)).toEqual({
      ok: true,
    });
  });

  it('F1: cuts an exponential check at the deadline, and another server is answered meanwhile', async () => {
    // Refused at save now (issue 28); one saved before reaches the checker. Depth 30
    // took a minute on the control plane's thread.
    expect(toolSchemaProblems(EXPONENTIAL)).toEqual([
      {
        path: expect.stringMatching(/^\$defs\.n/),
        message: expect.stringMatching(/^is applied more often at each level of a nested value/),
      },
    ]);
    const started = performance.now();
    const hostile = checker.check(tool('hostile', EXPONENTIAL), 'inputSchema', nested(30));
    const other = checker
      .check(tool('other', SIMPLE), 'inputSchema', { n: 2 })
      .then((check) => ({ check, after: performance.now() - started }));
    // The same server's next check waits behind it and runs on a worker once one is free: not failed.
    const queued = checker.check(tool('hostile', SIMPLE), 'inputSchema', { n: 3 });
    expect(await hostile).toEqual({
      ok: false,
      reason: 'unchecked',
      problem: `it took longer than ${TIMEOUT_MS} ms`,
    });
    const hostileAfter = performance.now() - started;
    expect(hostileAfter).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    // The timer fires on time unless this machine is starved; a minute is what it replaces.
    expect(hostileAfter).toBeLessThan(10_000);
    const { check, after } = await other;
    expect(check).toEqual({ ok: true });
    expect(after).toBeLessThan(hostileAfter);
    expect(await queued).toEqual({ ok: true });
  });

  it('F1: a server whose checks all overrun holds one worker; other servers keep theirs', async () => {
    // The worker replaced above has loaded again: both serve from the start.
    await expect.poll(() => checker.readyWorkers, { timeout: 10_000 }).toBe(SCHEMA_CHECK_WORKERS);
    const started = performance.now();
    const hostile = Array.from({ length: 3 }, () =>
      checker.check(tool('flood', EXPONENTIAL), 'inputSchema', nested(30)),
    );
    // Round-robin and one running check per server: the other servers never wait for the flood.
    const others = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        checker.check(tool(`calm${i % 4}`, SIMPLE), 'inputSchema', { n: i }),
      ),
    );
    const othersAfter = performance.now() - started;
    expect(others.every((check) => check.ok)).toBe(true);
    const answers = await Promise.all(hostile);
    const floodAfter = performance.now() - started;
    expect(answers.every((check) => !check.ok && check.reason === 'unchecked')).toBe(true);
    // Three deadlines one after another on one worker, versus the others all done within the first.
    expect(floodAfter).toBeGreaterThanOrEqual(3 * TIMEOUT_MS - 15);
    expect(othersAfter).toBeLessThan(TIMEOUT_MS);
  });

  it('a server that overran checks in the heavy lane: the light worker is never replaced by it (final review)', async () => {
    await expect.poll(() => checker.readyWorkers, { timeout: 10_000 }).toBe(SCHEMA_CHECK_WORKERS);
    let fewestReady = checker.readyWorkers;
    const watch = setInterval(() => {
      fewestReady = Math.min(fewestReady, checker.readyWorkers);
    }, 10);
    const seen = records.length;
    try {
      // Sequential overruns: each one's worker reloads (most of a second under tsx)
      // longer than a deadline lasts, so a server free to move on would take the
      // other worker down too.
      for (let i = 0; i < 3; i++) {
        const answer = await checker.check(tool('mover', EXPONENTIAL), 'inputSchema', nested(30));
        expect(answer).toMatchObject({ ok: false, reason: 'unchecked' });
        // Its light checks too go to the heavy lane now; another server's stay light.
        expect(await checker.check(tool('mover', SIMPLE), 'inputSchema', { n: i })).toEqual({
          ok: true,
        });
        const calm = await checker.check(tool('bystander', SIMPLE), 'inputSchema', { n: i });
        expect(calm).toEqual({ ok: true });
      }
    } finally {
      clearInterval(watch);
    }
    expect(fewestReady).toBeGreaterThanOrEqual(1);
    const lanes = records.slice(seen).map((record) => `${record.server}:${record.lane}`);
    expect(lanes.filter((lane) => lane.startsWith('mover:'))).toEqual(
      Array.from({ length: 6 }, () => 'mover:heavy'),
    );
    expect(lanes.filter((lane) => lane.startsWith('bystander:'))).toEqual(
      Array.from({ length: 3 }, () => 'bystander:light'),
    );
  });

  it('two servers that overran share the heavy lane, and both are answered after', async () => {
    await expect.poll(() => checker.readyWorkers, { timeout: 10_000 }).toBe(SCHEMA_CHECK_WORKERS);
    const first = checker.check(tool('bound-a', EXPONENTIAL), 'inputSchema', nested(30));
    const second = checker.check(tool('bound-b', EXPONENTIAL), 'inputSchema', nested(30));
    await Promise.all([first, second]);
    const answers = await Promise.all([
      checker.check(tool('bound-a', SIMPLE), 'inputSchema', { n: 1 }),
      checker.check(tool('bound-b', SIMPLE), 'inputSchema', { n: 2 }),
    ]);
    expect(answers).toEqual([{ ok: true }, { ok: true }]);
  });

  it('F2: refuses quadratic uniqueItems at save, and cuts a schema saved before at the deadline', async () => {
    const quadratic = {
      type: 'object',
      properties: { tags: { type: 'array', uniqueItems: true } },
    };
    expect(toolSchemaProblems(quadratic)).toEqual([
      {
        path: 'properties.tags.uniqueItems',
        message: expect.stringMatching(/"maxItems" of at most 1000/),
      },
    ]);
    // 1 MB of distinct one-item arrays: forty minutes at 4 MB, compared two by two.
    const tags = Array.from({ length: 150_000 }, (_, i) => [i]);
    expect(JSON.stringify(tags).length).toBeGreaterThan(1_000_000);
    const started = performance.now();
    const [argument, result] = await Promise.all([
      checker.check(tool('legacy-in', quadratic), 'inputSchema', { tags }),
      checker.check(tool('legacy-out', quadratic, 'outputSchema'), 'outputSchema', { tags }),
    ]);
    expect(argument).toMatchObject({ ok: false, reason: 'unchecked' });
    expect(result).toMatchObject({ ok: false, reason: 'unchecked' });
    expect(performance.now() - started).toBeLessThan(10_000);
    // Scalar items are hashed, in linear time: the same length checks well inside the deadline.
    const linear = {
      type: 'object',
      properties: { tags: { type: 'array', items: { type: 'integer' }, uniqueItems: true } },
    };
    expect(toolSchemaProblems(linear)).toEqual([]);
    const integers = Array.from({ length: 150_000 }, (_, i) => i);
    expect(await checker.check(tool('linear', linear), 'inputSchema', { tags: integers })).toEqual({
      ok: true,
    });
  });

  it('F3: refuses a schema whose validator is too much code, at save and in the worker, in milliseconds', async () => {
    const schema = inlinedRefs();
    expect(JSON.stringify(schema).length).toBeGreaterThan(20_000);
    const started = performance.now();
    expect(toolSchemaProblems(schema)).toEqual([
      { path: '', message: expect.stringMatching(/^needs too much validation code/) },
    ]);
    // 61 s and 1.8 GB when every $ref was inlined; measured 80–200 ms now.
    expect(performance.now() - started).toBeLessThan(5_000);
    // Saved under the old rules, it reaches a worker: refused there the same way. (Code is
    // counted per function, so this one generates 210 K first: a deadline of its own, not to
    // depend on how fast a freshly replaced worker's compiler runs on a loaded machine.)
    const patient = new SchemaChecker({ timeoutMs: 30_000 });
    try {
      expect(await patient.check(tool('legacy-big', schema), 'inputSchema', {})).toEqual({
        ok: false,
        reason: 'unchecked',
        problem: expect.stringMatching(/^it does not compile: needs too much validation code/),
      });
    } finally {
      await patient.close();
    }
    // The 55 KB schema that killed the process when inlined.
    const larger: Record<string, unknown> = inlinedRefs();
    const fields: Record<string, unknown> = {};
    for (let i = 0; i < 600; i++) fields[`p${i}`] = { type: 'integer', minimum: i };
    const uses: Record<string, unknown> = {};
    for (let i = 0; i < 900; i++) uses[`r${i}`] = { $ref: '#/$defs/a' };
    Object.assign(larger, {
      $defs: { a: { type: 'object', properties: fields } },
      properties: uses,
    });
    expect(toolSchemaProblems(larger)).toMatchObject([{ path: '' }]);
  });

  it('answers in tens of microseconds once warm', async () => {
    const warm = tool('speed', SIMPLE);
    for (let i = 0; i < 200; i++) await checker.check(warm, 'inputSchema', { n: i });
    const count = 2_000;
    const started = performance.now();
    for (let i = 0; i < count; i++) await checker.check(warm, 'inputSchema', { n: i });
    const microseconds = ((performance.now() - started) * 1000) / count;
    console.log(`schema check round trip, warm: ${microseconds.toFixed(0)} µs`);
    // Measured 35–60 µs; the bound only tells a worker round trip from a stall.
    expect(microseconds).toBeLessThan(5_000);
  });

  it('answers waiting checks when closed', async () => {
    const closing = new SchemaChecker(DEFAULT_SCHEMA_CHECKS);
    const waiting = closing.check(tool('late', SIMPLE), 'inputSchema', { n: 1 });
    await closing.close();
    expect(await waiting).toEqual({
      ok: false,
      reason: 'unchecked',
      problem: 'the control plane is shutting down',
    });
    expect(await closing.check(tool('late', SIMPLE), 'inputSchema', { n: 1 })).toMatchObject({
      ok: false,
      reason: 'unchecked',
    });
  });
});

describe('a control plane with a hostile server', () => {
  const TIMEOUT_MS = 3_000;
  let plane: TestControlPlane;
  const clients: Client[] = [];

  async function connect(subdomain: string): Promise<Client> {
    const client = new Client({ name: 'schema-checker-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(plane.mcpUrl(subdomain), { fetch: loopbackFetch }),
    );
    clients.push(client);
    return client;
  }

  function textOf(result: CallToolResult): string {
    const first = result.content[0];
    return first?.type === 'text' ? first.text : '';
  }

  beforeAll(async () => {
    // Long enough that the other server's calls visibly finish inside one hostile check.
    plane = await startTestControlPlane({ TOOL_SCHEMA_CHECK_TIMEOUT_MS: String(TIMEOUT_MS) });
    for (const subdomain of ['hostile', 'calm']) {
      expect((await plane.admin('POST', '/api/servers', { subdomain })).status).toBe(201);
    }
    const save = async (subdomain: string, name: string, body: object) => {
      const response = await plane.admin('PUT', `/api/servers/${subdomain}/tools/${name}`, body);
      expect(response.status, JSON.stringify(response.body)).toBe(201);
    };
    await save('hostile', 'nested_input', {
      description: 'An exponential inputSchema, once written in below.',
      inputSchema: { type: 'object' },
      code: 'return {};',
    });
    await save('hostile', 'nested_output', {
      description:
        'An exponential outputSchema, once written in below, and a result 30 levels deep.',
      outputSchema: { type: 'object' },
      code: 'let v = {}; for (let i = 0; i < 30; i++) v = { a: v }; return v;',
    });
    // Refused at save now (below): written into the store as one saved before would be.
    const database = new SqliteDatabase(join(plane.dataDir, SQLITE_FILE_NAME));
    try {
      const text = JSON.stringify(EXPONENTIAL);
      const write = (field: string, name: string) =>
        database
          .prepare(
            `UPDATE server_entries SET definition = json_set(definition, '$.${field}', json(?)) WHERE kind = 'tool' AND name = ?`,
          )
          .run(text, name);
      write('inputSchema', 'nested_input');
      write('outputSchema', 'nested_output');
    } finally {
      database.close();
    }
    await plane.restart();
    await save('calm', 'checked', {
      description: 'A schema tool that runs.',
      inputSchema: SIMPLE,
      outputSchema: { type: 'object', properties: { doubled: { type: 'integer' } } },
      code: 'return { doubled: params.n * 2 };',
    });
    await save('calm', 'listed', {
      description: 'A parameter-list tool: checked without a worker.',
      parameters: [{ name: 'n', type: 'integer', required: true }],
      code: 'return { tripled: params.n * 3 };',
    });
  }, 180_000);

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await plane?.close();
  });

  it('answers the other server while a hostile argument check runs, then fails the hostile call', async () => {
    const hostile = await connect('hostile');
    const calm = await connect('calm');
    // Warm: containers started, workers loaded; what follows times checks and calls only.
    expect((await calm.callTool({ name: 'checked', arguments: { n: 1 } })).isError ?? false).toBe(
      false,
    );
    expect((await calm.callTool({ name: 'listed', arguments: { n: 1 } })).isError ?? false).toBe(
      false,
    );

    const started = performance.now();
    let hostileDone: number | undefined;
    const hostileCall = hostile
      .callTool({ name: 'nested_input', arguments: nested(30) })
      .then((result) => {
        hostileDone = performance.now() - started;
        return result as CallToolResult;
      });
    // Each of these finished before the hostile check's deadline: the control plane kept answering.
    for (let n = 2; n < 5; n++) {
      const checked = (await calm.callTool({
        name: 'checked',
        arguments: { n },
      })) as CallToolResult;
      expect(checked.structuredContent).toEqual({ doubled: 2 * n });
      const listed = (await calm.callTool({
        name: 'listed',
        arguments: { n },
      })) as CallToolResult;
      expect(listed.structuredContent).toEqual({ tripled: 3 * n });
      expect((await hostile.listTools()).tools).toHaveLength(2);
    }
    const calmDone = performance.now() - started;
    expect(hostileDone).toBeUndefined();
    expect(calmDone).toBeLessThan(TIMEOUT_MS);

    const result = await hostileCall;
    expect(result.isError).toBe(true);
    expect(result._meta?.['mcphost/errorCode']).toBe('ERR_INVALID_ARGUMENT');
    expect(textOf(result)).toBe(
      `arguments could not be checked against inputSchema: it took longer than ${TIMEOUT_MS} ms`,
    );
    expect(hostileDone!).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
  });

  it('refuses at save a schema whose checks cannot finish in time, naming where', async () => {
    const response = await plane.admin('PUT', '/api/servers/hostile/tools/again', {
      description: 'An exponential inputSchema.',
      inputSchema: EXPONENTIAL,
      code: 'return {};',
    });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('ERR_VALIDATION');
    expect(response.body.error.details).toEqual([
      {
        path: expect.stringMatching(/^inputSchema\.\$defs\.n/),
        message: expect.stringMatching(/^is applied more often at each level of a nested value/),
      },
    ]);
  });

  it('fails a result that cannot be checked in time with ERR_OUTPUT_INVALID', async () => {
    const result = (await (
      await connect('hostile')
    ).callTool({ name: 'nested_output' })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(result._meta?.['mcphost/errorCode']).toBe('ERR_OUTPUT_INVALID');
    expect(textOf(result)).toBe(
      `result could not be checked against outputSchema: it took longer than ${TIMEOUT_MS} ms`,
    );
    expect(result.structuredContent).toBeUndefined();
  });
});
