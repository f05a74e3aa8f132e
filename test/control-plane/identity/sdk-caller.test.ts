/**
 * `sdk.caller`: who made a call, as its code sees it, in both protocol eras
 * and in an admin's test run — an OAuth token's subject, client, granted
 * scopes and the claims its server lets code read (`callerClaims`); an API
 * key's id and label; nobody, on an open server. Frozen, never a token, and
 * the claims never reach the invocation log. Real parts: oidc-provider
 * issuing the tokens, the official SDK v2 client pinned to 2026-07-28 and
 * the v1 client.
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
let apiKey: { id: string; key: string };
let token: string;

/** What the code sees of its caller, and whether it could change any of it. */
const WHOAMI = `
  const caller = sdk.caller;
  let rewritten = false;
  try { caller.kind = 'admin'; caller.claims.sub = 'someone else'; caller.scopes.push('all'); } catch {}
  rewritten = caller.kind !== ${JSON.stringify('KIND')} || caller.scopes.includes('all');
  return { caller, frozen: Object.isFrozen(caller) && Object.isFrozen(caller.claims) && Object.isFrozen(caller.scopes), rewritten };
`;

async function saveWhoami(server: string, kind: string): Promise<void> {
  const saved = await plane.admin('PUT', `/api/servers/${server}/tools/whoami`, {
    description: 'who called',
    code: WHOAMI.replace('KIND', kind),
  });
  expect(saved.status, JSON.stringify(saved.body)).toBe(201);
}

beforeAll(async () => {
  [plane, as] = await Promise.all([
    startTestControlPlane({ RATE_LIMIT_PER_MINUTE: '0' }),
    startAuthorizationServer({
      accounts: { 'fixture-user': { email: 'ada@example.com', name: 'Ada' } },
      accessTokenClaims: {
        roles: ['editor'],
        tenant: 'acme',
        // Larger than a claim code may see: left out, not a failed call.
        huge: 'x'.repeat(5000),
      },
    }),
  ]);
  for (const [server, kind] of [
    ['oauthed', 'oauth'],
    ['keyed', 'apikey'],
    ['open', 'anonymous'],
  ] as const) {
    expect((await plane.admin('POST', '/api/servers', { subdomain: server })).status).toBe(201);
    await saveWhoami(server, kind);
  }
  const oauth = await plane.admin('PATCH', '/api/servers/oauthed/settings', {
    securityMode: 'oauth2',
    oauthServerUrl: as.metadataUrl,
  });
  expect(oauth.status, JSON.stringify(oauth.body)).toBe(200);
  const prompt = await plane.admin('PUT', '/api/servers/keyed/prompts/who', {
    description: 'who asks',
    code: "return sdk.caller.kind + ' ' + sdk.caller.key.label;",
  });
  expect(prompt.status, JSON.stringify(prompt.body)).toBe(201);
  const key = await plane.admin('POST', '/api/servers/keyed/api-keys', { label: 'reporting job' });
  expect(key.status).toBe(201);
  apiKey = { id: key.body.id, key: key.body.key };
  expect(
    (await plane.admin('PATCH', '/api/servers/keyed/settings', { securityMode: 'apikey' })).status,
  ).toBe(200);
  token = await as.authorizeWithCode(plane.mcpUrl('oauthed').href);
}, 180_000);

afterAll(async () => {
  await Promise.all([plane?.close(), as?.close()]);
});

async function modernCall(server: string, headers: Record<string, string>): Promise<unknown> {
  const client = new Client(
    { name: 'caller-test', version: '1' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(plane.mcpUrl(server), {
      fetch: loopbackFetch,
      requestInit: { headers },
    }),
  );
  try {
    return (await client.callTool({ name: 'whoami', arguments: {} })).structuredContent;
  } finally {
    await client.close();
  }
}

async function legacyCall(server: string, headers: Record<string, string>): Promise<unknown> {
  const client = new LegacyClient({ name: 'caller-test', version: '1' });
  await client.connect(
    new LegacyTransport(plane.mcpUrl(server), { fetch: loopbackFetch, requestInit: { headers } }),
  );
  try {
    return (await client.callTool({ name: 'whoami', arguments: {} })).structuredContent;
  } finally {
    await client.close();
  }
}

const ERAS = [
  ['modern', modernCall],
  ['legacy', legacyCall],
] as const;

describe.each(ERAS)('sdk.caller in the %s era', (_era, call) => {
  it('shows an OAuth caller: subject, client, scopes and the claims the server allows', async () => {
    const seen = (await call('oauthed', { authorization: `Bearer ${token}` })) as {
      caller: Record<string, unknown>;
      frozen: boolean;
      rewritten: boolean;
    };
    expect(seen.frozen).toBe(true);
    expect(seen.rewritten).toBe(false);
    expect(seen.caller).toMatchObject({
      kind: 'oauth',
      subject: 'fixture-user',
      clientId: expect.any(String),
      scopes: ['mcp:tools'],
    });
    // The default list: sub, iss, aud, scope, email, name; nothing else of the token.
    expect(seen.caller.claims).toEqual({
      sub: 'fixture-user',
      iss: as.issuer,
      aud: plane.mcpUrl('oauthed').href,
      scope: 'mcp:tools',
      email: 'ada@example.com',
      name: 'Ada',
    });
    expect(JSON.stringify(seen)).not.toContain(token.split('.')[2]!);
  });

  it('shows an API key by id and label, and nobody on an open server', async () => {
    expect(await call('keyed', { authorization: `Bearer ${apiKey.key}` })).toMatchObject({
      caller: {
        kind: 'apikey',
        key: { id: apiKey.id, label: 'reporting job' },
        scopes: [],
        claims: {},
      },
      frozen: true,
      rewritten: false,
    });
    const open = (await call('open', {})) as { caller: Record<string, unknown> };
    expect(open.caller).toEqual({ kind: 'anonymous', scopes: [], claims: {} });
  });
});

describe('prompt code', () => {
  it('sees its caller as tool code does, in both eras', async () => {
    const headers = { authorization: `Bearer ${apiKey.key}` };
    const modern = new Client(
      { name: 'caller-test', version: '1' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await modern.connect(
      new StreamableHTTPClientTransport(plane.mcpUrl('keyed'), {
        fetch: loopbackFetch,
        requestInit: { headers },
      }),
    );
    const legacy = new LegacyClient({ name: 'caller-test', version: '1' });
    await legacy.connect(
      new LegacyTransport(plane.mcpUrl('keyed'), {
        fetch: loopbackFetch,
        requestInit: { headers },
      }),
    );
    try {
      for (const client of [modern, legacy]) {
        const got = await client.getPrompt({ name: 'who' });
        expect(got.messages[0]!.content).toEqual({ type: 'text', text: 'apikey reporting job' });
      }
    } finally {
      await Promise.all([modern.close(), legacy.close()]);
    }
  });
});

describe('the claims a server lets its code see', () => {
  it('are the ones it lists, within their bound, whatever their names', async () => {
    const changed = await plane.admin('PATCH', '/api/servers/oauthed/settings', {
      callerClaims: ['roles', 'tenant', 'huge', 'missing', 'constructor'],
    });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    const seen = (await modernCall('oauthed', { authorization: `Bearer ${token}` })) as {
      caller: { claims: Record<string, unknown> };
    };
    expect(seen.caller.claims).toEqual({ roles: ['editor'], tenant: 'acme' });
    const none = await plane.admin('PATCH', '/api/servers/oauthed/settings', { callerClaims: [] });
    expect(none.status).toBe(200);
    expect(
      (
        (await legacyCall('oauthed', { authorization: `Bearer ${token}` })) as {
          caller: { claims: object };
        }
      ).caller.claims,
    ).toEqual({});
  });

  it('refuses a list that is not one of names, and changes nothing', async () => {
    for (const callerClaims of [['sub', ''], ['__proto__'], 'sub']) {
      const refused = await plane.admin('PATCH', '/api/servers/oauthed/settings', { callerClaims });
      expect(refused.status, JSON.stringify(callerClaims)).toBe(400);
    }
    const tooMany = await plane.admin('PATCH', '/api/servers/oauthed/settings', {
      callerClaims: Array.from({ length: 33 }, (_, index) => `c${index}`),
    });
    expect(tooMany.status).toBe(400);
    expect((await plane.admin('GET', '/api/servers/oauthed')).body.callerClaims).toEqual([]);
  });

  it('never reach the invocation log, which records who called', async () => {
    const log = await plane.admin('GET', '/api/invocations?server=oauthed');
    expect(log.status).toBe(200);
    const callers = log.body.invocations.map((row: { caller: unknown }) => row.caller);
    expect(callers.length).toBeGreaterThan(0);
    for (const caller of callers) {
      expect(caller).toEqual({
        kind: 'oauth',
        subject: 'fixture-user',
        clientId: expect.any(String),
      });
    }
    expect(JSON.stringify(log.body)).not.toContain('ada@example.com');
  });
});

describe('an admin test run', () => {
  it('says it is one, and not who ran it (an e-mail is not for untrusted code)', async () => {
    const run = await plane.admin('POST', '/api/servers/open/tools/whoami/invoke', { params: {} });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    expect(run.body.result.caller).toEqual({ kind: 'admin', scopes: [], claims: {} });
  });
});
