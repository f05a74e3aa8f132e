import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authenticateBearer,
  createAccessTokenVerifier,
  resourceMetadataUrlFor,
  resourceUrlFor,
  type BearerContext,
} from '../../control-plane/identity/index.js';
import {
  startAuthorizationServer,
  type TestAuthorizationServer,
} from '../fixtures/authorization-server.js';
import { closedPortUrl } from '../support/loopback-server.js';

const ADDRESS = 'http://bearer.localhost:8080';
const RESOURCE = resourceUrlFor(ADDRESS);
const METADATA_URL = resourceMetadataUrlFor(ADDRESS);
const MCP_URL = new URL(RESOURCE);

describe('authenticateBearer', () => {
  let as: TestAuthorizationServer;
  let context: BearerContext;
  beforeAll(async () => {
    as = await startAuthorizationServer({ scopes: ['mcp:tools', 'mcp:admin'] });
    context = {
      verifier: createAccessTokenVerifier({
        issuer: as.issuer,
        jwksUri: as.jwksUri,
        audience: RESOURCE,
        allowInsecureLoopback: true,
      }),
      resourceMetadataUrl: METADATA_URL,
    };
  });
  afterAll(() => as.close());

  it('lets a valid token through with the caller', async () => {
    const token = await as.issueTokenFor(RESOURCE);
    const outcome = await authenticateBearer(
      { authorizationHeader: `Bearer ${token}`, url: MCP_URL },
      context,
    );
    expect(outcome).toMatchObject({ ok: true, caller: { subject: 'fixture-machine-client' } });
    const lowerCase = await authenticateBearer(
      { authorizationHeader: `bearer ${token}`, url: MCP_URL },
      context,
    );
    expect(lowerCase.ok).toBe(true);
  });

  it.each([
    ['no Authorization header', undefined],
    ['another scheme', 'Basic dXNlcjpwYXNz'],
  ])('answers 401 with only resource_metadata for %s', async (_label, authorizationHeader) => {
    const outcome = await authenticateBearer({ authorizationHeader, url: MCP_URL }, context);
    expect(outcome).toEqual({
      ok: false,
      status: 401,
      wwwAuthenticate: `Bearer resource_metadata="${METADATA_URL}"`,
      body: { error: 'invalid_token', error_description: 'a Bearer access token is required' },
    });
  });

  it('answers 401 invalid_token with a description for a bad token', async () => {
    const token = await as.issueTokenFor('http://elsewhere.localhost:8080/mcp');
    const outcome = await authenticateBearer(
      { authorizationHeader: `Bearer ${token}`, url: MCP_URL },
      context,
    );
    expect(outcome).toEqual({
      ok: false,
      status: 401,
      wwwAuthenticate: `Bearer resource_metadata="${METADATA_URL}", error="invalid_token", error_description="token audience does not include this resource"`,
      body: {
        error: 'invalid_token',
        error_description: 'token audience does not include this resource',
      },
    });
  });

  it('answers 401 for characters a bearer token cannot contain', async () => {
    const outcome = await authenticateBearer(
      { authorizationHeader: 'Bearer a"b c', url: MCP_URL },
      context,
    );
    expect(outcome).toMatchObject({ ok: false, status: 401, body: { error: 'invalid_token' } });
  });

  it('answers 400 invalid_request for an empty Bearer credential', async () => {
    const outcome = await authenticateBearer(
      { authorizationHeader: 'Bearer   ', url: MCP_URL },
      context,
    );
    expect(outcome).toMatchObject({ ok: false, status: 400, body: { error: 'invalid_request' } });
  });

  it('refuses a token in the query string with 400 invalid_request, even a valid one', async () => {
    const token = await as.issueTokenFor(RESOURCE);
    const url = new URL(`${RESOURCE}?access_token=${token}`);
    const outcome = await authenticateBearer(
      { authorizationHeader: `Bearer ${token}`, url },
      context,
    );
    expect(outcome).toEqual({
      ok: false,
      status: 400,
      wwwAuthenticate: `Bearer resource_metadata="${METADATA_URL}", error="invalid_request", error_description="access tokens are accepted only in the Authorization header"`,
      body: {
        error: 'invalid_request',
        error_description: 'access tokens are accepted only in the Authorization header',
      },
    });
  });

  it('answers 403 insufficient_scope with the scopes needed', async () => {
    const token = await as.issueTokenFor(RESOURCE, { scope: 'mcp:tools' });
    const outcome = await authenticateBearer(
      { authorizationHeader: `Bearer ${token}`, url: MCP_URL },
      { ...context, requiredScopes: ['mcp:tools', 'mcp:admin'] },
    );
    expect(outcome).toEqual({
      ok: false,
      status: 403,
      wwwAuthenticate: `Bearer resource_metadata="${METADATA_URL}", error="insufficient_scope", scope="mcp:tools mcp:admin", error_description="token lacks required scope: mcp:admin"`,
      body: {
        error: 'insufficient_scope',
        error_description: 'token lacks required scope: mcp:admin',
      },
    });
  });

  it("maps the verifier's own required scopes to 403 too", async () => {
    const token = await as.issueTokenFor(RESOURCE, { scope: 'mcp:tools' });
    const strict = createAccessTokenVerifier({
      issuer: as.issuer,
      jwksUri: as.jwksUri,
      audience: RESOURCE,
      requiredScopes: ['mcp:admin'],
      allowInsecureLoopback: true,
    });
    const outcome = await authenticateBearer(
      { authorizationHeader: `Bearer ${token}`, url: MCP_URL },
      { ...context, verifier: strict },
    );
    expect(outcome).toMatchObject({ ok: false, status: 403 });
    expect(outcome.ok === false && outcome.wwwAuthenticate).toContain('scope="mcp:admin"');
  });

  it('rethrows a JWKS outage instead of blaming the token', async () => {
    const token = await as.issueTokenFor(RESOURCE);
    const down = createAccessTokenVerifier({
      issuer: as.issuer,
      jwksUri: `${await closedPortUrl()}/jwks`,
      audience: RESOURCE,
      allowInsecureLoopback: true,
    });
    await expect(
      authenticateBearer(
        { authorizationHeader: `Bearer ${token}`, url: MCP_URL },
        { ...context, verifier: down },
      ),
    ).rejects.toMatchObject({ code: 'ERR_AUTH_SERVER_UNAVAILABLE' });
  });
});
