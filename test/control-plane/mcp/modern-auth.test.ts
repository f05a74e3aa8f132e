/**
 * OAuth 2.0 and API-key servers in both protocol eras: the same gate answers
 * a modern (2026-07-28) request as a legacy one — 401 with its
 * `WWW-Authenticate` challenge (and the protected-resource metadata) without
 * a credential, the call served with one — through the official SDK v2
 * client pinned to 2026-07-28 and the v1 client; a call of the modern era
 * that asks its client runs its input rounds as the caller the credential
 * names, and the invocation log records that caller.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startAuthorizationServer,
  type TestAuthorizationServer,
} from '../../fixtures/authorization-server.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { loopbackFetch } from '../../support/loopback-fetch.js';

let plane: TestControlPlane;
let as: TestAuthorizationServer;
let apiKey: string;

const ASK = `const answer = await sdk.elicit('Name?', { type: 'object', properties: { name: { type: 'string' } } }, { key: 'name' });
  return 'hello ' + answer.content.name;`;

beforeAll(async () => {
  [plane, as] = await Promise.all([
    startTestControlPlane({ RATE_LIMIT_PER_MINUTE: '0' }),
    startAuthorizationServer({ algorithm: 'ES256' }),
  ]);
  for (const server of ['oauthed', 'keyed']) {
    expect((await plane.admin('POST', '/api/servers', { subdomain: server })).status).toBe(201);
    const saved = await plane.admin('PUT', `/api/servers/${server}/tools/ask`, {
      description: 'asks a name',
      code: ASK,
    });
    expect(saved.status).toBe(201);
  }
  const oauth = await plane.admin('PATCH', '/api/servers/oauthed/settings', {
    securityMode: 'oauth2',
    oauthServerUrl: as.metadataUrl,
  });
  expect(oauth.status, JSON.stringify(oauth.body)).toBe(200);
  const key = await plane.admin('POST', '/api/servers/keyed/api-keys', { label: 'modern' });
  expect(key.status).toBe(201);
  apiKey = key.body.key;
  expect(
    (await plane.admin('PATCH', '/api/servers/keyed/settings', { securityMode: 'apikey' })).status,
  ).toBe(200);
}, 180_000);

afterAll(async () => {
  await Promise.all([plane?.close(), as?.close()]);
});

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** A modern `tools/list` POST with `headers`; its status and challenge. */
async function modernList(server: string, headers: Record<string, string> = {}) {
  const response = await loopbackFetch(plane.mcpUrl(server), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/list',
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: META } }),
  });
  return {
    status: response.status,
    challenge: response.headers.get('www-authenticate') ?? '',
    body: await response.json(),
  };
}

async function modernClient(server: string, headers: Record<string, string>): Promise<Client> {
  const client = new Client(
    { name: 'modern-auth', version: '1' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { elicitation: {} } },
  );
  client.setRequestHandler('elicitation/create', async () => ({
    action: 'accept',
    content: { name: 'Ada' },
  }));
  await client.connect(
    new StreamableHTTPClientTransport(plane.mcpUrl(server), {
      fetch: loopbackFetch,
      requestInit: { headers },
    }),
  );
  return client;
}

async function legacyClient(server: string, headers: Record<string, string>) {
  const client = new LegacyClient(
    { name: 'legacy-auth', version: '1' },
    { capabilities: { elicitation: {} } },
  );
  const { ElicitRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
  client.setRequestHandler(ElicitRequestSchema, async () => ({
    action: 'accept',
    content: { name: 'Ada' },
  }));
  await client.connect(
    new LegacyTransport(plane.mcpUrl(server), { fetch: loopbackFetch, requestInit: { headers } }),
  );
  return client;
}

const textOf = (result: unknown) => (result as { content: { text: string }[] }).content[0]!.text;

describe('an OAuth 2.0 server in the modern era', () => {
  it('answers 401 with the challenge naming the protected-resource metadata', async () => {
    const refused = await modernList('oauthed');
    expect(refused.status).toBe(401);
    expect(refused.challenge).toMatch(
      /^Bearer resource_metadata="http:\/\/oauthed\.localhost:\d+\/\.well-known\/oauth-protected-resource"/,
    );
    const forged = await modernList('oauthed', { authorization: 'Bearer not-a-token' });
    expect(forged.status).toBe(401);
    expect(forged.challenge).toMatch(/error="invalid_token"/);
  });

  it('serves a modern and a legacy client with a token, input rounds included', async () => {
    const token = await as.issueTokenFor(plane.mcpUrl('oauthed').href);
    const headers = { authorization: `Bearer ${token}` };
    const modern = await modernClient('oauthed', headers);
    const legacy = await legacyClient('oauthed', headers);
    try {
      for (const client of [modern, legacy]) {
        expect(textOf(await client.callTool({ name: 'ask', arguments: {} }))).toBe('hello Ada');
      }
    } finally {
      await Promise.all([modern.close(), legacy.close()]);
    }
    const log = await plane.admin('GET', '/api/invocations?server=oauthed&tool=ask');
    const eras = (log.body.invocations as { era: string; caller: { kind: string } }[]).map(
      (row) => [row.era, row.caller.kind],
    );
    expect(eras).toEqual(
      expect.arrayContaining([
        ['modern', 'oauth'],
        ['legacy', 'oauth'],
      ]),
    );
  });
});

describe('an API-key server in the modern era', () => {
  it('refuses a request without a key or with a wrong one', async () => {
    const missing = await modernList('keyed');
    expect(missing.status).toBe(401);
    expect(missing.challenge).toMatch(/^Bearer realm="mcphost"/);
    const wrong = await modernList('keyed', { 'x-api-key': 'mcph_ak_wrong' });
    expect(wrong.status).toBe(401);
  });

  it('serves a modern and a legacy client with its key, as that key', async () => {
    const ways: Record<string, string>[] = [
      { authorization: `Bearer ${apiKey}` },
      { 'x-api-key': apiKey },
    ];
    for (const headers of ways) {
      const modern = await modernClient('keyed', headers);
      const legacy = await legacyClient('keyed', headers);
      try {
        for (const client of [modern, legacy]) {
          expect(textOf(await client.callTool({ name: 'ask', arguments: {} }))).toBe('hello Ada');
        }
      } finally {
        await Promise.all([modern.close(), legacy.close()]);
      }
    }
    const log = await plane.admin('GET', '/api/invocations?server=keyed&tool=ask');
    const callers = (
      log.body.invocations as { era: string; caller: { kind: string; label?: string } }[]
    ).map((row) => [row.era, row.caller.kind, row.caller.label]);
    expect(callers).toEqual(
      expect.arrayContaining([
        ['modern', 'apikey', 'modern'],
        ['legacy', 'apikey', 'modern'],
      ]),
    );
  });
});
