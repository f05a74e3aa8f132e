/**
 * Dashboard sessions as cookies: starting one for an account that signed in
 * (a random value in an HttpOnly, SameSite=Lax cookie; only its SHA-256 is
 * stored, with a CSRF token the page sends back on writes) and ending one.
 * The cookie is Secure with the `__Host-` name (no Domain, Path=/: no
 * subdomain — a hosted server — can set or read it) unless the request came
 * over plain HTTP to a loopback host (development) or ADMIN_COOKIE_SECURE says
 * otherwise.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { clearCookie, serializeCookie } from './accounts/index.js';
import type { Config } from '../config.js';
import type { AccountRecord, Store } from '../store/index.js';

const SECURE_NAME = '__Host-mcph_session';
const PLAIN_NAME = 'mcph_session';

/**
 * The session cookie's name for a request: over HTTPS only the `__Host-` one
 * (a plain-named cookie there may have been planted by a plain-HTTP answer
 * or a sibling host), over plain HTTP to a loopback host the plain one.
 */
export function sessionCookieName(
  req: IncomingMessage,
  setting: Config['adminCookieSecure'],
): string {
  return secureCookieFor(req, setting) ? SECURE_NAME : PLAIN_NAME;
}

const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?$/i;

type CookieSettings = Pick<
  Config,
  'adminCookieSecure' | 'adminSessionMaxHours' | 'adminSessionIdleMinutes'
>;

/** True when the session cookie of this request's answer is to be Secure. */
export function secureCookieFor(
  req: IncomingMessage,
  setting: Config['adminCookieSecure'],
): boolean {
  if (setting !== 'auto') return setting === 'true';
  const encrypted = (req.socket as Partial<TLSSocket>).encrypted === true;
  return encrypted || !LOOPBACK_HOST.test(req.headers.host ?? '');
}

/** Starts a session for `account`; answers the Set-Cookie header and the page's CSRF token. */
export async function startSession(
  store: Store,
  config: CookieSettings,
  req: IncomingMessage,
  account: AccountRecord,
): Promise<{ setCookie: string[]; csrfToken: string }> {
  const value = randomBytes(32).toString('base64url');
  const csrfToken = randomBytes(24).toString('base64url');
  const maxAgeSeconds = config.adminSessionMaxHours * 3600;
  await store.createAdminSession({
    idHash: createHash('sha256').update(value, 'utf8').digest('hex'),
    accountId: account.id,
    csrfToken,
    expiresAt: new Date(Date.now() + maxAgeSeconds * 1000).toISOString(),
  });
  const secure = secureCookieFor(req, config.adminCookieSecure);
  return {
    setCookie: [
      serializeCookie(sessionCookieName(req, config.adminCookieSecure), value, {
        maxAgeSeconds,
        secure,
        httpOnly: true,
        sameSite: 'Lax',
        path: '/',
      }),
    ],
    csrfToken,
  };
}

/** Set-Cookie headers that remove a session cookie under either name. */
export function endSessionCookies(req: IncomingMessage, config: CookieSettings): string[] {
  const secure = secureCookieFor(req, config.adminCookieSecure);
  return [
    clearCookie(SECURE_NAME, { secure: true, httpOnly: true, sameSite: 'Lax', path: '/' }),
    ...(secure
      ? []
      : [clearCookie(PLAIN_NAME, { secure: false, httpOnly: true, sameSite: 'Lax', path: '/' })]),
  ];
}
