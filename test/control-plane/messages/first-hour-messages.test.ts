/**
 * The messages a new operator meets in a first hour with tool code, word for
 * word where they are produced: saved tools run in real runner containers,
 * their calls brokered by a real control plane, read back through the admin
 * API, the official MCP client and the invocation log.
 *
 * - A refused private address names the server's own setting (the
 *   dashboard's "Private hosts its tools may reach", which applies at once)
 *   before the host-wide EGRESS_ALLOW; adding it there lets the next call through.
 * - An uncaught refusal of sdk.http, fetch or sdk.db fails the call with the
 *   broker's code, not ERR_TOOL_ERROR; a code tool code sets itself does not.
 * - `require`, an `import` statement and `import()` say what tool code has instead.
 */
import { networkInterfaces } from 'node:os';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODE_META_KEY } from '../../../control-plane/mcp/tool-result.js';
import { testConnection } from '../../broker/database-targets.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { startLoopbackServer, type LoopbackServer } from '../../support/loopback-server.js';
import { connectSdkSession, type SdkSession } from '../../support/sdk-session.js';

const SUB = 'first';

/** What tool code has instead of modules (src/tool-code/instead-of-node.ts), as an operator reads it. */
const INSTEAD_OF_MODULES =
  'Tool code is the body of an async function, not a module: it has no require, import or npm packages. ' +
  'What it may use is already in scope: sdk.http or fetch for HTTP, sdk.db for PostgreSQL and MySQL, ' +
  'sdk.lodash for lodash, and the web platform (URL, TextEncoder, crypto, …); see docs/tool-code.md.';

/** How a refusal of `entry` tells the operator to allow it, on server `first`. */
const allowAdvice = (entry: string) =>
  `. To let this server's tools reach it, add ${entry} to "Private hosts its tools may reach" in its settings ` +
  `(dashboard: Settings, Sharing this host; API: egressAllow in PATCH /api/servers/${SUB}/settings), ` +
  'which takes effect at once; or, for every server, add it to EGRESS_ALLOW and restart mcphost.';

const ownIp = Object.values(networkInterfaces())
  .flatMap((list) => list ?? [])
  .find((entry) => entry.family === 'IPv4' && !entry.internal)?.address;

let plane: TestControlPlane;
let hostService: LoopbackServer; // bound to 0.0.0.0: reachable at this host's interface address
let session: SdkSession;

async function saveTool(name: string, code: string): Promise<void> {
  const saved = await plane.admin('PUT', `/api/servers/${SUB}/tools/${name}`, {
    description: name,
    code,
    parameters: [],
    secrets: [],
  });
  expect(saved.status, JSON.stringify(saved.body)).toBeLessThan(300);
}

async function testRun(name: string): Promise<any> {
  return (await plane.admin('POST', `/api/servers/${SUB}/tools/${name}/invoke`, { params: {} }))
    .body;
}

async function mcpCall(name: string): Promise<CallToolResult> {
  return (await session.client.callTool({ name, arguments: {} })) as CallToolResult;
}

/** The newest invocation log row of tool `name` (written behind the call). */
async function loggedError(name: string): Promise<{ code: unknown; message: unknown }> {
  let row: any;
  await expect
    .poll(async () => {
      const log = await plane.admin('GET', `/api/invocations?server=${SUB}&tool=${name}&limit=1`);
      row = log.body.invocations?.[0];
      return row !== undefined;
    })
    .toBe(true);
  return { code: row.errorCode, message: row.errorMessage };
}

beforeAll(async () => {
  [plane, hostService] = await Promise.all([
    startTestControlPlane(),
    startLoopbackServer((_request, response) => response.end('host service'), { host: '0.0.0.0' }),
  ]);
  expect((await plane.admin('POST', '/api/servers', { subdomain: SUB })).status).toBe(201);
  session = await connectSdkSession(plane.mcpUrl(SUB));
}, 180_000);

afterAll(async () => {
  await session?.client.close();
  await Promise.all([plane?.close(), hostService?.close()]);
});

describe('a refused private address', () => {
  const refusal =
    'egress to 10.1.2.3 is not allowed: 10.1.2.3 is a private address (RFC 1918)' +
    allowAdvice('10.1.2.3:8080');

  it('names the server’s own setting, then EGRESS_ALLOW, and keeps ERR_EGRESS_DENIED uncaught', async () => {
    await saveTool(
      'private_http',
      "return (await sdk.http({ url: 'http://10.1.2.3:8080/' })).body();",
    );
    expect(await testRun('private_http')).toMatchObject({
      ok: false,
      error: { code: 'ERR_EGRESS_DENIED', message: refusal },
    });
    const result = await mcpCall('private_http');
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: refusal }]);
    expect(result._meta?.[ERROR_CODE_META_KEY]).toBe('ERR_EGRESS_DENIED');
    expect(await loggedError('private_http')).toEqual({
      code: 'ERR_EGRESS_DENIED',
      message: refusal,
    });
  });

  it('is the same through fetch, behind "fetch failed: "', async () => {
    await saveTool('private_fetch', "return (await fetch('http://10.1.2.3:8080/')).text();");
    expect(await testRun('private_fetch')).toMatchObject({
      ok: false,
      error: { code: 'ERR_EGRESS_DENIED', message: `fetch failed: ${refusal}` },
    });
  });

  it("is allowed by the server's setting at once, without a restart", async () => {
    expect(ownIp).toBeDefined();
    const url = `http://${ownIp}:${hostService.port}/`;
    await saveTool('host_service', `return (await sdk.http({ url: '${url}' })).body();`);
    const refused = await testRun('host_service');
    expect(refused.error.code).toBe('ERR_EGRESS_DENIED');
    expect(refused.error.message).toMatch(
      new RegExp(`^egress to ${ownIp} is not allowed: ${ownIp} is `),
    );
    expect(refused.error.message.endsWith(allowAdvice(`${ownIp}:${hostService.port}`))).toBe(true);
    expect(hostService.requests).toEqual([]);

    const allowed = await plane.admin('PATCH', `/api/servers/${SUB}/settings`, {
      egressAllow: [`${ownIp}:${hostService.port}`],
    });
    expect(allowed.status).toBe(200);
    expect(await testRun('host_service')).toMatchObject({ ok: true, result: 'host service' });
    await plane.admin('PATCH', `/api/servers/${SUB}/settings`, { egressAllow: [] });
  });
});

describe('the code of an uncaught sdk failure', () => {
  it('is ERR_DB_FAILED for a statement the database refuses, with its message', async () => {
    const connection = JSON.stringify(testConnection('pg'));
    await saveTool(
      'bad_query',
      `return (await sdk.db({ type: 'pg', connection: ${connection} }).query('SELECT * FROM first_hour_missing_table', [])).rows;`,
    );
    const run = await testRun('bad_query');
    expect(run).toMatchObject({ ok: false, error: { code: 'ERR_DB_FAILED' } });
    expect(run.error.message).toContain('relation "first_hour_missing_table" does not exist');
    const result = await mcpCall('bad_query');
    expect(result._meta?.[ERROR_CODE_META_KEY]).toBe('ERR_DB_FAILED');
    expect((await loggedError('bad_query')).code).toBe('ERR_DB_FAILED');
  });

  it('is not taken from a code tool code sets on an error of its own', async () => {
    await saveTool(
      'forged_code',
      "const error = new Error('egress to 10.1.2.3 is not allowed'); error.code = 'ERR_EGRESS_DENIED'; throw error;",
    );
    expect(await testRun('forged_code')).toMatchObject({
      ok: false,
      error: { code: 'ERR_TOOL_ERROR', message: 'egress to 10.1.2.3 is not allowed' },
    });
  });

  it('is not lent to an error of its own by a refusal the tool caught', async () => {
    await saveTool(
      'borrowed_code',
      [
        'let caught;',
        "try { await sdk.http({ url: 'http://10.1.2.3:8080/' }); } catch (error) { caught = error; }",
        "if (caught.code !== 'ERR_EGRESS_DENIED') return 'not refused';",
        "const mine = new Error('my own words', { cause: caught });",
        'mine.code = caught.code;',
        'throw mine;',
      ].join('\n'),
    );
    expect(await testRun('borrowed_code')).toMatchObject({
      ok: false,
      error: { code: 'ERR_TOOL_ERROR', message: 'my own words' },
    });
  });

  it('stays the broker’s when the tool rethrows the refusal it caught, whatever `code` says', async () => {
    await saveTool(
      'rethrown',
      [
        'try {',
        "  await sdk.http({ url: 'http://10.1.2.3:8080/' });",
        '} catch (error) {',
        "  error.code = 'ERR_INTERNAL';",
        '  throw error;',
        '}',
      ].join('\n'),
    );
    expect(await testRun('rethrown')).toMatchObject({
      ok: false,
      error: { code: 'ERR_EGRESS_DENIED' },
    });
  });
});

describe('what tool code has instead of Node', () => {
  it('says so when tool code calls require', async () => {
    await saveTool('uses_require', "const _ = require('lodash');\nreturn _.chunk([1, 2, 3], 2);");
    expect(await testRun('uses_require')).toMatchObject({
      ok: false,
      error: {
        code: 'ERR_TOOL_ERROR',
        message: `require is not defined. ${INSTEAD_OF_MODULES}`,
        line: 1,
        column: 11,
      },
    });
    const result = await mcpCall('uses_require');
    expect(result.content).toEqual([
      { type: 'text', text: `require is not defined. ${INSTEAD_OF_MODULES}` },
    ]);
  });

  it('says so when an import statement is saved, and nothing is saved', async () => {
    const refused = await plane.admin('PUT', `/api/servers/${SUB}/tools/uses_import`, {
      description: 'imports lodash',
      code: "import _ from 'lodash';\nreturn _.chunk([1, 2, 3], 2);",
      parameters: [],
      secrets: [],
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toEqual({
      code: 'ERR_TOOL_SYNTAX',
      message: `syntax error at line 1, column 1: Cannot use import statement outside a module. ${INSTEAD_OF_MODULES}`,
      details: {
        message: `Cannot use import statement outside a module. ${INSTEAD_OF_MODULES}`,
        line: 1,
        column: 1,
      },
    });
    expect((await plane.admin('GET', `/api/servers/${SUB}/tools/uses_import`)).status).toBe(404);
  });

  it('says so when tool code calls import()', async () => {
    await saveTool(
      'uses_dynamic_import',
      "const fs = await import('node:fs');\nreturn fs.readdirSync('/');",
    );
    expect(await testRun('uses_dynamic_import')).toMatchObject({
      ok: false,
      error: {
        code: 'ERR_TOOL_ERROR',
        message: `import() is not available in tool code (asked for node:fs). ${INSTEAD_OF_MODULES}`,
      },
    });
  });
});
