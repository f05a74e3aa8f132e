/**
 * `securityMode: "apikey"` end to end: a real control plane, keys made and
 * revoked through the admin API, and the official MCP SDK client sending
 * them in `Authorization: Bearer` or `X-API-Key`. Every refusal is checked
 * over real HTTP (status, challenge, JSON-RPC body), a revocation stops an
 * open session at its next request, sessions and rate limits belong to one
 * key, the invocation log names the key, `lastUsedAt` is written, and no log
 * line (debug access lines included) ever holds a key.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectSdkSession, type SdkSession } from '../../support/sdk-session.js';
import { loopbackFetch } from '../../support/loopback-fetch.js';
import { postInitialize } from '../../support/mcp-requests.js';
import {
  startTestControlPlane,
  TEST_ADMIN_TOKEN,
  type TestControlPlane,
} from '../../support/control-plane.js';

let plane: TestControlPlane;
const logLines: string[] = [];
const sessions: SdkSession[] = [];
/** Every key minted in this file: none may appear in a log line. */
const minted: string[] = [];

const SUB = 'keyed';
const OTHER = 'elsewhere';
const LIMITED = 'metered';

interface MintedKey {
  id: string;
  label: string;
  key: string;
}

/** Creates a key of `subdomain` through the admin API. */
async function createKey(subdomain: string, label: string, expiresAt?: string): Promise<MintedKey> {
  const created = await plane.admin('POST', `/api/servers/${subdomain}/api-keys`, {
    label,
    ...(expiresAt === undefined ? {} : { expiresAt }),
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  expect(created.body.key).toMatch(/^mcph_ak_/);
  minted.push(created.body.key);
  return { id: created.body.id, label: created.body.label, key: created.body.key };
}

async function revokeKey(subdomain: string, id: string): Promise<void> {
  const revoked = await plane.admin('DELETE', `/api/servers/${subdomain}/api-keys/${id}`);
  expect(revoked.status, JSON.stringify(revoked.body)).toBe(204);
}

const bearer = (key: MintedKey | string) => ({
  authorization: `Bearer ${typeof key === 'string' ? key : key.key}`,
});

/** An SDK session on `subdomain` sending `headers` with every request. */
async function connect(subdomain: string, headers: Record<string, string>): Promise<SdkSession> {
  const session = await connectSdkSession(plane.mcpUrl(subdomain), { requestInit: { headers } });
  sessions.push(session);
  return session;
}

/** What a refused `/mcp` request said: status, challenge, stable code and message. */
async function refusalOf(response: Response) {
  const body = (await response.json()) as {
    jsonrpc: string;
    id: null;
    error: { code: number; message: string; data: { code: string } };
  };
  expect(body).toMatchObject({ jsonrpc: '2.0', id: null });
  return {
    status: response.status,
    challenge: response.headers.get('www-authenticate'),
    code: body.error.data.code,
    message: body.error.message,
  };
}

const invalid = (description: string) =>
  `Bearer realm="mcphost", error="invalid_token", error_description="${description}"`;

function text(result: CallToolResult): string {
  const block = result.content[0];
  return block?.type === 'text' ? block.text : '';
}

beforeAll(async () => {
  // Debug: the hosted side's access lines are logged too, and must not hold a key.
  plane = await startTestControlPlane(
    { LOG_LEVEL: 'debug' },
    { logSink: (line) => void logLines.push(line) },
  );
  for (const subdomain of [SUB, OTHER, LIMITED]) {
    expect((await plane.admin('POST', '/api/servers', { subdomain })).status).toBe(201);
    const tool = await plane.admin('PUT', `/api/servers/${subdomain}/tools/greet`, {
      description: 'Says hello.',
      code: "return 'hello, key holder';",
    });
    expect(tool.status, JSON.stringify(tool.body)).toBe(201);
    const settings = await plane.admin('PATCH', `/api/servers/${subdomain}/settings`, {
      securityMode: 'apikey',
      ...(subdomain === LIMITED ? { rateLimit: { perMinute: 60, burst: 3 } } : {}),
    });
    expect(settings.status, JSON.stringify(settings.body)).toBe(200);
    expect(settings.body.securityMode).toBe('apikey');
  }
}, 180_000);

afterAll(async () => {
  await Promise.all(sessions.map((session) => session.client.close().catch(() => undefined)));
  await plane?.close();
});

describe('a server in API-key mode', () => {
  it('serves the SDK client with a key as a bearer token, and logs the key as the caller', async () => {
    const key = await createKey(SUB, 'ci pipeline');
    const { client } = await connect(SUB, bearer(key));
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['greet']);
    const result = (await client.callTool({ name: 'greet', arguments: {} })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(text(result)).toBe('hello, key holder');

    const log = await plane.admin('GET', `/api/invocations?server=${SUB}`);
    expect(log.status).toBe(200);
    expect(log.body.invocations[0].caller).toEqual({
      kind: 'apikey',
      keyId: key.id,
      label: 'ci pipeline',
    });
    expect(JSON.stringify(log.body)).not.toContain(key.key);
  });

  it('serves the SDK client with a key in X-API-Key', async () => {
    const key = await createKey(SUB, 'browser extension');
    const { client } = await connect(SUB, { 'x-api-key': key.key });
    const result = (await client.callTool({ name: 'greet', arguments: {} })) as CallToolResult;
    expect(text(result)).toBe('hello, key holder');
  });

  it('answers a request without a key with 401 and a challenge without an error code', async () => {
    const refusal = await refusalOf(await postInitialize(plane.mcpUrl(SUB)));
    expect(refusal).toEqual({
      status: 401,
      challenge:
        'Bearer realm="mcphost", error_description="an API key is required: send Authorization: Bearer <key> or X-API-Key: <key>"',
      code: 'ERR_UNAUTHORIZED',
      message: 'an API key is required: send Authorization: Bearer <key> or X-API-Key: <key>',
    });
    // An Authorization header of another scheme is no key either.
    const basic = await postInitialize(plane.mcpUrl(SUB), { authorization: 'Basic dTpw' });
    expect((await refusalOf(basic)).challenge).toMatch(/an API key is required/);
  });

  it('publishes no OAuth protected-resource metadata', async () => {
    const url = new URL('/.well-known/oauth-protected-resource', plane.mcpUrl(SUB));
    const response = await loopbackFetch(url);
    expect(response.status).toBe(404);
    await response.body?.cancel();
  });

  it('refuses an unknown key, a non-key bearer and another server’s key alike', async () => {
    const others = await createKey(OTHER, 'for the other server');
    const presented: Record<string, string>[] = [
      bearer(others),
      { 'x-api-key': others.key },
      bearer(`mcph_ak_${'A'.repeat(43)}`),
      bearer('eyJhbGciOiJFUzI1NiJ9.e30.c2ln'),
    ];
    for (const headers of presented) {
      const refusal = await refusalOf(await postInitialize(plane.mcpUrl(SUB), headers));
      expect(refusal).toEqual({
        status: 401,
        challenge: invalid('this API key is not valid for this server'),
        code: 'ERR_INVALID_TOKEN',
        message: 'this API key is not valid for this server',
      });
    }
    // On its own server, the other key works.
    const own = await postInitialize(plane.mcpUrl(OTHER), bearer(others));
    expect(own.status).toBe(200);
    await own.body?.cancel();
  });

  it('prefers the bearer key when both headers are sent', async () => {
    const good = await createKey(SUB, 'good');
    const response = await postInitialize(plane.mcpUrl(SUB), {
      authorization: `Bearer mcph_ak_${'B'.repeat(43)}`,
      'x-api-key': good.key,
    });
    expect((await refusalOf(response)).status).toBe(401);
  });

  it('refuses a revoked key at once, though it was just used', async () => {
    const key = await createKey(SUB, 'to revoke');
    const before = await postInitialize(plane.mcpUrl(SUB), bearer(key));
    expect(before.status).toBe(200);
    await before.body?.cancel();
    await revokeKey(SUB, key.id);
    const refusal = await refusalOf(await postInitialize(plane.mcpUrl(SUB), bearer(key)));
    expect(refusal).toMatchObject({
      status: 401,
      challenge: invalid('this API key has been revoked'),
      code: 'ERR_INVALID_TOKEN',
    });
    const listed = await plane.admin('GET', `/api/servers/${SUB}/api-keys`);
    const view = listed.body.apiKeys.find((entry: { id: string }) => entry.id === key.id);
    expect(view).toMatchObject({ status: 'revoked' });
    expect(JSON.stringify(listed.body)).not.toContain(key.key);
  });

  it('refuses a key once its expiry has passed', async () => {
    const expiresAt = new Date(Date.now() + 2_000);
    const key = await createKey(SUB, 'short-lived', expiresAt.toISOString());
    const before = await postInitialize(plane.mcpUrl(SUB), bearer(key));
    expect(before.status).toBe(200);
    await before.body?.cancel();
    await new Promise((resolve) => setTimeout(resolve, expiresAt.getTime() - Date.now() + 100));
    const refusal = await refusalOf(
      await postInitialize(plane.mcpUrl(SUB), { 'x-api-key': key.key }),
    );
    expect(refusal).toMatchObject({
      status: 401,
      challenge: invalid('this API key has expired'),
      code: 'ERR_INVALID_TOKEN',
    });
  });

  it('stops an open session at its next request once its key is revoked', async () => {
    const key = await createKey(SUB, 'revoked mid-session');
    const statuses: number[] = [];
    const watching: typeof fetch = async (input, init) => {
      const response = await loopbackFetch(input, init);
      statuses.push(response.status);
      return response;
    };
    const session = await connectSdkSession(plane.mcpUrl(SUB), {
      fetch: watching,
      requestInit: { headers: bearer(key) },
    });
    sessions.push(session);
    expect((await session.client.listTools()).tools).toHaveLength(1);
    await revokeKey(SUB, key.id);
    await expect(session.client.listTools()).rejects.toThrow(/this API key has been revoked/);
    expect(statuses.at(-1)).toBe(401);
  });

  it('binds a session to its key: another key of the same server cannot use it', async () => {
    const [first, second] = [await createKey(SUB, 'first'), await createKey(SUB, 'second')];
    const opened = await postInitialize(plane.mcpUrl(SUB), bearer(first));
    expect(opened.status).toBe(200);
    await opened.body?.cancel();
    const sessionId = opened.headers.get('mcp-session-id')!;
    expect(sessionId).toBeTruthy();
    const listTools = (key: MintedKey) =>
      loopbackFetch(plane.mcpUrl(SUB), {
        method: 'POST',
        headers: {
          ...bearer(key),
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': sessionId,
          'mcp-protocol-version': '2025-06-18',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
      });
    const stranger = await listTools(second);
    expect(stranger.status).toBe(404);
    expect(((await stranger.json()) as { error: { data: { code: string } } }).error.data.code).toBe(
      'ERR_SESSION_NOT_FOUND',
    );
    const owner = await listTools(first);
    expect(owner.status).toBe(200);
    await owner.body?.cancel();
  });

  it('counts the rate limit per key: one key exhausted leaves another working', async () => {
    const [spent, fresh] = [await createKey(LIMITED, 'spender'), await createKey(LIMITED, 'fresh')];
    const statuses: number[] = [];
    for (let index = 0; index < 6; index += 1) {
      const response = await postInitialize(plane.mcpUrl(LIMITED), bearer(spent));
      statuses.push(response.status);
      await response.body?.cancel();
    }
    expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
    expect(statuses.at(-1)).toBe(429);
    // Same client address, another key: its own budget.
    const other = await postInitialize(plane.mcpUrl(LIMITED), bearer(fresh));
    expect(other.status).toBe(200);
    await other.body?.cancel();
  });

  it('writes lastUsedAt in the background', async () => {
    const key = await createKey(SUB, 'used once');
    const response = await postInitialize(plane.mcpUrl(SUB), bearer(key));
    expect(response.status).toBe(200);
    await response.body?.cancel();
    const lastUsedAt = async () => {
      const listed = await plane.admin('GET', `/api/servers/${SUB}/api-keys`);
      return listed.body.apiKeys.find((entry: { id: string }) => entry.id === key.id)?.lastUsedAt;
    };
    await expect.poll(lastUsedAt, { timeout: 15_000, interval: 500 }).toMatch(/^\d{4}-/);
  }, 30_000);

  it('counts refusals by reason in the metrics', async () => {
    const response = await loopbackFetch(`${plane.adminUrl}/metrics`, {
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    });
    const metrics = await response.text();
    expect(metrics).toMatch(
      /mcphost_auth_failures_total\{side="hosted",reason="missing_token"\} [1-9]/,
    );
    expect(metrics).toMatch(
      /mcphost_auth_failures_total\{side="hosted",reason="invalid_token"\} [1-9]/,
    );
  });
});

describe('the logs', () => {
  it('never hold a key, though every request was logged', () => {
    expect(minted.length).toBeGreaterThan(5);
    expect(logLines.some((line) => line.includes('"side":"hosted"'))).toBe(true);
    for (const key of minted) {
      expect(logLines.filter((line) => line.includes(key))).toEqual([]);
    }
    expect(
      logLines.filter((line) => /x-api-key/i.test(line) && !line.includes('[REDACTED]')),
    ).toEqual([]);
  });
});
