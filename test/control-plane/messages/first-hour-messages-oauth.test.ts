/**
 * Saving OAuth 2.0 settings whose Authorization Server metadata cannot be
 * read or used: each refusal is worded with the Settings form's field ("OAuth
 * Server URL") and says what happened — no connection, an HTTP status, an
 * answer that is not JSON, fields missing — never that metadata was read
 * when none was. A real control plane, against a real HTTP server on loopback.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import {
  answerRoutes,
  closedPortUrl,
  startLoopbackServer,
  type LoopbackServer,
  type Route,
} from '../../support/loopback-server.js';

const SUB = 'oauthwords';
const routes: Record<string, Route> = {};
let plane: TestControlPlane;
let upstream: LoopbackServer;

function metadata(origin: string): Record<string, unknown> {
  return {
    issuer: origin,
    authorization_endpoint: `${origin}/auth`,
    token_endpoint: `${origin}/token`,
    registration_endpoint: `${origin}/reg`,
    jwks_uri: `${origin}/jwks`,
    code_challenge_methods_supported: ['S256'],
  };
}

beforeAll(async () => {
  [plane, upstream] = await Promise.all([
    startTestControlPlane({
      SANDBOX_DRIVER: 'process',
      GENERIC_POOL_SIZE: '0',
      POOL_MIN_WARM: '0',
    }),
    startLoopbackServer(answerRoutes(routes)),
  ]);
  expect((await plane.admin('POST', '/api/servers', { subdomain: SUB })).status).toBe(201);
}, 120_000);

afterAll(async () => {
  await Promise.all([plane?.close(), upstream?.close()]);
});

/** The refusal of saving OAuth 2.0 with `oauthServerUrl`; the settings stay as they were. */
async function refusal(oauthServerUrl: string): Promise<string> {
  const saved = await plane.admin('PATCH', `/api/servers/${SUB}/settings`, {
    securityMode: 'oauth2',
    oauthServerUrl,
  });
  expect(saved.status).toBe(422);
  expect(saved.body.error.code).toBe('ERR_OAUTH_METADATA');
  expect((await plane.admin('GET', `/api/servers/${SUB}`)).body.securityMode).toBe('none');
  return saved.body.error.message;
}

it('says it could not connect, and that no metadata was read', async () => {
  const url = `${await closedPortUrl()}/.well-known/oauth-authorization-server`;
  expect(await refusal(url)).toBe(
    `could not connect to ${url} (ECONNREFUSED), so no metadata was read: check the OAuth Server URL and that the Authorization Server is running`,
  );
});

it('names each HTTP status of each location tried', async () => {
  const base = `${upstream.url}/nothing`;
  expect(await refusal(base)).toBe(
    'no Authorization Server metadata was found at the OAuth Server URL: ' +
      `${base} answered HTTP 404; ` +
      `${upstream.url}/.well-known/oauth-authorization-server/nothing answered HTTP 404; ` +
      `${upstream.url}/.well-known/openid-configuration/nothing answered HTTP 404; ` +
      `${base}/.well-known/openid-configuration answered HTTP 404; ` +
      'give the issuer or its metadata document URL',
  );
});

it('says when the answer is not JSON', async () => {
  routes['/html/.well-known/oauth-authorization-server'] = {
    text: '<html>sign in</html>',
    contentType: 'text/html',
  };
  const url = `${upstream.url}/html/.well-known/oauth-authorization-server`;
  expect(await refusal(url)).toBe(
    `${url} answered HTTP 200, but not with JSON, so no metadata was read: the OAuth Server URL must be the Authorization Server's issuer or its metadata document URL`,
  );
});

it('names the fields the metadata lacks', async () => {
  const {
    registration_endpoint: _dropped,
    jwks_uri: _alsoDropped,
    ...rest
  } = metadata(upstream.url);
  routes['/partial/.well-known/oauth-authorization-server'] = { json: rest };
  const url = `${upstream.url}/partial/.well-known/oauth-authorization-server`;
  expect(await refusal(url)).toBe(
    `the Authorization Server's metadata at ${url} lacks registration_endpoint and jwks_uri, which mcphost needs`,
  );
});

it('saves metadata without S256, warning in words of its own', async () => {
  const { code_challenge_methods_supported: _none, ...withoutPkce } = metadata(upstream.url);
  routes['/.well-known/oauth-authorization-server'] = { json: withoutPkce };
  const saved = await plane.admin('PATCH', `/api/servers/${SUB}/settings`, {
    securityMode: 'oauth2',
    oauthServerUrl: upstream.url,
  });
  expect(saved.status).toBe(200);
  expect(saved.body.warnings).toContain(
    "the Authorization Server's metadata does not list S256 in code_challenge_methods_supported: MCP clients require PKCE with S256, and may refuse to sign in",
  );
});
