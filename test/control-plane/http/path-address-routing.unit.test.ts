/**
 * The request router's decisions (pure logic): a server's host takes every
 * path; elsewhere exactly `[prefix]/servers/{sub}/mcp` and its RFC 9728
 * path-suffixed metadata are the server's, `{sub}` by the subdomain rule;
 * a form ROUTING turns off is nobody's. And the configuration behind it:
 * ROUTING and PUBLIC_URL parsed and refused, the addresses every view and the
 * banner show, the preferred one.
 */
import { describe, expect, it } from 'vitest';
import {
  loadConfig,
  preferredAddressForm,
  preferredMcpUrl,
  publicListenerUrl,
  publicPathHosts,
  serverMcpUrls,
} from '../../../control-plane/config.js';
import { serverResourceAt } from '../../../control-plane/http/index.js';
import {
  createRequestRouter,
  type RoutingOptions,
} from '../../../control-plane/http/request-routing.js';

const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];
const BOTH: RoutingOptions = {
  baseDomain: 'localhost',
  hostForm: true,
  pathForm: { prefix: '', hosts: LOOPBACK },
};

describe('createRequestRouter', () => {
  const route = createRequestRouter(BOTH);

  it('gives every path of a server host to that server, by host', () => {
    expect(route('acme.localhost:8080', '/mcp')).toEqual({
      side: 'hosted',
      subdomain: 'acme',
      form: 'host',
      endpoint: 'mcp',
    });
    expect(route('ACME.localhost', '/.well-known/oauth-protected-resource/mcp')).toMatchObject({
      subdomain: 'acme',
      endpoint: 'metadata',
    });
    // On a server's own host, a path address of another server is just a path it lacks.
    expect(route('acme.localhost', '/servers/other/mcp')).toEqual({
      side: 'hosted',
      subdomain: 'acme',
      form: 'host',
      endpoint: 'unknown',
    });
  });

  it('gives exactly /servers/{sub}/mcp and its metadata on PUBLIC_URL’s host, by path', () => {
    for (const host of ['127.0.0.1:8080', 'localhost', '[::1]:8080', 'LocalHost:1']) {
      expect(route(host, '/servers/acme/mcp')).toEqual({
        side: 'hosted',
        subdomain: 'acme',
        form: 'path',
        endpoint: 'mcp',
      });
    }
    expect(route('localhost', '/.well-known/oauth-protected-resource/servers/acme-2/mcp')).toEqual({
      side: 'hosted',
      subdomain: 'acme-2',
      form: 'path',
      endpoint: 'metadata',
    });
  });

  it('is no server’s on any other host: a deeper name, an address, none', () => {
    for (const host of [undefined, '', 'a.b.localhost', '203.0.113.7', 'localhost.evil', '[::2]']) {
      expect(route(host, '/servers/acme/mcp'), String(host)).toEqual({ side: 'admin' });
    }
  });

  it('leaves anything near it to the admin side', () => {
    for (const path of [
      '/servers/acme/mcp/',
      '/servers/acme/mcp/x',
      '/servers/acme',
      '/servers/acme/mcpx',
      '/servers//mcp',
      '/servers/ACME/mcp',
      '/servers/a.b/mcp',
      '/servers/-acme/mcp',
      '/servers/%61cme/mcp',
      `/servers/${'a'.repeat(64)}/mcp`,
      '/x/servers/acme/mcp',
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource/servers/acme/mcp/',
      '/.well-known/oauth-protected-resourceservers/acme/mcp',
      '/api/servers/acme',
      '/',
      '/mcp',
    ]) {
      expect(route('localhost:8080', path), path).toEqual({ side: 'admin' });
    }
  });

  it('takes PUBLIC_URL’s path prefix, passed on or stripped by a proxy', () => {
    const prefixed = createRequestRouter({
      ...BOTH,
      pathForm: { prefix: '/mcphost', hosts: ['mcp.example.com'] },
    });
    for (const path of ['/servers/acme/mcp', '/mcphost/servers/acme/mcp']) {
      expect(prefixed('mcp.example.com', path), path).toMatchObject({ endpoint: 'mcp' });
    }
    for (const path of [
      '/.well-known/oauth-protected-resource/mcphost/servers/acme/mcp',
      '/.well-known/oauth-protected-resource/servers/acme/mcp',
    ]) {
      expect(prefixed('mcp.example.com', path), path).toMatchObject({ endpoint: 'metadata' });
    }
    for (const path of ['/mcphostservers/acme/mcp', '/other/servers/acme/mcp', '/mcphost/mcp']) {
      expect(prefixed('mcp.example.com', path), path).toEqual({ side: 'admin' });
    }
  });

  it('makes nothing special of a form that is off', () => {
    const hostOnly = createRequestRouter({ ...BOTH, pathForm: null });
    expect(hostOnly('localhost', '/servers/acme/mcp')).toEqual({ side: 'admin' });
    expect(hostOnly('acme.localhost', '/mcp')).toMatchObject({ form: 'host' });
    const pathOnly = createRequestRouter({ ...BOTH, hostForm: false });
    expect(pathOnly('acme.localhost', '/mcp')).toEqual({ side: 'admin' });
    expect(pathOnly('localhost', '/servers/acme/mcp')).toMatchObject({
      subdomain: 'acme',
      form: 'path',
    });
  });
});

describe('ROUTING and PUBLIC_URL', () => {
  const load = (env: Record<string, string>) =>
    loadConfig({ PORT: '9000', ...env }, '/nonexistent/.env');

  it('default to both forms, the path form on http://localhost:{PORT}, preferred for localhost', () => {
    const config = load({});
    expect(config.routing).toEqual({ host: true, path: true });
    expect(serverMcpUrls(config, 'acme')).toEqual({
      host: 'http://acme.localhost:9000/mcp',
      path: 'http://localhost:9000/servers/acme/mcp',
    });
    expect(preferredMcpUrl(config, 'acme')).toBe('http://localhost:9000/servers/acme/mcp');
  });

  it('prefer the host form for another BASE_DOMAIN, and the only form when one is off', () => {
    const production = load({
      BASE_DOMAIN: 'mcp.example.com',
      PUBLIC_URL_TEMPLATE: 'https://{subdomain}.mcp.example.com',
      PUBLIC_URL: 'https://mcp.example.com/',
    });
    expect(preferredAddressForm(production)).toBe('host');
    expect(serverMcpUrls(production, 'acme')).toEqual({
      host: 'https://acme.mcp.example.com/mcp',
      path: 'https://mcp.example.com/servers/acme/mcp',
    });
    const pathOnly = load({ ROUTING: 'path', BASE_DOMAIN: 'mcp.example.com' });
    expect(serverMcpUrls(pathOnly, 'acme')).toEqual({
      path: 'http://localhost:9000/servers/acme/mcp',
    });
    expect(preferredMcpUrl(pathOnly, 'acme')).toBe('http://localhost:9000/servers/acme/mcp');
    const hostOnly = load({ ROUTING: ' Host ' });
    expect(serverMcpUrls(hostOnly, 'acme')).toEqual({ host: 'http://acme.localhost:9000/mcp' });
    expect(preferredMcpUrl(hostOnly, 'acme')).toBe('http://acme.localhost:9000/mcp');
  });

  it('keep a path prefix, normalised, for addresses and their OAuth resource', () => {
    const config = load({ PUBLIC_URL: 'HTTPS://Proxy.Example:443/tools/mcphost//' });
    expect(publicListenerUrl(config)).toBe('https://proxy.example/tools/mcphost');
    expect(serverResourceAt(config, 'acme', 'path')).toEqual({
      resource: 'https://proxy.example/tools/mcphost/servers/acme/mcp',
      protectedResourceMetadataUrl:
        'https://proxy.example/.well-known/oauth-protected-resource/tools/mcphost/servers/acme/mcp',
    });
    expect(serverResourceAt(config, 'acme', 'host')).toEqual({
      resource: 'http://acme.localhost:9000/mcp',
      protectedResourceMetadataUrl:
        'http://acme.localhost:9000/.well-known/oauth-protected-resource',
    });
    expect(serverResourceAt(load({ ROUTING: 'host' }), 'acme', 'path')).toBeUndefined();
  });

  it('refuse what cannot be an address, naming the variable', () => {
    const refused: Record<string, RegExp> = {
      ',': /ROUTING=",": names no form/,
      'host,dns': /ROUTING="host,dns": each form is host or path/,
      'path,path': /ROUTING="path,path": names a form twice/,
    };
    for (const [value, message] of Object.entries(refused)) {
      expect(() => load({ ROUTING: value }), value).toThrow(message);
    }
    const badUrls: Record<string, RegExp> = {
      'localhost:8080': /must be an http\(s\) URL/,
      '/servers': /must be an absolute URL/,
      'http://localhost:8080/?x=1': /no query, fragment or user/,
      'http://user:pw@localhost:8080': /no query, fragment or user/,
      'https://example.com/api': /may not begin with \/api/,
      'https://example.com/api/v1': /may not begin with \/api/,
      'http://{subdomain}.localhost:8080': /belongs in PUBLIC_URL_TEMPLATE/,
      'https://example.com/servers': /may not begin with \/servers or \/.well-known/,
      'https://example.com/.well-known/x': /may not begin with \/servers or \/.well-known/,
    };
    for (const [value, message] of Object.entries(badUrls)) {
      expect(() => load({ PUBLIC_URL: value }), value).toThrow(message);
    }
    // A host that is a server's name under BASE_DOMAIN would be that server's.
    expect(() => load({ PUBLIC_URL: 'http://mcp.localhost:{port}' })).toThrow(
      /PUBLIC_URL=http:\/\/mcp.localhost:\{port\}: its host mcp.localhost is a server's name under BASE_DOMAIN=localhost/,
    );
    expect(() =>
      load({ BASE_DOMAIN: 'example.com', PUBLIC_URL: 'https://mcp.example.com' }),
    ).toThrow(/is a server's name/);
    // Not with the host form off, nor for the base domain itself or a deeper name.
    expect(load({ ROUTING: 'path', PUBLIC_URL: 'http://mcp.localhost:{port}' }).routing.path).toBe(
      true,
    );
    for (const url of ['https://example.com', 'https://a.b.example.com']) {
      expect(load({ BASE_DOMAIN: 'example.com', PUBLIC_URL: url }).publicUrl).toBe(url);
    }
    // /apis is not /api.
    expect(publicListenerUrl(load({ PUBLIC_URL: 'https://example.com/apis' }))).toBe(
      'https://example.com/apis',
    );
  });
});

describe('publicPathHosts', () => {
  const load = (env: Record<string, string>) =>
    loadConfig({ PORT: '9000', ...env }, '/nonexistent/.env');

  it('is every name of this machine for a loopback PUBLIC_URL, else its one host', () => {
    for (const url of ['http://localhost:{port}', 'http://127.0.0.1:{port}', 'http://[::1]:9']) {
      expect(publicPathHosts(load({ PUBLIC_URL: url })), url).toEqual(LOOPBACK);
    }
    expect(publicPathHosts(load({ PUBLIC_URL: 'https://MCP.example.com/p' }))).toEqual([
      'mcp.example.com',
    ]);
  });
});
