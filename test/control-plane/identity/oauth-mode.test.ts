/**
 * OAuth 2.0 mode end to end: a real Authorization Server (oidc-provider), the
 * official MCP SDK client running the whole flow (401 → protected-resource
 * metadata → AS metadata → dynamic registration → authorize with PKCE →
 * token), save-time validation through the admin API, and token attacks
 * over real HTTP.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startAuthorizationServer,
  type TestAuthorizationServer,
} from '../../fixtures/authorization-server.js';
import { signToken, unsignedToken, validClaims } from '../../auth/helpers/forge-token.js';
import {
  answerRoutes,
  closedPortUrl,
  startLoopbackServer,
  type LoopbackServer,
  type Route,
} from '../../support/loopback-server.js';
import { postInitialize } from '../../support/mcp-requests.js';
import { loopbackFetch } from '../../support/loopback-fetch.js';
import { MemoryOAuthClient } from '../../support/memory-oauth-client.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';

let plane: TestControlPlane;
let as: TestAuthorizationServer;
let doctored: LoopbackServer;
let metadata: Record<string, unknown>;

const SUB = 'secure';
const resource = () => plane.mcpUrl(SUB).href;

async function postMcp(headers: Record<string, string>, path = '/mcp') {
  return postInitialize(new URL(path, plane.mcpUrl(SUB)), headers);
}

const challengeOf = (response: Response) => response.headers.get('www-authenticate') ?? '';

beforeAll(async () => {
  // A short refetch cooldown lets the rotation test run without waiting 30 s.
  [plane, as] = await Promise.all([
    startTestControlPlane({ OAUTH_JWKS_COOLDOWN_MS: '200' }),
    startAuthorizationServer({ algorithm: 'ES256' }),
  ]);
  metadata = (await (await fetch(as.metadataUrl)).json()) as Record<string, unknown>;
  const routes: Record<string, Route> = {
    '/not-json': { text: '<html>hello</html>', contentType: 'text/html' },
  };
  for (const field of [
    'issuer',
    'authorization_endpoint',
    'token_endpoint',
    'registration_endpoint',
    'jwks_uri',
  ]) {
    const { [field]: _dropped, ...rest } = metadata;
    routes[`/without-${field}`] = { json: rest };
  }
  doctored = await startLoopbackServer(answerRoutes(routes));
  expect((await plane.admin('POST', '/api/servers', { subdomain: SUB })).status).toBe(201);
  const saved = await plane.admin('PUT', `/api/servers/${SUB}/tools/whoami`, {
    description: 'Says hello.',
    code: "return 'hello, caller';",
  });
  expect(saved.status).toBe(201);
}, 180_000);

afterAll(async () => {
  await Promise.all([plane?.close(), as?.close(), doctored?.close()]);
});

describe('saving the OAuth 2.0 mode', () => {
  async function expectRejected(oauthServerUrl: string, message: RegExp) {
    const before = (await plane.admin('GET', `/api/servers/${SUB}`)).body;
    const response = await plane.admin('PATCH', `/api/servers/${SUB}/settings`, {
      securityMode: 'oauth2',
      oauthServerUrl,
    });
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('ERR_OAUTH_METADATA');
    expect(response.body.error.message).toMatch(message);
    expect((await plane.admin('GET', `/api/servers/${SUB}`)).body).toEqual(before);
  }

  it('refuses an unreachable URL and changes nothing', async () => {
    await expectRejected(`${await closedPortUrl()}/.well-known/oauth-authorization-server`, /.+/);
  });

  it('refuses a document that is not JSON', async () => {
    await expectRejected(`${doctored.url}/not-json`, /JSON/i);
  });

  it.each([
    'issuer',
    'authorization_endpoint',
    'token_endpoint',
    'registration_endpoint',
    'jwks_uri',
  ])('refuses metadata missing %s, naming it', async (field) => {
    await expectRejected(`${doctored.url}/without-${field}`, new RegExp(field));
  });

  it('refuses plain HTTP unless the development flag is set', async () => {
    const strict = await startTestControlPlane({
      OAUTH_ALLOW_INSECURE_LOOPBACK: 'false',
      SANDBOX_DRIVER: 'process',
      GENERIC_POOL_SIZE: '0',
    });
    try {
      expect((await strict.admin('POST', '/api/servers', { subdomain: 'strict' })).status).toBe(
        201,
      );
      const response = await strict.admin('PATCH', '/api/servers/strict/settings', {
        securityMode: 'oauth2',
        oauthServerUrl: as.metadataUrl,
      });
      expect(response.status).toBe(422);
      expect(response.body.error.message).toMatch(/plain HTTP.*OAUTH_ALLOW_INSECURE_LOOPBACK/);
      expect((await strict.admin('GET', '/api/servers/strict')).body.securityMode).toBe('none');
    } finally {
      await strict.close();
    }
  });
});

describe('in OAuth 2.0 mode', () => {
  beforeAll(async () => {
    const response = await plane.admin('PATCH', `/api/servers/${SUB}/settings`, {
      securityMode: 'oauth2',
      oauthServerUrl: as.metadataUrl,
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    // The host address's discovery URLs (the path address's are in path-address.test.ts).
    expect(response.body.oauth).toMatchObject({
      issuer: as.issuer,
      addresses: {
        host: {
          resource: resource(),
          protectedResourceMetadataUrl: `${plane.mcpUrl(SUB).origin}/.well-known/oauth-protected-resource`,
        },
      },
    });
  });

  it('serves protected-resource metadata at both well-known paths', async () => {
    for (const path of [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
    ]) {
      const response = await loopbackFetch(new URL(path, plane.mcpUrl(SUB)));
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        resource: resource(),
        authorization_servers: [as.issuer],
        bearer_methods_supported: ['header'],
      });
    }
  });

  it('lets the official SDK client through the whole flow, then call tools', async () => {
    const provider = new MemoryOAuthClient();
    const first = new StreamableHTTPClientTransport(plane.mcpUrl(SUB), {
      authProvider: provider,
      fetch: loopbackFetch,
    });
    await expect(new Client({ name: 'oauth-test', version: '1' }).connect(first)).rejects.toThrow(
      /Unauthorized/i,
    );
    expect(provider.information?.client_id).toBeTruthy();
    expect(provider.authorizationUrl?.searchParams.get('code_challenge_method')).toBe('S256');
    expect(provider.authorizationUrl?.searchParams.get('resource')).toBe(resource());

    const redirect = await as.completeAuthorization(provider.authorizationUrl!);
    await first.finishAuth(redirect.searchParams.get('code')!);
    expect(provider.saved?.access_token).toBeTruthy();

    const client = new Client({ name: 'oauth-test', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(plane.mcpUrl(SUB), {
        authProvider: provider,
        fetch: loopbackFetch,
      }),
    );
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['whoami']);
    const result = (await client.callTool({ name: 'whoami', arguments: {} })) as CallToolResult;
    expect(result.content).toEqual([{ type: 'text', text: 'hello, caller' }]);
    await client.close();

    const log = await plane.admin('GET', `/api/invocations?server=${SUB}`);
    expect(log.body.invocations[0].caller).toMatchObject({
      kind: 'oauth',
      clientId: provider.information!.client_id,
    });
    expect(JSON.stringify(log.body)).not.toContain(provider.saved!.access_token);
  });

  it('answers a request without a token with 401 and the metadata pointer', async () => {
    const response = await postMcp({});
    expect(response.status).toBe(401);
    expect(challengeOf(response)).toBe(
      `Bearer resource_metadata="${plane.mcpUrl(SUB).origin}/.well-known/oauth-protected-resource"`,
    );
  });

  it('refuses forged and misdirected tokens with invalid_token', async () => {
    const now = Math.floor(Date.now() / 1000);
    const attacks: Record<string, string> = {
      garbage: 'not.a.jwt',
      'alg none': unsignedToken(validClaims(as.issuer, resource())),
      'wrong audience': await as.issueTokenFor('http://other.localhost:1/mcp'),
      expired: await signToken(as.privateJwk, {
        ...validClaims(as.issuer, resource(), now - 7200),
        exp: now - 3600,
      }),
      'wrong issuer': await signToken(as.privateJwk, validClaims('http://127.0.0.1:1', resource())),
    };
    for (const [name, token] of Object.entries(attacks)) {
      const response = await postMcp({ authorization: `Bearer ${token}` });
      expect(response.status, name).toBe(401);
      expect(challengeOf(response), name).toMatch(
        /^Bearer resource_metadata="[^"]+", error="invalid_token", error_description="[^"]+"$/,
      );
    }
  });

  it('refuses a token in the query string', async () => {
    const token = await as.issueTokenFor(resource());
    const response = await postMcp(
      { authorization: `Bearer ${token}` },
      `/mcp?access_token=${token}`,
    );
    expect(response.status).toBe(400);
  });

  it('accepts a valid token and enforces required scopes with 403', async () => {
    const token = await as.issueTokenFor(resource());
    expect((await postMcp({ authorization: `Bearer ${token}` })).status).toBe(200);
    expect(
      (
        await plane.admin('PATCH', `/api/servers/${SUB}/settings`, {
          oauthRequiredScopes: ['admin:all'],
        })
      ).status,
    ).toBe(200);
    const refused = await postMcp({ authorization: `Bearer ${token}` });
    expect(refused.status).toBe(403);
    expect(challengeOf(refused)).toContain('error="insufficient_scope"');
    const prm = await (
      await loopbackFetch(new URL('/.well-known/oauth-protected-resource', plane.mcpUrl(SUB)))
    ).json();
    expect(prm.scopes_supported).toEqual(['admin:all']);
    expect(
      (await plane.admin('PATCH', `/api/servers/${SUB}/settings`, { oauthRequiredScopes: [] }))
        .status,
    ).toBe(200);
    expect((await postMcp({ authorization: `Bearer ${token}` })).status).toBe(200);
  });

  it('accepts tokens signed with a rotated key after refetching the keys', async () => {
    await as.rotateKeys();
    const token = await as.issueTokenFor(resource());
    // Within the 200 ms cooldown since the last key fetch an unknown key is refused without
    // a refetch; after it, the keys are fetched again on demand and the token is accepted.
    await expect
      .poll(async () => (await postMcp({ authorization: `Bearer ${token}` })).status, {
        timeout: 5_000,
      })
      .toBe(200);
  });
});

describe('leaving the OAuth 2.0 mode', () => {
  it('takes effect at once: metadata gone, /mcp open, no restart', async () => {
    expect(
      (await plane.admin('PATCH', `/api/servers/${SUB}/settings`, { securityMode: 'none' })).status,
    ).toBe(200);
    expect(
      (await loopbackFetch(new URL('/.well-known/oauth-protected-resource', plane.mcpUrl(SUB))))
        .status,
    ).toBe(404);
    expect((await postMcp({})).status).toBe(200);
  });

  it('closes anonymous sessions when the mode switches to OAuth 2.0', async () => {
    const client = new Client({ name: 'anon', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(plane.mcpUrl(SUB), { fetch: loopbackFetch }),
    );
    await client.listTools();
    expect(
      (await plane.admin('PATCH', `/api/servers/${SUB}/settings`, { securityMode: 'oauth2' }))
        .status,
    ).toBe(200);
    await expect(client.listTools()).rejects.toThrow();
    await client.close().catch(() => undefined);
  });
});
