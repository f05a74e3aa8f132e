import { createHash, randomBytes } from 'node:crypto';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startAuthorizationServer,
  type TestAuthorizationServer,
} from '../fixtures/authorization-server.js';

const RESOURCE = 'http://fixture.localhost:8080/mcp';

describe('the test Authorization Server fixture', () => {
  let as: TestAuthorizationServer;
  beforeAll(async () => {
    as = await startAuthorizationServer();
  });
  afterAll(() => as.close());

  it('serves both well-known metadata documents with open registration and S256', async () => {
    for (const path of ['oauth-authorization-server', 'openid-configuration']) {
      const metadata = (await (await fetch(`${as.issuer}/.well-known/${path}`)).json()) as Record<
        string,
        unknown
      >;
      expect(metadata).toMatchObject({
        issuer: as.issuer,
        registration_endpoint: `${as.issuer}/reg`,
        jwks_uri: as.jwksUri,
        code_challenge_methods_supported: ['S256'],
      });
    }
  });

  it('completes a dynamic-registration authorization with a code bound to the redirect_uri', async () => {
    const redirectUri = 'http://127.0.0.1:1/callback';
    const registration = await fetch(`${as.issuer}/reg`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        redirect_uris: [redirectUri],
        token_endpoint_auth_method: 'none',
        application_type: 'native',
      }),
    });
    expect(registration.status).toBe(201);
    const { client_id: clientId } = (await registration.json()) as { client_id: string };
    const verifier = randomBytes(32).toString('base64url');
    const authorizationUrl = new URL(`${as.issuer}/auth`);
    authorizationUrl.search = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: redirectUri,
      scope: 'mcp:tools',
      resource: RESOURCE,
      state: 'state-123',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();

    const callback = await as.completeAuthorization(authorizationUrl);
    expect(`${callback.origin}${callback.pathname}`).toBe(redirectUri);
    expect(callback.searchParams.get('state')).toBe('state-123');
    expect(callback.searchParams.get('iss')).toBe(as.issuer);
    const code = callback.searchParams.get('code');
    expect(code).toMatch(/.+/);

    const tokenResponse = await fetch(`${as.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: code ?? '',
        redirect_uri: redirectUri,
        client_id: clientId,
        code_verifier: verifier,
        resource: RESOURCE,
      }).toString(),
    });
    const { access_token: accessToken } = (await tokenResponse.json()) as { access_token: string };
    expect(decodeJwt(accessToken)).toMatchObject({
      aud: RESOURCE,
      iss: as.issuer,
      scope: 'mcp:tools',
      client_id: clientId,
    });
  });

  it('requires PKCE', async () => {
    const registration = await fetch(`${as.issuer}/reg`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        redirect_uris: ['http://127.0.0.1:1/cb'],
        token_endpoint_auth_method: 'none',
        application_type: 'native',
      }),
    });
    const { client_id: clientId } = (await registration.json()) as { client_id: string };
    const url = new URL(`${as.issuer}/auth`);
    url.search = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: 'http://127.0.0.1:1/cb',
      scope: 'mcp:tools',
    }).toString();
    const callback = await as.completeAuthorization(url);
    expect(callback.searchParams.get('error')).toBe('invalid_request');
    expect(callback.searchParams.get('error_description')).toMatch(/PKCE/);
  });

  it('refuses a resource that is not loopback', async () => {
    await expect(as.issueTokenFor('https://api.example.com/mcp')).rejects.toThrow(/invalid_target/);
  });
});
