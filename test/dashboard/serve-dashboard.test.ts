/**
 * The dashboard handler over real HTTP: the page and the bundle with their
 * content types and security headers, a fresh CSP nonce per page, HEAD, and
 * nothing else (no traversal, no other methods, no unknown files).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDashboardHandler } from '../../control-plane/dashboard/serve-dashboard.js';
import { startLoopbackServer, type LoopbackServer } from '../support/loopback-server.js';

let root: string;
let assetsDir: string;
let server: LoopbackServer;
let origin: string;

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'mcphost-dashboard-'));
  assetsDir = path.join(root, 'assets');
  // A secret beside the assets folder: traversal must never reach it.
  writeFileSync(path.join(root, 'secret.js'), 'SECRET');
  await import('node:fs/promises').then((fs) => fs.mkdir(assetsDir));
  writeFileSync(
    path.join(assetsDir, 'index.html'),
    '<html><head><meta name="csp-nonce" content="" /></head></html>',
  );
  writeFileSync(path.join(assetsDir, 'app.js'), 'console.log(1);');
  writeFileSync(path.join(assetsDir, 'app.css'), 'body{}');
  writeFileSync(path.join(assetsDir, '.env.js'), 'HIDDEN');
  const handler = createDashboardHandler({ assetsDir });
  server = await startLoopbackServer(async (req, res) => {
    const answered = await handler(req, res, new URL(req.url ?? '/', 'http://x'));
    if (!answered) res.writeHead(404).end('not mine');
  });
  origin = server.url;
});

afterAll(async () => {
  await server.close();
  rmSync(root, { recursive: true, force: true });
});

describe('createDashboardHandler', () => {
  it('serves the page with a strict policy and a fresh style nonce each time', async () => {
    const first = await fetch(`${origin}/`);
    const second = await fetch(`${origin}/index.html`);
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(first.headers.get('x-content-type-options')).toBe('nosniff');
    expect(first.headers.get('cache-control')).toBe('no-store');
    const policy = first.headers.get('content-security-policy')!;
    expect(policy).toContain("default-src 'self'");
    expect(policy).toContain("script-src 'self';");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).not.toMatch(/script-src[^;]*unsafe-inline/);
    const nonce = /'nonce-([^']+)'/.exec(policy)![1]!;
    expect(await first.text()).toContain(`<meta name="csp-nonce" content="${nonce}" />`);
    expect(second.headers.get('content-security-policy')).not.toContain(nonce);
  });

  it('serves the bundle with its content types, HEAD without a body', async () => {
    const script = await fetch(`${origin}/app.js`);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(script.headers.get('cache-control')).toBe('no-cache');
    expect(await script.text()).toBe('console.log(1);');
    const style = await fetch(`${origin}/app.css`, { method: 'HEAD' });
    expect(style.status).toBe(200);
    expect(style.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(style.headers.get('content-length')).toBe('6');
    expect(await style.text()).toBe('');
  });

  it.each([
    '/../secret.js',
    '/%2e%2e/secret.js',
    '/..%2fsecret.js',
    '/assets/..%5c..%5csecret.js',
    '/.env.js',
    '/missing.js',
    '/api/servers',
    '/app.js%00.css',
    '/%E0%A4%A',
  ])('does not answer %s', async (pathname) => {
    const response = await fetch(`${origin}${pathname}`);
    expect(response.status).toBe(404);
    expect(await response.text()).toBe('not mine');
  });

  it('answers only GET and HEAD', async () => {
    const response = await fetch(`${origin}/`, { method: 'POST' });
    expect(response.status).toBe(404);
  });

  it('refuses a missing assets folder option as misuse', () => {
    expect(() => createDashboardHandler({ assetsDir: '' })).toThrow(TypeError);
  });
});
