/**
 * What hosted servers share at `/mcp`, held apart, through the official SDK
 * client against a real control plane: sessions (a flood on one server
 * leaves another server's sessions and running calls alone), request rate
 * (429 with Retry-After for one caller on one server only), browser origins
 * (403 unless listed), and the Host header (never echoed).
 */
import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INITIALIZE_BODY, postInitialize } from '../../support/mcp-requests.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { busyContainers, callsInFlight } from '../../support/busy-containers.js';

let plane: TestControlPlane;
const clients: Client[] = [];
const agents: Agent[] = [];

/**
 * fetch from one loopback address (127.0.0.x): a distinct client IP, so a
 * distinct anonymous caller. Every host name resolves to 127.0.0.1.
 */
function fetchFrom(localAddress: string): typeof fetch {
  const agent = new Agent({
    localAddress,
    connect: {
      lookup: (_hostname, options, callback) => {
        if ((options as { all?: boolean }).all)
          callback(null, [{ address: '127.0.0.1', family: 4 }]);
        else (callback as (e: null, a: string, f: number) => void)(null, '127.0.0.1', 4);
      },
    },
  });
  agents.push(agent);
  return ((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
    undiciFetch(
      input as never,
      { ...(init as object), dispatcher: agent } as never,
    )) as unknown as typeof fetch;
}

const fromFirst = fetchFrom('127.0.0.1');
const fromSecond = fetchFrom('127.0.0.2');

async function connect(
  subdomain: string,
  from: typeof fetch = fromFirst,
  headers: Record<string, string> = {},
): Promise<Client> {
  const client = new Client({ name: 'mcphost-tenancy-test', version: '1.0.0' });
  clients.push(client);
  await client.connect(
    new StreamableHTTPClientTransport(plane.mcpUrl(subdomain), {
      fetch: from,
      requestInit: { headers },
    }),
  );
  return client;
}

function text(result: CallToolResult): string {
  const block = result.content[0];
  return block?.type === 'text' ? block.text : '';
}

/** A raw request with a Host header of our choosing (fetch may not set Host). */
function rawRequest(host: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: plane.port, path, method: 'POST', headers: { host } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(INITIALIZE_BODY);
  });
}

beforeAll(async () => {
  plane = await startTestControlPlane({
    MCP_MAX_SESSIONS: '30',
    MCP_MAX_SESSIONS_PER_SERVER: '20',
    MCP_MAX_SESSIONS_PER_CALLER: '3',
    RATE_LIMIT_PER_MINUTE: '60000',
    RATE_LIMIT_BURST: '1000',
    POOL_MAX_SIZE: '4',
  });
  for (const subdomain of ['public', 'quiet', 'limited', 'browser']) {
    expect((await plane.admin('POST', '/api/servers', { subdomain })).status).toBe(201);
  }
  for (const subdomain of ['public', 'quiet']) {
    const saved = await plane.admin('PUT', `/api/servers/${subdomain}/tools/nap`, {
      description: 'Sleeps for ms milliseconds.',
      parameters: [{ name: 'ms', type: 'number', required: true }],
      code: "await new Promise((r) => setTimeout(r, params.ms)); return 'slept';",
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
  }
  const limited = await plane.admin('PATCH', '/api/servers/limited/settings', {
    rateLimit: { perMinute: 60, burst: 6 },
  });
  expect(limited.status, JSON.stringify(limited.body)).toBe(200);
  const browser = await plane.admin('PATCH', '/api/servers/browser/settings', {
    allowedOrigins: ['https://app.example'],
  });
  expect(browser.status, JSON.stringify(browser.body)).toBe(200);
}, 180_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await plane?.close();
  await Promise.all(agents.map((a) => a.close()));
});

describe('MCP sessions, partitioned by server and caller', () => {
  it('a session flood on one server leaves another server’s session and running call alone', async () => {
    const quiet = await connect('quiet');
    const running = quiet.callTool({ name: 'nap', arguments: { ms: 3000 } });
    // The call is in its container (a cold start may come first).
    await expect.poll(() => busyContainers(plane, 'quiet'), { timeout: 20_000 }).toBe(1);
    // 100 anonymous sessions on "public", more than MCP_MAX_SESSIONS in all.
    const statuses: number[] = [];
    for (let batch = 0; batch < 5; batch += 1) {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => postInitialize(plane.mcpUrl('public'))),
      );
      for (const answer of answers) {
        statuses.push(answer.status);
        await answer.body?.cancel();
      }
    }
    // The flooder's idle sessions made room for its own new ones.
    expect(new Set(statuses)).toEqual(new Set([200]));
    const result = (await running) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(text(result)).toBe('slept');
    // Still open: the quiet server's session was never evicted.
    expect((await quiet.listTools()).tools.map((t) => t.name)).toEqual(['nap']);
  }, 60_000);

  it('refuses a caller’s new session (429) while its sessions all run calls, and never cancels them', async () => {
    const mine = await Promise.all([connect('public'), connect('public'), connect('public')]);
    const calls = mine.map((client) => client.callTool({ name: 'nap', arguments: { ms: 2500 } }));
    // Every session's call has reached the pools: running, or waiting for a container.
    await expect.poll(() => callsInFlight(plane, 'public'), { timeout: 20_000 }).toBe(3);
    const refused = await postInitialize(plane.mcpUrl('public'));
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // The body was read: the refusal answers the initialize by its id.
    expect(await refused.json()).toMatchObject({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32000, data: { code: 'ERR_SESSION_QUOTA' } },
    });
    // Another caller (another client address) still gets a session on this server.
    const other = await connect('public', fromSecond);
    expect((await other.listTools()).tools).toHaveLength(1);
    for (const result of (await Promise.all(calls)) as CallToolResult[]) {
      expect(result.isError).toBeFalsy();
      expect(text(result)).toBe('slept');
    }
    // Idle again: the next session replaces one of them.
    expect((await postInitialize(plane.mcpUrl('public'))).status).toBe(200);
  }, 60_000);
});

describe('rate limits per server and caller', () => {
  it('answers 429 with Retry-After to one caller on one server only', async () => {
    let refusal: unknown;
    try {
      const client = await connect('limited');
      for (let i = 0; i < 10 && refusal === undefined; i += 1) await client.listTools();
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(StreamableHTTPError);
    expect((refusal as StreamableHTTPError).code).toBe(429);

    const raw = await postInitialize(plane.mcpUrl('limited'));
    expect(raw.status).toBe(429);
    expect(Number(raw.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const body = await raw.json();
    expect(body).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, data: { code: 'ERR_RATE_LIMITED' } },
    });
    expect(body.error.message).toMatch(/60 requests a minute/);

    // Another caller on the same server, and the same caller on another server: unaffected.
    const other = await connect('limited', fromSecond);
    expect((await other.listTools()).tools).toEqual([]);
    const elsewhere = await connect('quiet');
    expect((await elsewhere.listTools()).tools).toHaveLength(1);

    const metrics = await fromFirst(`${plane.adminUrl}/metrics`, {
      headers: { authorization: 'Bearer test-admin-token-0123456789abcdef' },
    });
    expect(await metrics.text()).toMatch(
      /mcphost_mcp_refused_total\{server="limited",reason="rate"\} [1-9]/,
    );
  });
});

describe('browser origins', () => {
  it('refuses an Origin the server does not list (403, JSON-RPC error)', async () => {
    const refused = await connect('browser', fromFirst, {
      origin: 'https://evil.example',
    }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StreamableHTTPError);
    expect((refused as StreamableHTTPError).code).toBe(403);

    for (const subdomain of ['browser', 'quiet']) {
      const raw = await postInitialize(plane.mcpUrl(subdomain), { origin: 'https://evil.example' });
      expect(raw.status).toBe(403);
      expect(raw.headers.get('access-control-allow-origin')).toBeNull();
      expect(await raw.json()).toMatchObject({
        jsonrpc: '2.0',
        error: { code: -32000, data: { code: 'ERR_FORBIDDEN' } },
      });
    }
    // Look-alikes of the allowed origin are other origins.
    for (const origin of ['https://app.example.evil', 'http://app.example', 'null']) {
      expect((await postInitialize(plane.mcpUrl('browser'), { origin })).status).toBe(403);
    }
  });

  it('serves a listed Origin with CORS headers, and answers its preflight', async () => {
    const client = await connect('browser', fromFirst, { origin: 'https://app.example' });
    expect((await client.listTools()).tools).toEqual([]);

    const raw = await postInitialize(plane.mcpUrl('browser'), { origin: 'https://app.example' });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(raw.headers.get('access-control-expose-headers')).toContain('mcp-session-id');
    expect(raw.headers.get('vary')).toContain('Origin');
    await raw.body?.cancel();

    const preflight = await fromFirst(plane.mcpUrl('browser'), {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, mcp-session-id, authorization',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example');
    const allowed = preflight.headers.get('access-control-allow-headers') ?? '';
    for (const header of [
      'authorization',
      'x-api-key',
      'content-type',
      'mcp-session-id',
      'mcp-protocol-version',
      'last-event-id',
    ]) {
      expect(allowed).toContain(header);
    }
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');

    const foreign = await fromFirst(plane.mcpUrl('browser'), {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('leaves requests without Origin alone', async () => {
    expect((await postInitialize(plane.mcpUrl('browser'))).status).toBe(200);
  });
});

describe('the Host header', () => {
  it('is never echoed in an error body', async () => {
    for (const host of [
      `evil@rt.localhost:${plane.port}`,
      `x<script>alert(1)</script>.localhost:${plane.port}`,
    ]) {
      const answer = await rawRequest(host, '/mcp');
      expect(answer.status).toBe(404);
      expect(answer.body).not.toMatch(/evil|script|alert/);
      expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'ERR_NOT_FOUND' } });
    }
  });
});
