/**
 * The settings of the path address (docs/addresses.md), each on a control
 * plane of its own: ROUTING=host (the path is nothing special: the admin
 * side's 404), ROUTING=path with ADMIN_PORT (the host form is nothing
 * special; path addresses live on PORT only), and PUBLIC_URL with a path
 * prefix (the address, its OAuth resource and metadata carry the prefix; the
 * listener takes the path with the prefix or without it, as a reverse proxy
 * passes it on or strips it) — through the official SDK client's whole
 * OAuth flow against a real Authorization Server.
 */
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startAuthorizationServer,
  type TestAuthorizationServer,
} from '../../fixtures/authorization-server.js';
import {
  freePort,
  startTestControlPlane,
  type TestControlPlane,
} from '../../support/control-plane.js';
import { MemoryOAuthClient } from '../../support/memory-oauth-client.js';
import { postInitialize } from '../../support/mcp-requests.js';

/** No containers are needed: these servers are only initialized and listed. */
const QUIET = { GENERIC_POOL_SIZE: '0', POOL_MIN_WARM: '0' };
const SUB = 'acme';

let hostOnly: TestControlPlane;
let pathOnly: TestControlPlane;
let adminPort: number;
let prefixed: TestControlPlane;
let as: TestAuthorizationServer;

beforeAll(async () => {
  adminPort = await freePort();
  [hostOnly, pathOnly, prefixed, as] = await Promise.all([
    startTestControlPlane({ ...QUIET, ROUTING: 'host', PUBLIC_URL: 'http://127.0.0.1:{port}' }),
    startTestControlPlane({
      ...QUIET,
      ROUTING: 'path',
      ADMIN_PORT: String(adminPort),
      PUBLIC_URL: 'http://127.0.0.1:{port}',
    }),
    startTestControlPlane({ ...QUIET, PUBLIC_URL: 'http://127.0.0.1:{port}/mcphost/' }),
    startAuthorizationServer(),
  ]);
  for (const plane of [hostOnly, pathOnly, prefixed]) {
    expect((await plane.admin('POST', '/api/servers', { subdomain: SUB })).status).toBe(201);
  }
  const oauth = await prefixed.admin('PATCH', `/api/servers/${SUB}/settings`, {
    securityMode: 'oauth2',
    oauthServerUrl: as.metadataUrl,
  });
  expect(oauth.status, JSON.stringify(oauth.body)).toBe(200);
}, 180_000);

afterAll(async () => {
  await Promise.all([hostOnly?.close(), pathOnly?.close(), prefixed?.close(), as?.close()]);
});

const at = (port: number, path: string) => new URL(path, `http://127.0.0.1:${port}`);

async function refusal(response: Response): Promise<{ status: number; message: string }> {
  return { status: response.status, message: (await response.json()).error.message };
}

describe('ROUTING=host', () => {
  it('makes nothing of /servers/{sub}/mcp: the admin side answers 404', async () => {
    for (const path of [
      `/servers/${SUB}/mcp`,
      `/.well-known/oauth-protected-resource/servers/${SUB}/mcp`,
    ]) {
      expect(await refusal(await postInitialize(at(hostOnly.port, path)))).toEqual({
        status: 404,
        message: `no such endpoint: POST ${path}`,
      });
    }
    const byHost = await postInitialize(hostOnly.mcpUrl(SUB));
    expect(byHost.status).toBe(200);
    await byHost.body?.cancel();
  });

  it('shows the host address alone', async () => {
    const view = (await hostOnly.admin('GET', `/api/servers/${SUB}`)).body;
    expect(view.mcpUrls).toEqual({ host: hostOnly.mcpUrl(SUB).href });
    expect(view.mcpUrl).toBe(hostOnly.mcpUrl(SUB).href);
  });
});

describe('ROUTING=path with ADMIN_PORT', () => {
  it('serves the path address on PORT only', async () => {
    const byPath = await postInitialize(at(pathOnly.port, `/servers/${SUB}/mcp`));
    expect(byPath.status).toBe(200);
    await byPath.body?.cancel();
    expect(await refusal(await postInitialize(at(adminPort, `/servers/${SUB}/mcp`)))).toEqual({
      status: 404,
      message: `no such endpoint: POST /servers/${SUB}/mcp`,
    });
  });

  it('makes nothing of {sub}.{BASE_DOMAIN}: PORT serves no such host, the admin side has no /mcp', async () => {
    expect(await refusal(await postInitialize(pathOnly.mcpUrl(SUB)))).toEqual({
      status: 404,
      message: 'nothing is served for this host on this port',
    });
    const onAdmin = new URL(pathOnly.mcpUrl(SUB));
    onAdmin.port = String(adminPort);
    expect(await refusal(await postInitialize(onAdmin))).toEqual({
      status: 404,
      message: 'no such endpoint: POST /mcp',
    });
  });

  it('shows the path address alone', async () => {
    const view = (await pathOnly.admin('GET', `/api/servers/${SUB}`)).body;
    const path = at(pathOnly.port, `/servers/${SUB}/mcp`).href;
    expect(view.mcpUrls).toEqual({ path });
    expect(view.mcpUrl).toBe(path);
    expect(view.address).toBe(path.replace(/\/mcp$/, ''));
  });
});

describe('PUBLIC_URL with a path prefix', () => {
  const address = () => at(prefixed.port, `/mcphost/servers/${SUB}/mcp`);
  const metadataUrl = () =>
    at(prefixed.port, `/.well-known/oauth-protected-resource/mcphost/servers/${SUB}/mcp`);

  it('names the prefixed address as the resource, with the metadata at the origin', async () => {
    const refused = await postInitialize(address());
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${metadataUrl().href}"`,
    );
    // A proxy that strips the prefix sends the paths without it: the same server, the same resource.
    for (const url of [
      metadataUrl(),
      at(prefixed.port, `/.well-known/oauth-protected-resource/servers/${SUB}/mcp`),
    ]) {
      const metadata = await fetch(url);
      expect(metadata.status, url.href).toBe(200);
      expect((await metadata.json()).resource).toBe(address().href);
    }
    const view = (await prefixed.admin('GET', `/api/servers/${SUB}`)).body;
    expect(view.mcpUrls.path).toBe(address().href);
    expect(view.oauth.protectedResourceMetadataUrl).toBe(metadataUrl().href);
  });

  it('takes a token for that resource with the prefix or without it', async () => {
    const token = await as.issueTokenFor(address().href);
    for (const url of [address(), at(prefixed.port, `/servers/${SUB}/mcp`)]) {
      const response = await postInitialize(url, { authorization: `Bearer ${token}` });
      expect(response.status, url.href).toBe(200);
      await response.body?.cancel();
    }
  });

  it('lets the SDK client authorize through the prefixed address', async () => {
    const provider = new MemoryOAuthClient();
    const first = new LegacyTransport(address(), { authProvider: provider });
    await expect(new LegacyClient({ name: 'oauth', version: '1' }).connect(first)).rejects.toThrow(
      /Unauthorized/i,
    );
    expect(provider.authorizationUrl?.searchParams.get('resource')).toBe(address().href);
    const redirect = await as.completeAuthorization(provider.authorizationUrl!);
    await first.finishAuth(redirect.searchParams.get('code')!);
    const client = new LegacyClient({ name: 'oauth', version: '1' });
    await client.connect(new LegacyTransport(address(), { authProvider: provider }));
    try {
      expect((await client.listTools()).tools).toEqual([]);
    } finally {
      await client.close();
    }
  });
});
