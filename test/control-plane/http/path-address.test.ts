/**
 * The path address of a hosted server (docs/addresses.md):
 * `http://127.0.0.1:{port}/servers/{sub}/mcp`, reached with Node's own fetch
 * (no name to resolve, no Host header to set) by the official SDK v2 client —
 * `auto` and pinned to 2026-07-28 — and the v1 client, with everything the
 * host address has: both eras (a legacy session's GET stream, DELETE and a
 * cut stream resumed; a modern call asking twice, subscriptions/listen), an
 * API-key server, an OAuth 2.0 server against a real Authorization Server
 * (401 → path-suffixed RFC 9728 metadata → `resource` = the path address →
 * the SDK's whole authorization flow; each address its own audience, never
 * another server's), Origin checks, rate limits shared with the host form,
 * the same 404 for an unknown server, and the server views listing both
 * addresses.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  startAuthorizationServer,
  type TestAuthorizationServer,
} from '../../fixtures/authorization-server.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { loopbackFetch } from '../../support/loopback-fetch.js';
import { MemoryOAuthClient } from '../../support/memory-oauth-client.js';
import { postInitialize } from '../../support/mcp-requests.js';
import {
  cutCall,
  postRaw,
  requireRawSession,
  resumeRaw,
  toolCall,
} from '../../support/raw-mcp-session.js';
import { connectSdkSession } from '../../support/sdk-session.js';

let plane: TestControlPlane;
let as: TestAuthorizationServer;
let apiKey: string;

/** Node's own fetch: the point of the path address is that it needs nothing else. */
const nodeFetch: typeof fetch = globalThis.fetch;
/** `http://127.0.0.1:{port}/servers/{sub}/mcp` */
const pathUrl = (sub: string) => new URL(`http://127.0.0.1:${plane.port}/servers/${sub}/mcp`);
/** The host address of the same server (reached through loopbackFetch). */
const hostUrl = (sub: string) => plane.mcpUrl(sub);
const pathMetadataUrl = (sub: string) =>
  `http://127.0.0.1:${plane.port}/.well-known/oauth-protected-resource/servers/${sub}/mcp`;

const TOOLS: Record<string, string> = {
  echo: 'return `echo ${params.text}`;',
  two_rounds: `const first = await sdk.elicit('First?', { type: 'object', properties: { a: { type: 'string' } } }, { key: 'first' });
    const second = await sdk.elicit('Second?', { type: 'object', properties: { b: { type: 'string' } } }, { key: 'second' });
    return first.content.a + '+' + second.content.b;`,
  slow_chatty: `console.log('started');
    await new Promise((r) => setTimeout(r, 1200));
    return 'late answer';`,
};

async function saveTools(sub: string): Promise<void> {
  for (const [name, code] of Object.entries(TOOLS)) {
    const saved = await plane.admin('PUT', `/api/servers/${sub}/tools/${name}`, {
      description: `${name} tool`,
      code,
      parameters: name === 'echo' ? [{ name: 'text', type: 'string', required: true }] : [],
      limits: { timeoutMs: 20_000 },
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
  }
}

async function patch(sub: string, settings: object): Promise<{ status: number; body: any }> {
  const response = await plane.admin('PATCH', `/api/servers/${sub}/settings`, settings);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response;
}

beforeAll(async () => {
  [plane, as] = await Promise.all([
    // The listener's public origin as these clients reach it: what OAuth resources are built on.
    startTestControlPlane({ PUBLIC_URL: 'http://127.0.0.1:{port}', RATE_LIMIT_PER_MINUTE: '0' }),
    startAuthorizationServer({ algorithm: 'ES256' }),
  ]);
  for (const sub of ['open', 'keyed', 'secure', 'other', 'limited']) {
    expect((await plane.admin('POST', '/api/servers', { subdomain: sub })).status).toBe(201);
    await saveTools(sub);
  }
  await patch('open', { allowedOrigins: ['https://app.example'] });
  await patch('limited', { rateLimit: { perMinute: 60, burst: 3 } });
  const key = await plane.admin('POST', '/api/servers/keyed/api-keys', { label: 'by-path' });
  expect(key.status).toBe(201);
  apiKey = key.body.key;
  await patch('keyed', { securityMode: 'apikey' });
  for (const sub of ['secure', 'other']) {
    await patch(sub, { securityMode: 'oauth2', oauthServerUrl: as.metadataUrl });
  }
}, 180_000);

afterAll(async () => {
  await Promise.all([plane?.close(), as?.close()]);
});

const closers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((client) => client.close().catch(() => undefined)));
});

type Mode = 'auto' | { pin: '2026-07-28' };

/** An SDK v2 client on the path address that answers elicitations. */
async function modernClient(
  sub: string,
  mode: Mode,
  headers: Record<string, string> = {},
): Promise<Client> {
  const client = new Client(
    { name: 'path-address', version: '1' },
    { versionNegotiation: { mode }, capabilities: { elicitation: {} } },
  );
  client.setRequestHandler('elicitation/create', async (request) => {
    const first = (request.params as { message: string }).message === 'First?';
    const content: Record<string, string> = first ? { a: 'one' } : { b: 'two' };
    return { action: 'accept', content };
  });
  await client.connect(
    new StreamableHTTPClientTransport(pathUrl(sub), { requestInit: { headers } }),
  );
  closers.push(client);
  return client;
}

/** An SDK v1 (legacy era) client on the path address that answers elicitations. */
async function legacyClient(sub: string, headers: Record<string, string> = {}) {
  const client = new LegacyClient(
    { name: 'path-address-legacy', version: '1' },
    { capabilities: { elicitation: {} } },
  );
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    const first = request.params.message === 'First?';
    return { action: 'accept', content: first ? { a: 'one' } : { b: 'two' } };
  });
  await client.connect(new LegacyTransport(pathUrl(sub), { requestInit: { headers } }));
  closers.push(client);
  return client;
}

const textOf = (result: unknown) => (result as { content: { text: string }[] }).content[0]!.text;

/** Lists and calls tools, one of them asking its client twice. */
async function expectServes(client: Client | LegacyClient): Promise<void> {
  const listed = await client.listTools();
  expect(listed.tools.map((tool) => tool.name).sort()).toEqual(Object.keys(TOOLS).sort());
  expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'hi' } }))).toBe(
    'echo hi',
  );
  expect(textOf(await client.callTool({ name: 'two_rounds', arguments: {} }))).toBe('one+two');
}

describe('an open server by its path address', () => {
  it('serves the SDK v2 client (auto and pinned 2026-07-28) and the v1 client', async () => {
    for (const mode of ['auto', { pin: '2026-07-28' }] as Mode[]) {
      await expectServes(await modernClient('open', mode));
    }
    await expectServes(await legacyClient('open'));
    const log = await plane.admin('GET', '/api/invocations?server=open&tool=two_rounds');
    const eras = (log.body.invocations as { era: string }[]).map((row) => row.era);
    expect(eras).toEqual(expect.arrayContaining(['modern', 'legacy']));
  });

  it('keeps a legacy session: its GET stream, a cut response resumed, DELETE', async () => {
    const session = await connectSdkSession(pathUrl('open'), { fetch: nodeFetch });
    closers.push(session.client);
    await session.streamOpen;
    const sessionId = session.transport.sessionId!;
    expect(sessionId).toBeTruthy();

    // A raw session of the same server: cut a call's response, then resume it by path.
    const raw = await requireRawSession(pathUrl('open'), { protocolVersion: '2025-11-25' });
    const primed = await cutCall(pathUrl('open'), raw, toolCall(7, 'slow_chatty'), { events: 2 });
    expect(primed).toBeDefined();
    const resumed = await resumeRaw(pathUrl('open'), raw, primed!);
    expect(resumed.status).toBe(200);
    expect(resumed.body).toContain('late answer');
    // The session is the server's, not the address's: the host address serves it too.
    const byHost = await postRaw(hostUrl('open'), raw, { jsonrpc: '2.0', id: 8, method: 'ping' });
    expect(byHost.status).toBe(200);
    expect(await byHost.text()).toContain('"id":8');

    await session.transport.terminateSession();
    const after = await nodeFetch(pathUrl('open'), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
    });
    expect(after.status).toBe(404);
  });

  it('hears list changes on a modern subscriptions/listen stream', async () => {
    const client = await modernClient('open', { pin: '2026-07-28' });
    let changed = 0;
    client.setNotificationHandler('notifications/tools/list_changed', async () => {
      changed += 1;
    });
    const subscription = await client.listen({ toolsListChanged: true });
    expect(subscription.honoredFilter).toEqual({ toolsListChanged: true });
    const saved = await plane.admin('PUT', '/api/servers/open/tools/added', {
      description: 'added while listening',
      code: 'return 1;',
    });
    expect(saved.status).toBe(201);
    await expect.poll(() => changed, { timeout: 10_000 }).toBeGreaterThan(0);
    await subscription.close();
    expect((await plane.admin('DELETE', '/api/servers/open/tools/added')).status).toBe(204);
  });

  it('checks Origin against the server’s allowedOrigins, as the host address does', async () => {
    const refused = await postInitialize(pathUrl('open'), { origin: 'https://evil.example' });
    expect(refused.status).toBe(403);
    expect((await refused.json()).error.data.code).toBe('ERR_FORBIDDEN');
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    const allowed = await postInitialize(pathUrl('open'), { origin: 'https://app.example' });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example');
    await allowed.body?.cancel();
    const preflight = await nodeFetch(pathUrl('open'), {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
  });

  it('counts requests by either address in one rate limit', async () => {
    // Burst 3: two by host, one by path, and the fourth — by path — is refused.
    for (const url of [hostUrl('limited'), hostUrl('limited'), pathUrl('limited')]) {
      const response = await postInitialize(url);
      expect(response.status, url.href).toBe(200);
      await response.body?.cancel();
    }
    const refused = await postInitialize(pathUrl('limited'));
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await refused.json()).error.data.code).toBe('ERR_RATE_LIMITED');
  });
});

describe('what is not a server', () => {
  it('answers an unknown server with the 404 of an unknown subdomain', async () => {
    const byPath = await postInitialize(pathUrl('nobody'));
    const byHost = await postInitialize(hostUrl('nobody'));
    expect(byPath.status).toBe(404);
    expect(await byPath.json()).toEqual(await byHost.json());
  });

  it('leaves paths near the path address to the admin side', async () => {
    for (const path of [
      '/servers/open/mcp/',
      '/servers/open/mcp/extra',
      '/servers/OPEN/mcp',
      '/servers/open',
    ]) {
      const response = await postInitialize(new URL(path, `http://127.0.0.1:${plane.port}`));
      expect(response.status, path).toBe(404);
      expect((await response.json()).error.message, path).toMatch(/^no such endpoint/);
    }
  });
});

describe('a path address on another host', () => {
  it('is no server: only PUBLIC_URL’s host (here every name of this machine) has path addresses', async () => {
    // loopbackFetch sends every name to 127.0.0.1: only the Host header differs.
    for (const host of ['x.y.localhost', 'proxy.example']) {
      const url = new URL(`http://${host}:${plane.port}/servers/open/mcp`);
      const response = await postInitialize(url);
      expect(response.status, host).toBe(404);
      expect((await response.json()).error.message, host).toMatch(/^no such endpoint/);
    }
    for (const host of ['localhost', '127.0.0.1']) {
      const url = new URL(`http://${host}:${plane.port}/servers/open/mcp`);
      expect((await postInitialize(url)).status, host).toBe(200);
    }
  });
});

describe('an API-key server by its path address', () => {
  it('refuses a request without a key or with a wrong one', async () => {
    const missing = await postInitialize(pathUrl('keyed'));
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer realm="mcphost"/);
    const wrong = await postInitialize(pathUrl('keyed'), { 'x-api-key': 'mcph_ak_wrong' });
    expect(wrong.status).toBe(401);
  });

  it('serves both clients with its key', async () => {
    const headers = { authorization: `Bearer ${apiKey}` };
    await expectServes(await modernClient('keyed', { pin: '2026-07-28' }, headers));
    await expectServes(await legacyClient('keyed', { 'x-api-key': apiKey }));
  });
});

describe('an OAuth 2.0 server by its path address', () => {
  it('points a 401 at its path-suffixed metadata, whose resource is the path address', async () => {
    const refused = await postInitialize(pathUrl('secure'));
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${pathMetadataUrl('secure')}"`,
    );
    const metadata = await nodeFetch(pathMetadataUrl('secure'));
    expect(metadata.status).toBe(200);
    expect(await metadata.json()).toEqual({
      resource: pathUrl('secure').href,
      authorization_servers: [as.issuer],
      bearer_methods_supported: ['header'],
    });
    // The host address keeps its own pointer and resource.
    const byHost = await postInitialize(hostUrl('secure'));
    expect(byHost.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${hostUrl('secure').origin}/.well-known/oauth-protected-resource"`,
    );
    const hostMetadata = await loopbackFetch(
      `${hostUrl('secure').origin}/.well-known/oauth-protected-resource`,
    );
    expect((await hostMetadata.json()).resource).toBe(hostUrl('secure').href);
  });

  it('serves both clients with a token for the path address', async () => {
    const token = await as.issueTokenFor(pathUrl('secure').href);
    const headers = { authorization: `Bearer ${token}` };
    await expectServes(await modernClient('secure', { pin: '2026-07-28' }, headers));
    await expectServes(await legacyClient('secure', headers));
  });

  it('refuses a token for another resource, whichever address either names', async () => {
    const misdirected: [string, URL][] = [
      // Another server's path address, at this one's.
      [pathUrl('other').href, pathUrl('secure')],
      // Another server's host address, at this one's path address.
      [hostUrl('other').href, pathUrl('secure')],
      // This server's host address is another resource than its path address, both ways.
      [hostUrl('secure').href, pathUrl('secure')],
      [pathUrl('secure').href, hostUrl('secure')],
      // This server's path address, at another server's.
      [pathUrl('secure').href, pathUrl('other')],
    ];
    for (const [resource, url] of misdirected) {
      const token = await as.issueTokenFor(resource);
      const response = await postInitialize(url, { authorization: `Bearer ${token}` });
      expect(response.status, `${resource} at ${url.href}`).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    }
    // The host address still takes its own resource's token.
    const own = await as.issueTokenFor(hostUrl('secure').href);
    const byHost = await postInitialize(hostUrl('secure'), { authorization: `Bearer ${own}` });
    expect(byHost.status).toBe(200);
    await byHost.body?.cancel();
  });

  it('lets the SDK client discover and authorize through the path address alone', async () => {
    const provider = new MemoryOAuthClient();
    const first = new LegacyTransport(pathUrl('secure'), { authProvider: provider });
    await expect(new LegacyClient({ name: 'oauth', version: '1' }).connect(first)).rejects.toThrow(
      /Unauthorized/i,
    );
    expect(provider.authorizationUrl?.searchParams.get('resource')).toBe(pathUrl('secure').href);
    const redirect = await as.completeAuthorization(provider.authorizationUrl!);
    await first.finishAuth(redirect.searchParams.get('code')!);
    const client = new LegacyClient({ name: 'oauth', version: '1' });
    await client.connect(new LegacyTransport(pathUrl('secure'), { authProvider: provider }));
    closers.push(client);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'authorized' } }))).toBe(
      'echo authorized',
    );
  });
});

describe('the server views', () => {
  it('list both addresses and prefer the path one for BASE_DOMAIN localhost', async () => {
    const view = (await plane.admin('GET', '/api/servers/secure')).body;
    expect(view).toMatchObject({
      address: hostUrl('secure').origin,
      mcpUrl: pathUrl('secure').href,
      mcpUrls: { host: hostUrl('secure').href, path: pathUrl('secure').href },
      oauth: {
        issuer: as.issuer,
        resource: pathUrl('secure').href,
        protectedResourceMetadataUrl: pathMetadataUrl('secure'),
        addresses: {
          host: {
            resource: hostUrl('secure').href,
            protectedResourceMetadataUrl: `${hostUrl('secure').origin}/.well-known/oauth-protected-resource`,
          },
          path: {
            resource: pathUrl('secure').href,
            protectedResourceMetadataUrl: pathMetadataUrl('secure'),
          },
        },
      },
    });
    const listed = (await plane.admin('GET', '/api/servers')).body.servers as {
      subdomain: string;
      mcpUrl: string;
    }[];
    expect(listed.find((server) => server.subdomain === 'open')?.mcpUrl).toBe(pathUrl('open').href);
  });
});
