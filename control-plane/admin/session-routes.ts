/**
 * Signing in to the dashboard and out again: which methods this service
 * offers, local accounts (e-mail and password, throttled per address and per
 * account), OpenID Connect (authorization code + PKCE, the flow's secrets in
 * a sealed short-lived cookie so the callback may reach any replica), the
 * current session, and signing out. Every sign-in, failed or not, is audited.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import {
  accountLockFor,
  dummyPasswordCheck,
  OIDC_FLOW_TTL_SECONDS,
  parseCookies,
  parseOidcFlowState,
  serializeCookie,
  verifyPassword,
} from '../identity/index.js';
import type { OidcIdentity } from '../identity/index.js';
import { isMcphostError, McphostError } from '../errors.js';
import {
  clientAddressFromHeaders,
  clientNetworkOf,
  sendError,
  sendJson,
  sendNoContent,
} from '../http/index.js';
import { emailSchema, type AccountRecord, type AuditActor } from '../store/index.js';
import { readJson, type AdminContext } from './admin-context.js';
import { principalOf, type AdminRouter, type Principal } from './permissions.js';
import {
  accountPrincipal,
  endSessionCookies,
  secureCookieFor,
  startSession,
} from '../identity/index.js';

/** POST /api/auth/password. */
export const PasswordSignInBody = z.strictObject({
  email: z.string().trim().toLowerCase().min(1).max(320),
  password: z.string().min(1).max(1024),
});

/**
 * The cookie holding an OpenID flow's state between start and callback; with
 * the `__Secure-` prefix whenever the session cookie is Secure, so no plain
 * HTTP answer or sibling host can plant one (a planted flow plus the
 * attacker's own code would sign a browser in as the attacker).
 */
const FLOW_COOKIE = 'mcph_oidc_flow';
const SECURE_FLOW_COOKIE = '__Secure-mcph_oidc_flow';
const FLOW_COOKIE_PATH = '/auth/oidc';
/** Where the dashboard shows a failed single sign-on. */
const SIGN_IN_PAGE = '/#/sign-in';

export function addSessionRoutes(router: AdminRouter, context: AdminContext): void {
  const { config, store, audit } = context;
  const { throttle, oidc, passwordWork } = context.signIn;

  const principalView = (principal: Principal) => ({
    kind: principal.kind,
    id: principal.id,
    email: principal.email,
    name: principal.name,
    role: principal.role,
    servers: principal.servers,
    via: principal.via,
  });

  router.add('GET', '/api/auth/methods', { permission: 'public' }, ({ res }) => {
    sendJson(res, 200, {
      password: true,
      oidc: oidc === undefined ? null : { label: config.adminOidcLabel },
      token: true,
    });
  });

  const password = { permission: 'public', audit: { action: 'sign-in.password' } } as const;
  router.add('POST', '/api/auth/password', password, async ({ req, res }) => {
    const refuse = async (error: McphostError, actor: AuditActor, note: string) => {
      await audit.record(req, actor, { action: 'sign-in.password', outcome: 'failed', note });
      sendError(res, error);
    };
    const address = clientAddressFromHeaders(req.headers) ?? 'unknown';
    const allowed = throttle.take(clientNetworkOf(address));
    if (!allowed.allowed) {
      // Recorded once a minute per network, with its count: a flood of refused attempts adds no rows.
      await audit.recordRefusal(req, anonymousAt(address), {
        action: 'sign-in.password',
        outcome: 'failed',
        reason: 'ERR_SIGN_IN_THROTTLED',
        note: 'too many attempts from this network',
      });
      sendError(res, throttled(allowed.retryAfterSeconds, 'from this address'), {
        'retry-after': String(allowed.retryAfterSeconds),
      });
      return;
    }
    const body = await readJson(req, config.maxBodyBytes, PasswordSignInBody, 'sign-in');
    // What was typed is kept only if it is an e-mail: people type passwords there too.
    const claimed: AuditActor = {
      kind: 'anonymous',
      id: null,
      label: emailSchema.safeParse(body.email).success ? body.email : '(not an e-mail)',
    };
    const account = await store.findAccount({ email: body.email });
    const wrong = new McphostError('ERR_SIGN_IN_FAILED', 'the e-mail or the password is not right');
    if (account === undefined || account.passwordHash === null || account.disabled) {
      // The same work as a real check: the answer's timing does not tell which e-mails exist.
      await passwordWork.run(() => dummyPasswordCheck(body.password));
      await refuse(wrong, claimed, account === undefined ? 'no such account' : 'no local sign-in');
      return;
    }
    const actor: AuditActor = { kind: 'account', id: account.id, label: account.email };
    // Counted before the check, so guesses sent in parallel cannot all pass the lock.
    const attempt = await store.claimSignInAttempt(account.id, accountLockFor);
    if (!attempt.allowed) {
      // Refused even with the right password: otherwise the lock only slows guessing.
      const lockedFor = Math.max(
        1,
        Math.ceil((Date.parse(attempt.lockedUntil) - Date.now()) / 1000),
      );
      // Recorded once a minute per account, with its count, as every refusal is.
      await audit.recordRefusal(req, actor, {
        action: 'sign-in.password',
        outcome: 'failed',
        reason: 'ERR_SIGN_IN_THROTTLED',
        note: 'account locked',
      });
      sendError(res, throttled(lockedFor, 'for this account'), {
        'retry-after': String(lockedFor),
      });
      return;
    }
    const stored = account.passwordHash;
    if (!(await passwordWork.run(() => verifyPassword(body.password, stored)))) {
      await refuse(wrong, actor, `wrong password (${attempt.failures} in a row)`);
      return;
    }
    await store.recordSignIn(account.id);
    const session = await startSession(store, config, req, account);
    await audit.record(req, actor, { action: 'sign-in.password', outcome: 'ok' });
    sendJson(
      res,
      200,
      {
        principal: principalView(accountPrincipal(account, 'session')),
        csrfToken: session.csrfToken,
      },
      { 'set-cookie': session.setCookie },
    );
  });

  router.add('GET', '/api/session', { permission: 'self' }, (route) => {
    const principal = principalOf(route);
    sendJson(route.res, 200, {
      principal: principalView(principal),
      ...(principal.session === undefined ? {} : { csrfToken: principal.session.csrfToken }),
    });
  });

  const signOut = { permission: 'self', audit: { action: 'sign-out' } } as const;
  router.add('DELETE', '/api/session', signOut, async (route) => {
    const principal = principalOf(route);
    if (principal.session === undefined) {
      throw new McphostError(
        'ERR_CONFLICT',
        'this request carries a token, not a dashboard session: there is nothing to sign out; revoke a personal token to end it',
      );
    }
    await store.deleteAdminSession(principal.session.idHash);
    sendNoContent(route.res, { 'set-cookie': endSessionCookies(route.req, config) });
  });

  // Registered whether or not single sign-on is configured: the route table stays one table.
  const requireOidc = () => {
    if (oidc === undefined) {
      throw new McphostError(
        'ERR_NOT_FOUND',
        'single sign-on is not configured here (ADMIN_OIDC_ISSUER is unset)',
      );
    }
    return oidc;
  };

  /** The network's allowance, shared with password sign-ins; false: refused and answered. */
  const throttleOidc = (req: IncomingMessage, res: ServerResponse): boolean => {
    const decision = throttle.take(clientNetworkOf(clientAddressFromHeaders(req.headers)));
    if (decision.allowed) return true;
    const message = `Too many sign-ins from this network: try again in ${decision.retryAfterSeconds} s.`;
    redirect(res, signInPageSaying(message));
    return false;
  };

  router.add('GET', '/auth/oidc/start', { permission: 'public' }, async ({ req, res, url }) => {
    const oidc = requireOidc();
    if (!throttleOidc(req, res)) return;
    // The dashboard routes on the fragment: `returnTo` is one (`#/servers/a`), kept on this origin.
    const returnTo = `/${dashboardFragment(url.searchParams.get('returnTo'))}`;
    let started;
    try {
      started = await oidc.flow.start(returnTo);
    } catch (error) {
      redirect(res, signInError(error));
      return;
    }
    const secure = secureCookieFor(req, config.adminCookieSecure);
    const name = secure ? SECURE_FLOW_COOKIE : FLOW_COOKIE;
    redirect(res, started.redirectUrl, [
      serializeCookie(name, oidc.sealer.seal(started.flow, OIDC_FLOW_TTL_SECONDS), {
        maxAgeSeconds: OIDC_FLOW_TTL_SECONDS,
        secure,
        httpOnly: true,
        sameSite: 'Lax',
        path: FLOW_COOKIE_PATH,
      }),
    ]);
  });

  const callback = { permission: 'public', audit: { action: 'sign-in.oidc' } } as const;
  router.add('GET', '/auth/oidc/callback', callback, async ({ req, res, url }) => {
    const oidc = requireOidc();
    if (!throttleOidc(req, res)) return;
    const secure = secureCookieFor(req, config.adminCookieSecure);
    const flowCookie = secure ? SECURE_FLOW_COOKIE : FLOW_COOKIE;
    const clearFlow = serializeCookie(flowCookie, '', {
      maxAgeSeconds: 0,
      secure,
      httpOnly: true,
      sameSite: 'Lax',
      path: FLOW_COOKIE_PATH,
    });
    const fail = async (actor: AuditActor, note: string, message: string) => {
      await audit.record(req, actor, { action: 'sign-in.oidc', outcome: 'failed', note });
      redirect(res, signInPageSaying(message), [clearFlow]);
    };
    const anonymous = anonymousAt(clientAddressFromHeaders(req.headers) ?? 'unknown');
    const flow = parseOidcFlowState(oidc.sealer.open(flowCookieOf(req, flowCookie)));
    if (flow === undefined) {
      // No sign-in of ours was under way (any page can send a browser here): nothing to record.
      const message = 'The sign-in took too long or was started elsewhere. Try again.';
      redirect(res, signInPageSaying(message), [clearFlow]);
      return;
    }
    let identity: OidcIdentity;
    try {
      identity = await oidc.flow.finish(url, flow);
    } catch (error) {
      await fail(anonymous, 'the provider refused or could not be reached', signInMessage(error));
      return;
    }
    const claimed: AuditActor = {
      kind: 'anonymous',
      id: null,
      label: identity.email ?? `${identity.subject} at ${identity.issuer}`,
    };
    const account = await accountOfIdentity(context, oidc.issuer, identity);
    if (account === undefined || account.disabled) {
      // Said without telling whether an account of that e-mail exists.
      const unverified =
        account === undefined && identity.email !== undefined && !identity.emailVerified;
      await fail(
        claimed,
        unverified
          ? 'e-mail not verified by the provider'
          : account === undefined
            ? 'no account for this identity'
            : 'account disabled',
        unverified
          ? `The identity provider has not verified ${identity.email}, so it cannot be matched to an account here. Ask an owner to link your account.`
          : account === undefined
            ? `There is no account for ${claimed.label} here. Ask an owner to create one.`
            : 'This account is disabled.',
      );
      return;
    }
    const link =
      account.oidcSubject === null
        ? { oidcIssuer: oidc.issuer, oidcSubject: identity.subject }
        : undefined;
    await store.recordSignIn(account.id, link);
    const session = await startSession(store, config, req, account);
    await audit.record(
      req,
      { kind: 'account', id: account.id, label: account.email },
      { action: 'sign-in.oidc', outcome: 'ok', ...(link ? { note: 'OpenID subject linked' } : {}) },
    );
    redirect(res, flow.returnTo, [...session.setCookie, clearFlow]);
  });
}

/**
 * The account of a verified identity: the one linked to its subject, else
 * the one whose e-mail the provider verified (then linked at sign-in). An
 * unverified e-mail never matches: anyone may claim any address at some providers.
 */
async function accountOfIdentity(
  context: AdminContext,
  issuer: string,
  identity: OidcIdentity,
): Promise<AccountRecord | undefined> {
  const linked = await context.store.findAccount({
    oidcIssuer: issuer,
    oidcSubject: identity.subject,
  });
  if (linked !== undefined) return linked;
  if (identity.email === undefined || !identity.emailVerified) return undefined;
  const byEmail = await context.store.findAccount({ email: identity.email.toLowerCase() });
  // An account linked to another subject is that person's: an e-mail does not take it over.
  return byEmail !== undefined && byEmail.oidcSubject === null ? byEmail : undefined;
}

/** An unidentified caller, as the audit log names it: by its address. */
function anonymousAt(address: string): AuditActor {
  return { kind: 'anonymous', id: null, label: address };
}

function throttled(retryAfterSeconds: number, where: string): McphostError {
  return new McphostError(
    'ERR_SIGN_IN_THROTTLED',
    `too many failed sign-ins ${where}: try again in ${retryAfterSeconds} s`,
    { details: { retryAfterSeconds } },
  );
}

/**
 * A dashboard route to come back to: `#/…` only, so the callback cannot be
 * sent elsewhere, and printable ASCII only: it ends up in a Location header,
 * where other characters are mangled or make Node throw (a 500 after the
 * session was started). Browsers percent-encode `location.hash` anyway.
 */
function dashboardFragment(value: string | null): string {
  return value !== null && /^#\/[\x21-\x7e]{0,500}$/.test(value) ? value : '#/';
}

function flowCookieOf(req: IncomingMessage, name: string): string {
  return parseCookies(req.headers.cookie).get(name) ?? '';
}

function redirect(res: ServerResponse, location: string, setCookie: string[] = []): void {
  res
    .writeHead(302, {
      location,
      'cache-control': 'no-store',
      ...(setCookie.length > 0 ? { 'set-cookie': setCookie } : {}),
    })
    .end();
}

/** The dashboard's sign-in screen, showing `message`. */
function signInPageSaying(message: string): string {
  return `${SIGN_IN_PAGE}?error=${encodeURIComponent(message)}`;
}

/** A failure as the sign-in screen says it: a sentence, whoever worded it. */
function signInMessage(error: unknown): string {
  if (!isMcphostError(error)) return 'The sign-in failed.';
  const text = error.message.charAt(0).toUpperCase() + error.message.slice(1);
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

function signInError(error: unknown): string {
  return signInPageSaying(signInMessage(error));
}
