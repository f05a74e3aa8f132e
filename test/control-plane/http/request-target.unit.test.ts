/**
 * The request target a listener takes (pure logic): plain origin-form paths
 * only; anything a URL parser and a reverse proxy could read differently is
 * refused, and nothing throws.
 */
import { describe, expect, it } from 'vitest';
import { parseRequestTarget } from '../../../control-plane/http/request-target.js';

describe('parseRequestTarget', () => {
  it('takes plain paths with their query', () => {
    for (const target of [
      '/',
      '/mcp',
      '/servers/acme/mcp?x=1',
      '/api/servers/acme/tools/a%20b',
      '/.well-known/oauth-protected-resource/servers/acme/mcp',
      '/assets/app.js',
      '/a/.hidden',
      '/a/..b',
      '/a?next=/../x',
    ]) {
      const url = parseRequestTarget(target);
      expect(url, target).toBeDefined();
      expect(`${url!.pathname}${url!.search}`, target).toBe(target);
    }
  });

  it('refuses what a parser and a proxy would read apart, and what does not parse', () => {
    for (const target of [
      undefined,
      '',
      '*',
      'http://other/servers/beta/mcp',
      '//a:99999/x',
      '//[',
      '//%',
      '//a b/',
      '//servers/api/servers',
      '/servers/alpha/../beta/mcp',
      '/servers/alpha/%2e%2e/beta/mcp',
      '/servers/alpha/%2E./beta/mcp',
      '/./servers/beta/mcp',
      '/servers/x/..',
      '/servers\\beta\\mcp',
      '/x/..\\servers/beta/mcp',
      '/a b',
    ]) {
      expect(parseRequestTarget(target), String(target)).toBeUndefined();
    }
  });
});
