/**
 * One MCP session served by two control planes on one PostgreSQL, every
 * request of the official SDK client alternating between them (a fetch that
 * swaps the port on each call, the strictest round robin): the session's
 * state, its server→client requests and their answers, cancellation,
 * resumed streams, notifications and its end all cross replicas.
 * (test/replicas/ runs the same behind nginx, with replicas as processes.)
 */
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgresServer, postgresUrl } from '../../store/store-targets.js';
import { loopbackFetch } from '../../support/loopback-fetch.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';

const database = `mcphost_shared_sessions_${randomBytes(6).toString('hex')}`;
let first: TestControlPlane;
let second: TestControlPlane;
/** Which replica served each request, in order. */
const served: string[] = [];

/** A fetch that sends each request to the other replica than the last. */
function alternatingFetch(): typeof fetch {
  let next = 0;
  return ((input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const plane = [first, second][next]!;
    next = 1 - next;
    const url = new URL(String(input instanceof Request ? input.url : input));
    url.port = String(plane.port);
    served.push(`${plane === first ? 'A' : 'B'} ${init?.method ?? 'GET'}`);
    return loopbackFetch(url, init);
  }) as typeof fetch;
}

async function connect(capabilities: Record<string, unknown> = {}) {
  const transport = new StreamableHTTPClientTransport(first.mcpUrl('shared'), {
    fetch: alternatingFetch(),
  });
  const client = new Client({ name: 'alternating', version: '1.0.0' }, { capabilities });
  await client.connect(transport);
  return { client, transport };
}

const tool = (code: string) => ({
  description: 'test tool',
  parameters: code.includes('params.text')
    ? [{ name: 'text', type: 'string', required: true }]
    : [],
  code,
});

beforeAll(async () => {
  await onPostgresServer(`CREATE DATABASE ${database}`);
  const env = { DATABASE_URL: postgresUrl(database), MCP_SSE_RETRY_MS: '200' };
  first = await startTestControlPlane(env);
  second = await startTestControlPlane(env);
  expect((await first.admin('POST', '/api/servers', { subdomain: 'shared' })).status).toBe(201);
  for (const [name, code] of [
    ['echo', "console.log('echoing', params.text); return params.text;"],
    [
      'ask',
      "const a = await sdk.elicit('name?', { type: 'object', properties: { name: { type: 'string' } } }); return a.content.name;",
    ],
    ['sleepy', 'await new Promise((r) => setTimeout(r, 20000)); return "late";'],
    [
      'polling',
      "sdk.closeStream(); await new Promise((r) => setTimeout(r, 400)); console.log('after the cut'); return 'resumed';",
    ],
  ]) {
    const saved = await first.admin('PUT', `/api/servers/shared/tools/${name}`, tool(code!));
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
  }
  // Both replicas serve the tools before the test begins (the change feed is quick).
  for (let tries = 0; tries < 50; tries += 1) {
    if ((await second.admin('GET', '/api/servers/shared/tools')).body.length === 4) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}, 180_000);

afterAll(async () => {
  await Promise.all([first?.close(), second?.close()]);
  await onPostgresServer(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
});

describe('a session served by two replicas in turn', () => {
  it('initializes, lists, logs and calls on either replica', async () => {
    const { client } = await connect();
    const logs: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logs.push(String((n.params.data as { message?: string })?.message ?? n.params.data));
    });
    await client.setLoggingLevel('info');
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual([
      'ask',
      'echo',
      'polling',
      'sleepy',
    ]);
    for (let i = 0; i < 10; i += 1) {
      const result = await client.callTool({ name: 'echo', arguments: { text: `hi ${i}` } });
      expect(result.structuredContent ?? result.content).toBeDefined();
      expect(JSON.stringify(result.content)).toContain(`hi ${i}`);
    }
    expect(logs.filter((line) => line.includes('echoing')).length).toBe(10);
    expect(served.some((s) => s.startsWith('A'))).toBe(true);
    expect(served.some((s) => s.startsWith('B'))).toBe(true);
    await client.close();
  }, 60_000);

  it('delivers an elicitation answer to the replica running the call', async () => {
    const { client } = await connect({ elicitation: { form: {} } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({
      action: 'accept',
      content: { name: 'Ada' },
    }));
    const result = await client.callTool({ name: 'ask', arguments: {} });
    expect(JSON.stringify(result.content)).toContain('Ada');
    await client.close();
  }, 60_000);

  it('stops a call on the replica running it when the other receives the cancellation', async () => {
    const { client } = await connect();
    const abort = new AbortController();
    const call = client.callTool({ name: 'sleepy', arguments: {} }, undefined, {
      signal: abort.signal,
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    abort.abort('enough');
    await expect(call).rejects.toThrow();
    await expect
      .poll(
        async () => {
          for (const plane of [first, second]) {
            const listed = await plane.admin('GET', '/api/invocations?server=shared&tool=sleepy');
            const rows = listed.body.invocations as { errorCode?: string }[];
            if (rows.length > 0) return rows[0]!.errorCode;
          }
          return undefined;
        },
        { timeout: 8000 },
      )
      .toBe('ERR_CANCELLED');
    await client.close();
  }, 60_000);

  it('resumes a cut stream on the other replica', async () => {
    const { client } = await connect();
    const logs: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logs.push(JSON.stringify(n.params.data));
    });
    const result = await client.callTool({ name: 'polling', arguments: {} });
    expect(JSON.stringify(result.content)).toContain('resumed');
    expect(logs.some((line) => line.includes('after the cut'))).toBe(true);
    await client.close();
  }, 60_000);

  it('tells the client of a tool list changed through either replica', async () => {
    const { client } = await connect();
    let changes = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes += 1;
    });
    await client.listTools();
    // The GET stream opens once initialized; give it a moment to be held by one replica.
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const [index, plane] of [first, second].entries()) {
      const saved = await plane.admin(
        'PUT',
        `/api/servers/shared/tools/extra${index}`,
        tool('return 1;'),
      );
      expect(saved.status).toBe(201);
      await expect.poll(() => changes, { timeout: 5000 }).toBeGreaterThan(index);
    }
    await client.close();
  }, 60_000);

  it('ends the session on every replica at DELETE', async () => {
    const { client, transport } = await connect();
    await client.listTools();
    await client.listTools();
    const sessionId = transport.sessionId!;
    await transport.terminateSession();
    for (const plane of [first, second]) {
      const response = await loopbackFetch(plane.mcpUrl('shared'), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': sessionId,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
      });
      await expect.poll(() => response.status).toBe(404);
    }
  }, 60_000);
});
