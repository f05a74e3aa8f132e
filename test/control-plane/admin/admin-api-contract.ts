/**
 * The admin REST API, path by path, against a running control plane — run
 * once on the embedded store and once on PostgreSQL (DATABASE_URL).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loopbackFetch } from '../../support/loopback-fetch.js';
import {
  startTestControlPlane,
  TEST_ADMIN_TOKEN,
  type TestControlPlane,
} from '../../support/control-plane.js';

const TOOL = {
  description: 'Adds two numbers.',
  parameters: [
    { name: 'a', type: 'number', required: true, description: 'first' },
    { name: 'b', type: 'number', required: false },
  ],
  secrets: ['API_KEY'],
  code: "console.log('adding'); return params.a + (params.b ?? 0);",
};

export function describeAdminApi(
  label: string,
  environment: () => Promise<{ env: Record<string, string>; teardown(): Promise<void> }>,
): void {
  describe(`admin API (${label})`, () => {
    let plane: TestControlPlane;
    let teardown: () => Promise<void> = async () => undefined;

    beforeAll(async () => {
      const prepared = await environment();
      teardown = prepared.teardown;
      plane = await startTestControlPlane({
        GENERIC_POOL_SIZE: '0',
        POOL_MIN_WARM: '0',
        ...prepared.env,
      });
    }, 180_000);

    afterAll(async () => {
      await plane?.close();
      await teardown();
    });

    it('refuses requests without the admin token, or with a wrong one', async () => {
      const none = await loopbackFetch(`${plane.adminUrl}/api/servers`);
      expect(none.status).toBe(401);
      expect(await none.json()).toEqual({
        error: {
          code: 'ERR_UNAUTHORIZED',
          message: expect.stringContaining('admin token required'),
        },
      });
      const wrong = await loopbackFetch(`${plane.adminUrl}/api/servers`, {
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}x` },
      });
      expect(wrong.status).toBe(401);
      expect((await loopbackFetch(`${plane.adminUrl}/healthz`)).status).toBe(200);
    });

    it('creates, lists, reads and validates servers', async () => {
      const created = await plane.admin('POST', '/api/servers', {
        subdomain: 'alpha',
        name: 'Alpha',
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        subdomain: 'alpha',
        name: 'Alpha',
        address: `http://alpha.localhost:${plane.port}`,
        // BASE_DOMAIN localhost: the path address is preferred (docs/addresses.md).
        mcpUrl: `http://localhost:${plane.port}/servers/alpha/mcp`,
        mcpUrls: {
          host: `http://alpha.localhost:${plane.port}/mcp`,
          path: `http://localhost:${plane.port}/servers/alpha/mcp`,
        },
        securityMode: 'none',
        active: true,
        toolCount: 0,
      });
      expect(
        (await plane.admin('POST', '/api/servers', { subdomain: 'alpha' })).body.error.code,
      ).toBe('ERR_CONFLICT');
      for (const subdomain of ['Upper', '-dash', 'dash-', 'a'.repeat(64), 'dot.ted', '']) {
        const bad = await plane.admin('POST', '/api/servers', { subdomain });
        expect(bad.status, subdomain).toBe(400);
        expect(bad.body.error.code).toBe('ERR_VALIDATION');
        expect(bad.body.error.details[0].path).toBe('subdomain');
      }
      expect(
        (await plane.admin('POST', '/api/servers', { subdomain: 'ok', extra: 1 })).status,
      ).toBe(400);
      expect((await plane.admin('POST', '/api/servers', '{broken')).body.error).toMatchObject({
        code: 'ERR_VALIDATION',
        message: expect.stringContaining('not valid JSON'),
      });
      const list = await plane.admin('GET', '/api/servers');
      expect(list.body.servers.map((s: { subdomain: string }) => s.subdomain)).toContain('alpha');
      expect((await plane.admin('GET', '/api/servers/alpha')).body.name).toBe('Alpha');
      expect((await plane.admin('GET', '/api/servers/missing')).status).toBe(404);
      expect((await plane.admin('PATCH', '/api/servers/alpha/settings', {})).status).toBe(400);
      expect(
        (await plane.admin('PATCH', '/api/servers/alpha/settings', { securityMode: 'maybe' }))
          .status,
      ).toBe(400);
      const wrongMethod = await loopbackFetch(`${plane.adminUrl}/api/servers`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      });
      expect(wrongMethod.status).toBe(405);
      expect(wrongMethod.headers.get('allow')).toBe('GET, POST');
      expect((await wrongMethod.json()).error).toEqual({
        code: 'ERR_METHOD_NOT_ALLOWED',
        message: 'DELETE is not allowed on /api/servers',
      });
      const nowhere = await plane.admin('GET', '/api/nowhere');
      expect(nowhere.status).toBe(404);
      expect(nowhere.body.error.code).toBe('ERR_NOT_FOUND');
    });

    it('saves tools with versions, refuses syntax errors with their position and changes nothing', async () => {
      const saved = await plane.admin('PUT', '/api/servers/alpha/tools/add', TOOL);
      expect(saved.status).toBe(201);
      expect(saved.body).toMatchObject({
        name: 'add',
        version: 1,
        description: 'Adds two numbers.',
        secrets: ['API_KEY'],
      });
      const broken = await plane.admin('PUT', '/api/servers/alpha/tools/add', {
        ...TOOL,
        code: 'const x = 1;\nreturn x +;',
      });
      expect(broken.status).toBe(422);
      expect(broken.body.error).toMatchObject({
        code: 'ERR_TOOL_SYNTAX',
        details: { line: 2, column: expect.any(Number) },
      });
      expect(broken.body.error.message).toMatch(/^syntax error at line 2, column \d+: /);
      expect((await plane.admin('GET', '/api/servers/alpha/tools/add')).body).toMatchObject({
        version: 1,
        code: TOOL.code,
      });

      const invalid: [object, string][] = [
        [
          { ...TOOL, parameters: [{ name: '1x', type: 'string', required: true }] },
          'parameters.0.name',
        ],
        [
          { ...TOOL, parameters: [{ name: 'x', type: 'date', required: true }] },
          'parameters.0.type',
        ],
        [{ ...TOOL, secrets: ['lower'] }, 'secrets.0'],
        [{ ...TOOL, limits: { timeoutMs: -1 } }, 'limits.timeoutMs'],
        [{ description: 'no code' }, 'code'],
      ];
      for (const [body, path] of invalid) {
        const response = await plane.admin('PUT', '/api/servers/alpha/tools/add', body);
        expect(response.status, path).toBe(400);
        expect(
          response.body.error.details.map((d: { path: string }) => d.path),
          path,
        ).toContain(path);
      }
      expect((await plane.admin('PUT', '/api/servers/alpha/tools/bad name!', TOOL)).status).toBe(
        400,
      );
      expect((await plane.admin('PUT', '/api/servers/missing/tools/add', TOOL)).status).toBe(404);

      const second = await plane.admin('PUT', '/api/servers/alpha/tools/add', {
        ...TOOL,
        code: 'return params.a * 2;',
      });
      expect(second.status).toBe(200);
      expect(second.body.version).toBe(2);
      const versions = await plane.admin('GET', '/api/servers/alpha/tools/add/versions');
      expect(versions.body.versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);
      const rolled = await plane.admin('POST', '/api/servers/alpha/tools/add/rollback', {
        version: 1,
      });
      expect(rolled.body).toMatchObject({ version: 3, code: TOOL.code });
      expect((await plane.admin('GET', '/api/servers/alpha/tools')).body.tools).toHaveLength(1);
    });

    it('saves title, annotations and JSON Schema 2020-12 schemas as written, and refuses bad ones', async () => {
      expect((await plane.admin('POST', '/api/servers', { subdomain: 'described' })).status).toBe(
        201,
      );
      const inputSchema = {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        $defs: { tag: { type: 'string', minLength: 1 } },
        properties: { tags: { type: 'array', items: { $ref: '#/$defs/tag' } } },
        required: ['tags'],
        additionalProperties: false,
      };
      const outputSchema = { type: 'object', properties: { count: { type: 'integer' } } };
      const definition = {
        title: 'Count tags',
        description: 'Counts tags.',
        annotations: { readOnlyHint: true, openWorldHint: false },
        inputSchema,
        outputSchema,
        code: 'return { count: params.tags.length };',
      };
      const saved = await plane.admin('PUT', '/api/servers/described/tools/count', definition);
      expect(saved.status).toBe(201);
      expect(saved.body).toMatchObject({ ...definition, parameters: [], version: 1 });
      const read = await plane.admin('GET', '/api/servers/described/tools/count');
      expect(JSON.stringify(read.body.inputSchema)).toBe(JSON.stringify(inputSchema));
      expect(read.body).toMatchObject(definition);
      const run = await plane.admin('POST', '/api/servers/described/tools/count/invoke', {
        params: { tags: ['a', 'b'] },
      });
      expect(run.body).toMatchObject({ ok: true, result: { count: 2 } });
      const refused = await plane.admin('POST', '/api/servers/described/tools/count/invoke', {
        params: { tags: ['a', ''] },
      });
      expect(refused.body.error).toEqual({
        code: 'ERR_INVALID_ARGUMENT',
        message:
          'arguments do not match inputSchema: /tags/1 must NOT have fewer than 1 characters',
      });

      const bad = await plane.admin('PUT', '/api/servers/described/tools/count', {
        ...definition,
        inputSchema: { ...inputSchema, properties: { tags: { type: 'array', itemz: {} } } },
      });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatchObject({
        code: 'ERR_VALIDATION',
        details: [
          { path: 'inputSchema.properties.tags.itemz', message: expect.stringContaining('itemz') },
        ],
      });
      const both = await plane.admin('PUT', '/api/servers/described/tools/count', {
        ...definition,
        parameters: [{ name: 'tags', type: 'array', required: true }],
      });
      expect(both.status).toBe(400);
      expect(both.body.error.details[0].path).toBe('inputSchema');
      expect((await plane.admin('GET', '/api/servers/described/tools/count')).body.version).toBe(1);

      const document = await (await loopbackFetch(`${plane.adminUrl}/api/openapi.json`)).json();
      const body =
        document.paths['/api/servers/{sub}/tools/{name}'].put.requestBody.content[
          'application/json'
        ].schema;
      expect(body.properties.inputSchema).toMatchObject({ type: 'object' });
      expect(body.properties.outputSchema).toMatchObject({ type: 'object' });
      expect(body.properties.title).toMatchObject({ type: 'string' });
      expect(Object.keys(body.properties.annotations.properties).sort()).toEqual([
        'destructiveHint',
        'idempotentHint',
        'openWorldHint',
        'readOnlyHint',
        'title',
      ]);
      expect((await plane.admin('DELETE', '/api/servers/described')).status).toBe(204);
    });

    it('keeps secrets write-only', async () => {
      const put = await plane.admin('PUT', '/api/servers/alpha/secrets/API_KEY', {
        value: 'super-secret-value-123',
      });
      expect(put.status).toBe(200);
      expect(put.body).toEqual({ name: 'API_KEY', updatedAt: expect.any(String) });
      expect(
        (await plane.admin('PUT', '/api/servers/alpha/secrets/lower', { value: 'x' })).status,
      ).toBe(400);
      expect(
        (await plane.admin('PUT', '/api/servers/alpha/secrets/EMPTY', { value: '' })).status,
      ).toBe(400);
      const everything = JSON.stringify([
        await plane.admin('GET', '/api/servers/alpha/secrets'),
        await plane.admin('GET', '/api/servers/alpha'),
        await plane.admin('GET', '/api/servers/alpha/tools'),
        await plane.admin('GET', '/api/servers'),
      ]);
      expect(everything).toContain('API_KEY');
      expect(everything).not.toContain('super-secret-value-123');
    });

    it('runs a tool as a client would, and logs the invocation', async () => {
      const run = await plane.admin('POST', '/api/servers/alpha/tools/add/invoke', {
        params: { a: 2, b: 3 },
      });
      expect(run.status).toBe(200);
      expect(run.body).toMatchObject({
        ok: true,
        result: 5,
        logs: [{ level: 'log', text: 'adding' }],
        durationMs: expect.any(Number),
        version: 3,
      });
      const wrong = await plane.admin('POST', '/api/servers/alpha/tools/add/invoke', {
        params: { a: 'two' },
      });
      expect(wrong.body).toMatchObject({
        ok: false,
        error: {
          code: 'ERR_INVALID_ARGUMENT',
          message: 'parameter "a" must be of type number, got string',
        },
      });
      expect((await plane.admin('POST', '/api/servers/alpha/tools/nope/invoke', {})).status).toBe(
        404,
      );
      const log = await plane.admin('GET', '/api/invocations?server=alpha&tool=add&limit=5');
      expect(log.body.invocations[0]).toMatchObject({
        server: 'alpha',
        tool: 'add',
        version: 3,
        // Who ran it: the bootstrap owner's token.
        caller: { kind: 'admin', actor: 'admin token' },
      });
      expect((await plane.admin('GET', '/api/invocations?limit=0')).status).toBe(400);
    });

    it("merges limits tool → server → default; a tool may only lower its server's", async () => {
      const sleepy = {
        description: 'sleeps',
        code: 'await new Promise((r) => setTimeout(r, 1500)); return "awake";',
      };
      expect((await plane.admin('PUT', '/api/servers/alpha/tools/sleepy', sleepy)).status).toBe(
        201,
      );
      const limited = await plane.admin('PATCH', '/api/servers/alpha/settings', {
        limits: { timeoutMs: 400 },
      });
      expect(limited.body.limits).toEqual({ timeoutMs: 400 });
      const timedOut = await plane.admin('POST', '/api/servers/alpha/tools/sleepy/invoke', {});
      expect(timedOut.body.error).toMatchObject({
        code: 'ERR_TOOL_TIMEOUT',
        message: expect.stringContaining('400 ms'),
      });
      // The server's limit is the tool's ceiling: a save above it is refused and changes nothing.
      const above = await plane.admin('PUT', '/api/servers/alpha/tools/sleepy', {
        ...sleepy,
        limits: { timeoutMs: 5000 },
      });
      expect(above.status).toBe(422);
      expect(above.body.error.code).toBe('ERR_LIMIT_ABOVE_CEILING');
      expect((await plane.admin('GET', '/api/servers/alpha/tools/sleepy')).body.version).toBe(1);
      expect(
        (await plane.admin('PATCH', '/api/servers/alpha/settings', { limits: { timeoutMs: 5000 } }))
          .status,
      ).toBe(200);
      expect(
        (await plane.admin('POST', '/api/servers/alpha/tools/sleepy/invoke', {})).body,
      ).toMatchObject({ ok: true, result: 'awake' });
      const own = await plane.admin('PUT', '/api/servers/alpha/tools/sleepy', {
        ...sleepy,
        limits: { timeoutMs: 300 },
      });
      expect(own.status).toBe(200);
      expect(
        (await plane.admin('POST', '/api/servers/alpha/tools/sleepy/invoke', {})).body.error,
      ).toMatchObject({ code: 'ERR_TOOL_TIMEOUT', message: expect.stringContaining('300 ms') });
      await plane.admin('PATCH', '/api/servers/alpha/settings', { limits: { timeoutMs: 400 } });
      expect(
        (await plane.admin('PATCH', '/api/servers/alpha/settings', { limits: { timeoutMs: -5 } }))
          .status,
      ).toBe(400);
      expect((await plane.admin('DELETE', '/api/servers/alpha/tools/sleepy')).status).toBe(204);
    });

    it('shows and resizes pools within the caps', async () => {
      // The server's shared pools (the default isolation unit).
      const resized = await plane.admin('PUT', '/api/pools/alpha', { minWarm: 1, maxSize: 3 });
      expect(resized.status).toBe(200);
      expect(resized.body).toMatchObject({ unit: 'alpha', minWarm: 1, maxSize: 3 });
      // A tool's own pool (used under isolation "tool" or when the tool is strict).
      const own = await plane.admin('PUT', '/api/pools/alpha/add', { minWarm: 0, maxSize: 2 });
      expect(own.body).toMatchObject({ unit: 'alpha/add', minWarm: 0, maxSize: 2 });
      expect(
        (await plane.admin('PUT', '/api/pools/alpha', { minWarm: 4, maxSize: 3 })).status,
      ).toBe(400);
      const tooBig = await plane.admin('PUT', '/api/pools/alpha', { minWarm: 0, maxSize: 1000 });
      expect(tooBig.status).toBe(400);
      expect(tooBig.body.error.message).toMatch(/cap/);
      expect(
        (await plane.admin('PUT', '/api/pools/alpha/nope', { minWarm: 0, maxSize: 1 })).status,
      ).toBe(404);
      expect(
        (await plane.admin('PUT', '/api/pools/nobody', { minWarm: 0, maxSize: 1 })).status,
      ).toBe(404);
      const run = await plane.admin('POST', '/api/servers/alpha/tools/add/invoke', {
        params: { a: 1 },
      });
      expect(run.body.ok).toBe(true);
      const pools = await plane.admin('GET', '/api/pools');
      expect(
        pools.body.pools.find(
          (p: { server?: string; tool?: string }) => p.server === 'alpha' && !p.tool,
        ),
      ).toMatchObject({ minWarm: 1, maxSize: 3, shape: expect.stringMatching(/-runc$/) });
      expect(pools.body.budget).toMatchObject({
        maxTotal: expect.any(Number),
        used: expect.any(Number),
        starts: { concurrency: expect.any(Number) },
      });
      expect(
        pools.body.servers.find((s: { server: string }) => s.server === 'alpha'),
      ).toMatchObject({
        containers: { total: expect.any(Number) },
        starts: { lastMinute: expect.any(Number), lastHour: expect.any(Number) },
        evictions: { lastMinute: 0, lastHour: 0 },
        share: { ceiling: expect.any(Number), maxContainers: null },
      });
      expect((await plane.admin('POST', '/api/pools/alpha/drain')).body).toEqual({
        drained: 'alpha',
      });
      expect((await plane.admin('POST', '/api/pools/alpha/add/drain')).status).toBe(200);
    });

    it('describes itself in OpenAPI', async () => {
      const response = await loopbackFetch(`${plane.adminUrl}/api/openapi.json`);
      const document = await response.json();
      expect(document.openapi).toBe('3.1.0');
      const errorCodes =
        document.paths['/api/servers'].get.responses['4XX'].content['application/json'].schema
          .properties.error.properties.code.enum;
      expect(errorCodes).toContain('ERR_METHOD_NOT_ALLOWED');
      expect(Object.keys(document.paths)).toContain('/api/servers/{sub}/tools/{name}');
      expect(
        document.paths['/api/servers/{sub}/tools/{name}'].put.requestBody.content[
          'application/json'
        ].schema.properties.code,
      ).toBeDefined();
    });

    it('keeps everything across a restart', async () => {
      await plane.restart();
      expect((await plane.admin('GET', '/api/servers/alpha')).body).toMatchObject({
        name: 'Alpha',
        toolCount: 1,
      });
      expect((await plane.admin('GET', '/api/servers/alpha/secrets')).body.secrets).toEqual([
        { name: 'API_KEY', updatedAt: expect.any(String) },
      ]);
      const run = await plane.admin('POST', '/api/servers/alpha/tools/add/invoke', {
        params: { a: 1 },
      });
      expect(run.body).toMatchObject({ ok: true, result: 1, version: 3 });
      expect(
        (await plane.admin('GET', '/api/pools')).body.pools.find(
          (p: { server?: string; tool?: string }) => p.server === 'alpha' && !p.tool,
        ),
      ).toMatchObject({ maxSize: 3 });
    });

    it('deletes secrets, tools and servers', async () => {
      expect((await plane.admin('DELETE', '/api/servers/alpha/secrets/API_KEY')).status).toBe(204);
      expect((await plane.admin('DELETE', '/api/servers/alpha/secrets/API_KEY')).status).toBe(404);
      expect((await plane.admin('DELETE', '/api/servers/alpha/tools/add')).status).toBe(204);
      expect((await plane.admin('GET', '/api/servers/alpha/tools/add')).status).toBe(404);
      expect((await plane.admin('DELETE', '/api/servers/alpha')).status).toBe(204);
      expect((await plane.admin('GET', '/api/servers/alpha')).status).toBe(404);
      const mcp = await loopbackFetch(plane.mcpUrl('alpha'), { method: 'POST', body: '{}' });
      expect(mcp.status).toBe(404);
    });
  });
}
