/**
 * Who is calling the admin API: the bootstrap owner (the admin token), an
 * account through one of its personal tokens (`mcph_pat_…`), or an account
 * through its dashboard session cookie. A bearer header that is present
 * decides alone (a wrong token is refused even with a good cookie); an
 * account that is disabled, a token revoked or expired, a session past its
 * idle time or lifetime: all refused as ERR_UNAUTHORIZED. Uses are recorded
 * at most once a minute per credential (a token's in batches, as API keys'
 * are), so reading the API is not a write.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { parseCookies } from './accounts/index.js';
import {
  credentialStatus,
  hashCredentialSecret,
  looksLikeCredential,
} from './credential-secret.js';
import { McphostError } from '../errors.js';
import type { AccountRecord, Store } from '../store/index.js';
import { bearerOf, type AdminToken } from './admin-token.js';
import { BOOTSTRAP_PRINCIPAL, type Principal } from './principal.js';
import { sessionCookieName } from './session-cookie.js';
import type { Config } from '../config.js';

/** Longest time between two records of a session's use, in ms (shorter for a short idle time). */
const SESSION_TOUCH_MAX_MS = 60_000;

export interface AdminAuthenticatorOptions {
  store: Store;
  token: AdminToken;
  /** A session ends after this long unused, in ms. */
  sessionIdleMs: number;
  /** ADMIN_COOKIE_SECURE: which session cookie name a request may use. */
  cookieSecure: Config['adminCookieSecure'];
  /** Notes a personal token's use (written in batches, never on the request path). */
  tokenUses: { record(id: string, lastUsedAt: string | null): void };
  now?: () => Date;
}

export class AdminAuthenticator {
  readonly #options: AdminAuthenticatorOptions;
  readonly #now: () => Date;
  /** Often enough that a session in use never reaches its idle time between two records. */
  readonly #sessionTouchMs: number;

  constructor(options: AdminAuthenticatorOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => new Date());
    this.#sessionTouchMs = Math.min(SESSION_TOUCH_MAX_MS, options.sessionIdleMs / 4);
  }

  /** The caller, or undefined when the request carries no credential at all. Throws ERR_UNAUTHORIZED for a bad one. */
  async authenticate(req: IncomingMessage): Promise<Principal | undefined> {
    const bearer = bearerOf(req);
    if (bearer !== undefined) return this.#fromBearer(bearer);
    const name = sessionCookieName(req, this.#options.cookieSecure);
    const cookie = parseCookies(req.headers.cookie).get(name);
    return cookie === undefined ? undefined : this.#fromSession(cookie);
  }

  async #fromBearer(bearer: string): Promise<Principal> {
    if (this.#options.token.matches(bearer)) return BOOTSTRAP_PRINCIPAL;
    if (!looksLikeCredential('personal', bearer)) {
      throw new McphostError('ERR_UNAUTHORIZED', 'the admin token is not valid');
    }
    const { store } = this.#options;
    const credential = await store.findCredential('personal', hashCredentialSecret(bearer));
    const status = credential ? credentialStatus(credential, this.#now()) : 'unknown';
    if (credential === undefined || status !== 'active' || credential.accountId === null) {
      throw new McphostError(
        'ERR_UNAUTHORIZED',
        status === 'expired' || status === 'revoked'
          ? `this personal token is ${status}`
          : 'this personal token is not valid',
      );
    }
    const account = await this.#enabledAccount(credential.accountId);
    this.#options.tokenUses.record(credential.id, credential.lastUsedAt);
    return accountPrincipal(account, 'personal-token');
  }

  async #fromSession(cookie: string): Promise<Principal> {
    const { store, sessionIdleMs } = this.#options;
    const idHash = createHash('sha256').update(cookie, 'utf8').digest('hex');
    const session = await store.getAdminSession(idHash);
    const now = this.#now().getTime();
    if (
      session === undefined ||
      Date.parse(session.expiresAt) <= now ||
      Date.parse(session.lastUsedAt) + sessionIdleMs <= now
    ) {
      throw new McphostError('ERR_UNAUTHORIZED', 'the dashboard session has ended: sign in again');
    }
    const account = await this.#enabledAccount(session.accountId);
    if (Date.parse(session.lastUsedAt) + this.#sessionTouchMs <= now) {
      await store.touchAdminSession(idHash);
    }
    return {
      ...accountPrincipal(account, 'session'),
      session: { idHash, csrfToken: session.csrfToken },
    };
  }

  async #enabledAccount(id: string): Promise<AccountRecord> {
    const account = await this.#options.store.findAccount({ id });
    if (account === undefined || account.disabled) {
      throw new McphostError('ERR_UNAUTHORIZED', 'this account is disabled or no longer exists');
    }
    return account;
  }
}

/** The principal of an account. */
export function accountPrincipal(account: AccountRecord, via: Principal['via']): Principal {
  return {
    kind: 'account',
    id: account.id,
    email: account.email,
    name: account.name || account.email,
    role: account.role,
    servers: account.role === 'operator' ? account.servers : [],
    via,
  };
}

/** True when a CSRF token sent equals the session's (constant time). */
export function csrfTokenMatches(sent: string | string[] | undefined, expected: string): boolean {
  if (typeof sent !== 'string') return false;
  const a = createHash('sha256').update(sent).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * True when a browser request comes from the admin side's own origin, or
 * says nothing (non-browser clients send no Origin; browsers send one on
 * every cross-site POST). Cookie writes and sign-ins need it.
 */
export function fromOwnOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  return (
    origin === undefined || (URL.canParse(origin) && new URL(origin).host === req.headers.host)
  );
}
