import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fetchAuthorizationServerMetadata,
  REQUIRED_METADATA_FIELDS,
} from '../../control-plane/identity/index.js';
import {
  startAuthorizationServer,
  type TestAuthorizationServer,
} from '../fixtures/authorization-server.js';
import {
  answerRoutes,
  closedPortUrl,
  startLoopbackServer,
  type LoopbackServer,
  type Route,
} from '../support/loopback-server.js';
import { metadataFailure } from './metadata-failure.js';

const loopback = { allowInsecureLoopback: true };

function completeMetadata(origin: string): Record<string, unknown> {
  return {
    issuer: origin,
    authorization_endpoint: `${origin}/auth`,
    token_endpoint: `${origin}/token`,
    registration_endpoint: `${origin}/reg`,
    jwks_uri: `${origin}/jwks`,
    code_challenge_methods_supported: ['S256'],
  };
}

describe('fetchAuthorizationServerMetadata against the real Authorization Server', () => {
  let as: TestAuthorizationServer;
  beforeAll(async () => {
    as = await startAuthorizationServer();
  });
  afterAll(() => as.close());

  it.each([
    ['the RFC 8414 metadata URL', () => as.metadataUrl],
    ['the OIDC discovery URL', () => `${as.issuer}/.well-known/openid-configuration`],
    ['the issuer base URL', () => as.issuer],
    ['the issuer base URL with a trailing slash', () => `${as.issuer}/`],
  ])('reads %s', async (_label, url) => {
    const { metadata, warnings } = await fetchAuthorizationServerMetadata(url(), loopback);
    expect(metadata.issuer).toBe(as.issuer);
    expect(metadata.jwks_uri).toBe(as.jwksUri);
    expect(metadata.registration_endpoint).toBe(`${as.issuer}/reg`);
    expect(warnings).toEqual([]);
  });

  it('refuses plain-HTTP loopback unless insecure loopback is allowed', async () => {
    const error = await metadataFailure(
      fetchAuthorizationServerMetadata(as.issuer, { allowInsecureLoopback: false }),
    );
    expect(error.message).toBe(
      `the OAuth Server URL ${as.issuer}/ uses plain HTTP; allow insecure loopback URLs (OAUTH_ALLOW_INSECURE_LOOPBACK) for local development`,
    );
  });
});

describe('fetchAuthorizationServerMetadata failures', () => {
  let server: LoopbackServer;
  // The server looks routes up per request, so tests add doctored documents as they go.
  const routes: Record<string, Route> = {};
  beforeAll(async () => {
    server = await startLoopbackServer(answerRoutes(routes));
    routes['/html/.well-known/oauth-authorization-server'] = {
      text: '<html>login</html>',
      contentType: 'text/html',
    };
    routes['/stall/.well-known/oauth-authorization-server'] = { stall: true };
    routes['/tenant/.well-known/openid-configuration'] = { json: completeMetadata(server.url) };
  });
  afterAll(() => server.close());
  /** How many times `path` was requested. */
  const hits = (path: string) => server.requests.filter((target) => target === path).length;

  function serve(name: string, document: Record<string, unknown>): string {
    const path = `/${name}/.well-known/oauth-authorization-server`;
    routes[path] = { json: document };
    return `${server.url}${path}`;
  }

  it.each(REQUIRED_METADATA_FIELDS.map((field) => [field]))('names a missing %s', async (field) => {
    const document = completeMetadata(server.url);
    delete document[field];
    const url = serve(`missing-${field}`, document);
    const error = await metadataFailure(fetchAuthorizationServerMetadata(url, loopback));
    expect(error.message).toBe(
      `the Authorization Server's metadata at ${url} lacks ${field}, which mcphost needs`,
    );
    expect(error.details).toEqual({ url, missing: [field] });
  });

  it('lists every missing field at once', async () => {
    const { issuer, authorization_endpoint, token_endpoint } = completeMetadata(server.url);
    const url = serve('missing-two', { issuer, authorization_endpoint, token_endpoint });
    const error = await metadataFailure(fetchAuthorizationServerMetadata(url, loopback));
    expect(error.message).toBe(
      `the Authorization Server's metadata at ${url} lacks registration_endpoint and jwks_uri, which mcphost needs`,
    );
    expect(error.details).toEqual({ url, missing: ['registration_endpoint', 'jwks_uri'] });
  });

  it('names a field that is not a URL', async () => {
    const url = serve('bad-jwks', { ...completeMetadata(server.url), jwks_uri: 'keys please' });
    const error = await metadataFailure(fetchAuthorizationServerMetadata(url, loopback));
    expect(error.message).toBe(
      `the Authorization Server's metadata at ${url} has invalid jwks_uri`,
    );
    expect(error.details).toEqual({
      url,
      invalid: ['jwks_uri'],
      problems: [{ path: 'jwks_uri', message: expect.stringMatching(/URL/i) }],
    });
  });

  it('refuses endpoints that leave HTTPS for a non-loopback host', async () => {
    const url = serve('plain-jwks', {
      ...completeMetadata(server.url),
      jwks_uri: 'http://keys.example.com/jwks',
    });
    const error = await metadataFailure(fetchAuthorizationServerMetadata(url, loopback));
    expect(error.message).toBe(
      `the Authorization Server's metadata at ${url} gives jwks_uri without HTTPS`,
    );
  });

  it('warns, without failing, when S256 is not advertised', async () => {
    const document = completeMetadata(server.url);
    delete document.code_challenge_methods_supported;
    const url = serve('no-pkce', document);
    const { metadata, warnings } = await fetchAuthorizationServerMetadata(url, loopback);
    expect(metadata.issuer).toBe(server.url);
    expect(warnings).toEqual([
      "the Authorization Server's metadata does not list S256 in code_challenge_methods_supported: MCP clients require PKCE with S256, and may refuse to sign in",
    ]);
    const plainOnly = serve('plain-pkce', {
      ...document,
      code_challenge_methods_supported: ['plain'],
    });
    expect((await fetchAuthorizationServerMetadata(plainOnly, loopback)).warnings).toHaveLength(1);
  });

  it('falls back from RFC 8414 to OpenID discovery for an issuer with a path', async () => {
    const { metadataUrl, metadata } = await fetchAuthorizationServerMetadata(
      `${server.url}/tenant`,
      loopback,
    );
    expect(metadataUrl).toBe(`${server.url}/tenant/.well-known/openid-configuration`);
    expect(metadata.jwks_uri).toBe(`${server.url}/jwks`);
    expect(hits('/.well-known/oauth-authorization-server/tenant')).toBe(1);
    expect(hits('/.well-known/openid-configuration/tenant')).toBe(1);
  });

  it('reports every location tried when none has metadata', async () => {
    const error = await metadataFailure(
      fetchAuthorizationServerMetadata(`${server.url}/nothing`, loopback),
    );
    expect(error.message).toBe(
      `no Authorization Server metadata was found at the OAuth Server URL: ${server.url}/nothing answered HTTP 404; ` +
        `${server.url}/.well-known/oauth-authorization-server/nothing answered HTTP 404; ` +
        `${server.url}/.well-known/openid-configuration/nothing answered HTTP 404; ` +
        `${server.url}/nothing/.well-known/openid-configuration answered HTTP 404; ` +
        'give the issuer or its metadata document URL',
    );
  });

  it('reads a metadata document at a custom path as given, before any well-known path', async () => {
    const url = `${server.url}/custom/metadata.json`;
    routes['/custom/metadata.json'] = { json: completeMetadata(server.url) };
    const { metadataUrl, metadata } = await fetchAuthorizationServerMetadata(url, loopback);
    expect(metadataUrl).toBe(url);
    expect(metadata.jwks_uri).toBe(`${server.url}/jwks`);
    expect(hits('/.well-known/oauth-authorization-server/custom/metadata.json')).toBe(0);
  });

  it('names the missing field of a metadata document at a custom path, and its own URL', async () => {
    const url = `${server.url}/custom/incomplete.json`;
    const document = completeMetadata(server.url);
    delete document.registration_endpoint;
    routes['/custom/incomplete.json'] = { json: document };
    const error = await metadataFailure(fetchAuthorizationServerMetadata(url, loopback));
    expect(error.message).toBe(
      `the Authorization Server's metadata at ${url} lacks registration_endpoint, which mcphost needs`,
    );
  });

  it('falls back to the well-known paths when the URL is a page, not metadata', async () => {
    routes['/issuer-page'] = { text: '<html>welcome</html>', contentType: 'text/html' };
    routes['/issuer-json'] = { json: { realm: 'x', public_key: 'abc' } };
    for (const path of ['/issuer-page', '/issuer-json']) {
      routes[`/.well-known/oauth-authorization-server${path}`] = {
        json: completeMetadata(server.url),
      };
      const { metadataUrl } = await fetchAuthorizationServerMetadata(
        `${server.url}${path}`,
        loopback,
      );
      expect(metadataUrl).toBe(`${server.url}/.well-known/oauth-authorization-server${path}`);
    }
  });

  it('says when the answer is not JSON', async () => {
    const url = `${server.url}/html/.well-known/oauth-authorization-server`;
    const error = await metadataFailure(fetchAuthorizationServerMetadata(url, loopback));
    expect(error.message).toBe(
      `${url} answered HTTP 200, but not with JSON, so no metadata was read: the OAuth Server URL must be the Authorization Server's issuer or its metadata document URL`,
    );
  });

  it('says when the answer is JSON but not an object', async () => {
    const url = `${server.url}/array/.well-known/oauth-authorization-server`;
    routes['/array/.well-known/oauth-authorization-server'] = { json: ['issuer'] };
    const error = await metadataFailure(fetchAuthorizationServerMetadata(url, loopback));
    expect(error.message).toBe(
      `${url} answered JSON that is not an object, so no metadata was read: the OAuth Server URL must be the Authorization Server's issuer or its metadata document URL`,
    );
  });

  it('says when the answer is too large', async () => {
    const url = serve('large', { ...completeMetadata(server.url), padding: 'x'.repeat(2000) });
    const error = await metadataFailure(
      fetchAuthorizationServerMetadata(url, { ...loopback, maxBytes: 1024 }),
    );
    expect(error.message).toBe(
      `${url} answered with more than 1024 bytes, more than a metadata document may have: check the OAuth Server URL`,
    );
  });

  it('gives up after the timeout', async () => {
    const url = `${server.url}/stall/.well-known/oauth-authorization-server`;
    // The stalled route never answers: only the 300 ms timeout can end this call.
    const error = await metadataFailure(
      fetchAuthorizationServerMetadata(url, { ...loopback, timeoutMs: 300 }),
    );
    expect(error.message).toBe(
      `${url} did not answer within 300 ms, so no metadata was read: check the OAuth Server URL and that the Authorization Server is running`,
    );
  });

  it('says when the server is unreachable', async () => {
    const url = `${await closedPortUrl()}/.well-known/oauth-authorization-server`;
    const error = await metadataFailure(fetchAuthorizationServerMetadata(url, loopback));
    expect(error.message).toBe(
      `could not connect to ${url} (ECONNREFUSED), so no metadata was read: check the OAuth Server URL and that the Authorization Server is running`,
    );
  });

  it('refuses plain HTTP to a non-loopback host before any request', async () => {
    let requests = 0;
    const countingFetch: typeof fetch = (...args) => {
      requests += 1;
      return fetch(...args);
    };
    const error = await metadataFailure(
      fetchAuthorizationServerMetadata('http://as.example.com/', {
        ...loopback,
        fetch: countingFetch,
      }),
    );
    expect(error.message).toBe('the OAuth Server URL http://as.example.com/ does not use HTTPS');
    expect(requests).toBe(0);
  });

  it('refuses a string that is not a URL', async () => {
    const error = await metadataFailure(
      fetchAuthorizationServerMetadata('as.example.com', loopback),
    );
    expect(error.message).toBe(
      'the OAuth Server URL "as.example.com" is not a URL: give the Authorization Server\'s issuer (https://auth.example.com) or its metadata document URL',
    );
  });
});
