/**
 * Serves the built dashboard on the admin side: `/` is index.html (the app
 * routes with the URL fragment), `/app.js` and `/app.css` are the bundle. Every answer carries a strict Content-Security-Policy (no
 * inline script, nothing from elsewhere) and may not be framed.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';

/** Options of `createDashboardHandler`. */
export interface DashboardHandlerOptions {
  /** Folder with the built `index.html`, `app.js` and `app.css` (see scripts/build-dashboard.ts). */
  assetsDir: string;
}

/** Content types of the files the build produces; any other file is not served. */
const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/** The policy every dashboard answer carries. */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The page's policy: CodeMirror injects its base theme as a <style> element,
 * allowed by a per-response nonce that the page hands to the editor (meta
 * `csp-nonce`); its `style` attributes (tab size) are allowed, scripts are not.
 */
function pagePolicy(nonce: string): string {
  return DASHBOARD_CSP.replace(
    "style-src 'self'",
    `style-src 'self' 'nonce-${nonce}'; style-src-attr 'unsafe-inline'`,
  );
}

/** The placeholder in index.html that receives the nonce. */
const NONCE_PLACEHOLDER = '<meta name="csp-nonce" content="" />';

/** Builds the handler; it resolves false for requests that are not the dashboard's. */
export function createDashboardHandler(
  options: DashboardHandlerOptions,
): (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<boolean> {
  if (typeof options?.assetsDir !== 'string' || options.assetsDir === '') {
    throw new TypeError('createDashboardHandler: assetsDir must be a non-empty path');
  }
  const root = path.resolve(options.assetsDir);

  return async (req, res, url) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const file = resolveAsset(root, url.pathname);
    if (file === undefined) return false;
    let body: Buffer;
    try {
      body = await readFile(file);
    } catch {
      return false;
    }
    const isPage = file.endsWith('.html');
    let policy = DASHBOARD_CSP;
    if (isPage) {
      const nonce = randomBytes(16).toString('base64');
      policy = pagePolicy(nonce);
      body = Buffer.from(
        body
          .toString('utf8')
          .replace(NONCE_PLACEHOLDER, `<meta name="csp-nonce" content="${nonce}" />`),
      );
    }
    res.writeHead(200, {
      'content-type': CONTENT_TYPES[path.extname(file)]!,
      'content-length': body.length,
      // The page is tiny and names the bundle without a hash: always revalidate.
      'cache-control': isPage ? 'no-store' : 'no-cache',
      'content-security-policy': policy,
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
    });
    res.end(req.method === 'HEAD' ? undefined : body);
    return true;
  };
}

/** The file a path names inside `root`, or undefined (unknown type, traversal, hidden file). */
function resolveAsset(root: string, pathname: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return undefined;
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return undefined;
  if (decoded === '/' || decoded === '/index.html') return path.join(root, 'index.html');
  const segments = decoded.split('/').filter((segment) => segment !== '');
  if (segments.some((segment) => segment === '..' || segment.startsWith('.'))) return undefined;
  const extension = path.extname(decoded);
  if (!(extension in CONTENT_TYPES) || extension === '.html') return undefined;
  const file = path.resolve(root, ...segments);
  // Belt and braces: whatever the segments were, the file must sit under root.
  if (!file.startsWith(root + path.sep)) return undefined;
  return file;
}
