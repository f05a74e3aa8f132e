/**
 * OpenID Connect sign-in to the admin side, without a browser: a real control
 * plane, a real provider (oidc-provider), the provider's forms walked by the
 * fixture. Who may sign in (a verified e-mail, in any case, links an account;
 * an unverified one never does; a disabled account is refused; a linked
 * account is found by its subject whatever its e-mail becomes, and another
 * subject's e-mail does not take it over), what the flow cookie is and what a
 * missing, tampered, foreign or replayed one does, where the browser may be
 * sent back to, the methods the sign-in screen is offered, a provider that is
 * away, and how a half configuration is refused.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startAuthorizationServer,
  type FixtureAccount,
  type TestAuthorizationServer,
} from '../../fixtures/authorization-server.js';
import { closedPortUrl } from '../../support/loopback-server.js';
import {
  freePort,
  oidcCallbackUrl,
  oidcSignInEnv,
  startTestControlPlane,
  type TestControlPlane,
} from '../../support/control-plane.js';

const FLOW_COOKIE = 'mcph_oidc_flow';
const SESSION_COOKIE = 'mcph_session';
const CLIENT_ID = 'mcphost-admin';
const CLIENT_SECRET = randomBytes(24).toString('base64url');
const LABEL = 'Example Workforce';

/** The provider's people by login name; `erin`'s e-mail changes during a test (the fixture reads it per sign-in). */
const identities: Record<string, FixtureAccount> = {
  alice: { email: 'alice@example.test' },
  carol: { email: 'carol@example.test', email_verified: false },
  dave: { email: 'dave@example.test' },
  erin: { email: 'erin@example.test' },
  mallory: { email: 'erin@example.test' },
  frank: { email: 'Frank@Example.TEST' },
  grace: { email: 'grace@personal.test' },
  zed: {},
};

let as: TestAuthorizationServer;
let plane: TestControlPlane;
let redirectUrl: string;

/** The control plane's environment with single sign-on at the fixture, on `port`. */
function oidcEnv(port: number): Record<string, string> {
  return oidcSignInEnv(port, as.issuer, CLIENT_ID, CLIENT_SECRET);
}

beforeAll(async () => {
  const port = await freePort();
  redirectUrl = oidcCallbackUrl(port);
  as = await startAuthorizationServer({
    accounts: identities,
    clients: [{ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: [redirectUrl] }],
  });
  plane = await startTestControlPlane({ ...oidcEnv(port), ADMIN_OIDC_LABEL: LABEL });
  for (const [email, role] of [
    ['alice@example.test', 'owner'],
    ['carol@example.test', 'viewer'],
    ['dave@example.test', 'viewer'],
    ['erin@example.test', 'viewer'],
    ['frank@example.test', 'viewer'],
  ] as const) {
    const created = await plane.admin('POST', '/api/accounts', { email, role });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  }
  // Linked by the owner beforehand: her e-mail here is not the provider's.
  const grace = await plane.admin('POST', '/api/accounts', {
    email: 'grace@work.test',
    role: 'viewer',
    oidcSubject: 'grace',
  });
  expect(grace.status, JSON.stringify(grace.body)).toBe(201);
  const dave = await accountOf('dave@example.test');
  expect((await plane.admin('PATCH', `/api/accounts/${dave.id}`, { disabled: true })).status).toBe(
    200,
  );
});

afterAll(async () => {
  await plane?.close();
  await as?.close();
});

/** One Set-Cookie line taken apart: its value and its attributes (names lower-cased). */
interface SetCookie {
  value: string;
  attributes: Map<string, string>;
}

/** The Set-Cookie line of `response` for `name`, if any. */
function setCookieOf(response: Response, name: string): SetCookie | undefined {
  const line = response.headers.getSetCookie().find((text) => text.startsWith(`${name}=`));
  if (line === undefined) return undefined;
  const [pair = '', ...rest] = line.split(';');
  const attributes = new Map<string, string>();
  for (const attribute of rest) {
    const [key = '', ...value] = attribute.trim().split('=');
    attributes.set(key.toLowerCase(), value.join('='));
  }
  return { value: pair.slice(name.length + 1), attributes };
}

interface Started {
  response: Response;
  /** The provider's authorization URL the browser is sent to. */
  authorizationUrl: URL;
  /** The sealed flow cookie's value. */
  flow: string;
}

/** `GET /auth/oidc/start`, `returnTo` as given (omitted when undefined). */
async function startSignIn(returnTo?: string): Promise<Started> {
  const query = returnTo === undefined ? '' : `?returnTo=${encodeURIComponent(returnTo)}`;
  const response = await fetch(`${plane.adminUrl}/auth/oidc/start${query}`, {
    redirect: 'manual',
  });
  expect(response.status).toBe(302);
  const flow = setCookieOf(response, FLOW_COOKIE);
  expect(flow?.value).toMatch(/^[A-Za-z0-9_-]{40,}$/);
  return {
    response,
    authorizationUrl: new URL(response.headers.get('location')!),
    flow: flow!.value,
  };
}

interface Landed {
  response: Response;
  /** Where the control plane sent the browser, resolved against the admin side. */
  location: URL;
  /** `name=value` of the session cookie it set, if it set one. */
  session: string | undefined;
  /** The `error` the sign-in screen is to show, if any. */
  error: string | null;
}

/** The browser's arrival at the callback `url`, carrying the flow cookie `flow` (none when undefined). */
async function arriveAtCallback(url: URL, flow: string | undefined): Promise<Landed> {
  const response = await fetch(url, {
    redirect: 'manual',
    headers: flow === undefined ? {} : { cookie: `${FLOW_COOKIE}=${flow}` },
  });
  expect(response.status).toBe(302);
  const location = new URL(response.headers.get('location')!, plane.adminUrl);
  const session = setCookieOf(response, SESSION_COOKIE);
  const [, query = ''] = location.hash.split('?', 2);
  return {
    response,
    location,
    session:
      session === undefined || session.value === ''
        ? undefined
        : `${SESSION_COOKIE}=${session.value}`,
    error: location.hash.startsWith('#/sign-in') ? new URLSearchParams(query).get('error') : null,
  };
}

/** A whole sign-in: start, the provider's login as `login` and consent, the callback with the flow cookie. */
async function signInAs(login: string, returnTo = '#/'): Promise<Landed> {
  const started = await startSignIn(returnTo);
  const back = await as.completeAuthorization(started.authorizationUrl, { login });
  return arriveAtCallback(back, started.flow);
}

/** `GET /api/session` with `cookie`. */
async function sessionWith(cookie: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${plane.adminUrl}/api/session`, { headers: { cookie } });
  return { status: response.status, body: await response.json() };
}

async function accountOf(email: string): Promise<any> {
  const listed = await plane.admin('GET', '/api/accounts');
  return listed.body.accounts.find((account: { email: string }) => account.email === email);
}

/** The newest `sign-in.oidc` audit entry. */
async function latestSignInAudit(): Promise<any> {
  const listed = await plane.admin('GET', '/api/audit?action=sign-in.oidc&limit=1');
  expect(listed.status).toBe(200);
  return listed.body.entries[0];
}

/** Asserts a refusal: back on the sign-in screen with `message`, no session, audited as failed. */
/**
 * The callback refused: back on the sign-in screen, nothing signed in, the
 * flow cookie spent, and an audit entry with `note` — or, with `note` null
 * (no sign-in of ours was under way: any page can send a browser to the
 * callback), no new audit entry at all, so such visits cannot fill the log.
 */
async function expectRefused(
  landed: Landed,
  message: string | RegExp,
  note: string | null,
  auditedBefore?: unknown,
) {
  expect(landed.location.origin).toBe(plane.adminUrl);
  expect(landed.location.pathname).toBe('/');
  expect(landed.error).toMatch(message);
  expect(landed.session).toBeUndefined();
  // The flow cookie is spent either way.
  expect(setCookieOf(landed.response, FLOW_COOKIE)?.attributes.get('max-age')).toBe('0');
  if (note === null) expect(await latestSignInAudit()).toEqual(auditedBefore);
  else expect(await latestSignInAudit()).toMatchObject({ outcome: 'failed', summary: { note } });
}

describe('who signs in', () => {
  it('offers single sign-on under its label', async () => {
    const methods = await fetch(`${plane.adminUrl}/api/auth/methods`);
    expect(methods.status).toBe(200);
    expect(await methods.json()).toEqual({ password: true, oidc: { label: LABEL }, token: true });
  });

  it('signs in the account with the verified e-mail, links it, and sends the browser back', async () => {
    const landed = await signInAs('alice', '#/servers/alpha/tools');
    expect(landed.error).toBeNull();
    expect(landed.location.href).toBe(`${plane.adminUrl}/#/servers/alpha/tools`);
    expect(landed.session).toBeDefined();
    const session = await sessionWith(landed.session!);
    expect(session.status).toBe(200);
    expect(session.body.principal).toMatchObject({
      kind: 'account',
      email: 'alice@example.test',
      role: 'owner',
      via: 'session',
    });
    expect(session.body.csrfToken).toEqual(expect.any(String));
    const alice = await accountOf('alice@example.test');
    expect(alice.oidcSubject).toBe('alice');
    expect(alice.lastSignInAt).not.toBeNull();
    expect(await latestSignInAudit()).toMatchObject({
      outcome: 'ok',
      actor: { kind: 'account', id: alice.id, label: 'alice@example.test' },
      summary: { note: 'OpenID subject linked' },
    });
  });

  it('matches the e-mail whatever its case at the provider', async () => {
    const landed = await signInAs('frank');
    expect(landed.error).toBeNull();
    expect((await sessionWith(landed.session!)).body.principal.email).toBe('frank@example.test');
    expect((await accountOf('frank@example.test')).oidcSubject).toBe('frank');
  });

  it('signs in an account the owner linked to a subject, whatever the e-mails', async () => {
    const landed = await signInAs('grace');
    expect(landed.error).toBeNull();
    expect((await sessionWith(landed.session!)).body.principal.email).toBe('grace@work.test');
    // Found by its link, nothing newly linked.
    expect((await latestSignInAudit()).summary).toEqual({});
  });

  it('never signs in to an account by an e-mail the provider has not verified', async () => {
    const landed = await signInAs('carol');
    await expectRefused(
      landed,
      'The identity provider has not verified carol@example.test, so it cannot be matched to an account here. Ask an owner to link your account.',
      'e-mail not verified by the provider',
    );
    expect((await accountOf('carol@example.test')).oidcSubject).toBeNull();
  });

  it('refuses a disabled account and does not link it', async () => {
    const landed = await signInAs('dave');
    await expectRefused(landed, 'This account is disabled.', 'account disabled');
    const dave = await accountOf('dave@example.test');
    expect(dave).toMatchObject({ oidcSubject: null, lastSignInAt: null });
  });

  it('names the subject when the provider gives no e-mail', async () => {
    const landed = await signInAs('zed');
    await expectRefused(
      landed,
      `There is no account for zed at ${as.issuer} here. Ask an owner to create one.`,
      'no account for this identity',
    );
  });

  it('finds a linked account by its subject, whatever its e-mail at the provider becomes', async () => {
    const first = await signInAs('erin');
    expect(first.session).toBeDefined();
    const erin = await accountOf('erin@example.test');
    expect(erin.oidcSubject).toBe('erin');

    // Another person whose verified e-mail is erin's does not take over a linked account.
    const mallory = await signInAs('mallory');
    await expectRefused(
      mallory,
      'There is no account for erin@example.test here. Ask an owner to create one.',
      'no account for this identity',
    );

    identities.erin!.email = 'erin@elsewhere.test';
    const again = await signInAs('erin');
    expect(again.error).toBeNull();
    expect((await sessionWith(again.session!)).body.principal).toMatchObject({
      id: erin.id,
      email: 'erin@example.test',
    });

    // Unlinked, the account is found by e-mail only, and the provider's is now another.
    const unlinked = await plane.admin('PATCH', `/api/accounts/${erin.id}`, { oidcSubject: null });
    expect(unlinked.status).toBe(200);
    await expectRefused(
      await signInAs('erin'),
      'There is no account for erin@elsewhere.test here. Ask an owner to create one.',
      'no account for this identity',
    );
  });
});

describe('the flow cookie', () => {
  it('is HttpOnly, Lax, scoped to /auth/oidc and short-lived', async () => {
    const { response, authorizationUrl } = await startSignIn('#/audit');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(`${authorizationUrl.origin}${authorizationUrl.pathname}`).toBe(`${as.issuer}/auth`);
    expect(Object.fromEntries(authorizationUrl.searchParams)).toMatchObject({
      client_id: CLIENT_ID,
      redirect_uri: redirectUrl,
      response_type: 'code',
      code_challenge_method: 'S256',
    });
    const { attributes } = setCookieOf(response, FLOW_COOKIE)!;
    expect(attributes.get('path')).toBe('/auth/oidc');
    expect(attributes.has('httponly')).toBe(true);
    expect(attributes.get('samesite')).toBe('Lax');
    expect(attributes.get('max-age')).toBe('600');
    // Plain HTTP on loopback (development): a Secure cookie would never come back.
    expect(attributes.has('secure')).toBe(false);
    expect(attributes.has('domain')).toBe(false);
  });

  it('is required at the callback: without it nothing is signed in', async () => {
    const started = await startSignIn();
    const back = await as.completeAuthorization(started.authorizationUrl, { login: 'alice' });
    const before = await latestSignInAudit();
    await expectRefused(
      await arriveAtCallback(back, undefined),
      'The sign-in took too long or was started elsewhere. Try again.',
      null,
      before,
    );
  });

  it('is refused when tampered with', async () => {
    const started = await startSignIn();
    const back = await as.completeAuthorization(started.authorizationUrl, { login: 'alice' });
    const middle = Math.floor(started.flow.length / 2);
    const flipped = started.flow[middle] === 'A' ? 'B' : 'A';
    const tampered = `${started.flow.slice(0, middle)}${flipped}${started.flow.slice(middle + 1)}`;
    const before = await latestSignInAudit();
    await expectRefused(
      await arriveAtCallback(back, tampered),
      'The sign-in took too long or was started elsewhere. Try again.',
      null,
      before,
    );
  });

  it("is refused with another sign-in's answer (state mismatch)", async () => {
    const mine = await startSignIn();
    const theirs = await startSignIn();
    const back = await as.completeAuthorization(theirs.authorizationUrl, { login: 'alice' });
    await expectRefused(
      await arriveAtCallback(back, mine.flow),
      /state mismatch/,
      'the provider refused or could not be reached',
    );
  });

  it('cannot be used twice: the second arrival is refused', async () => {
    const started = await startSignIn();
    const back = await as.completeAuthorization(started.authorizationUrl, { login: 'alice' });
    expect((await arriveAtCallback(back, started.flow)).session).toBeDefined();
    const replayed = await arriveAtCallback(back, started.flow);
    await expectRefused(
      replayed,
      /did not accept the sign-in/,
      'the provider refused or could not be reached',
    );
  });

  it('says so when the person refuses at the provider', async () => {
    const started = await startSignIn();
    const back = await as.completeAuthorization(started.authorizationUrl, { deny: true });
    await expectRefused(
      await arriveAtCallback(back, started.flow),
      /cancelled or refused at the identity provider \(access_denied\)/,
      'the provider refused or could not be reached',
    );
  });
});

describe('where the browser is sent back', () => {
  it.each([
    ['#/x', '/#/x'],
    ['#/servers/a/tools?x=1', '/#/servers/a/tools?x=1'],
    ['//evil.example', '/#/'],
    ['https://evil.example', '/#/'],
    ['/\\evil.example', '/#/'],
    ['#//evil.example', '/#//evil.example'],
    ['#/\\evil.example', '/'],
    ['javascript:alert(1)', '/#/'],
    [undefined, '/#/'],
  ])('returnTo %s comes back to %s on the admin side', async (returnTo, expected) => {
    const started = await startSignIn(returnTo);
    const back = await as.completeAuthorization(started.authorizationUrl, { login: 'alice' });
    const landed = await arriveAtCallback(back, started.flow);
    expect(landed.session).toBeDefined();
    expect(landed.response.headers.get('location')).toBe(expected);
    expect(landed.location.origin).toBe(plane.adminUrl);
  });

  // The dashboard sends `location.hash`, which browsers percent-encode; a crafted link need not.
  it.each([['#/servers/caf\u00e9'], ['#/servers/\u20ac']])(
    'returnTo %s outside ASCII still signs in and comes back to the admin side',
    async (returnTo) => {
      const started = await startSignIn(returnTo);
      const back = await as.completeAuthorization(started.authorizationUrl, { login: 'alice' });
      const landed = await arriveAtCallback(back, started.flow);
      expect(landed.session).toBeDefined();
      expect(landed.response.headers.get('location')).toMatch(/^\/[\x21-\x7e]*$/);
      expect(landed.location.origin).toBe(plane.adminUrl);
    },
  );

  it('keeps a percent-encoded return route as it is', async () => {
    const started = await startSignIn('#/servers/caf%C3%A9/settings');
    const back = await as.completeAuthorization(started.authorizationUrl, { login: 'alice' });
    const landed = await arriveAtCallback(back, started.flow);
    expect(landed.response.headers.get('location')).toBe('/#/servers/caf%C3%A9/settings');
  });
});

describe('configuration', () => {
  it('answers 404 at /auth/oidc/* when single sign-on is not configured', async () => {
    const plain = await startTestControlPlane();
    try {
      for (const path of [
        '/auth/oidc/start?returnTo=%23%2F',
        '/auth/oidc/callback?code=x&state=y',
      ]) {
        const response = await fetch(`${plain.adminUrl}${path}`, { redirect: 'manual' });
        expect(response.status).toBe(404);
        expect(await response.json()).toMatchObject({ error: { code: 'ERR_NOT_FOUND' } });
      }
      const methods = await fetch(`${plain.adminUrl}/api/auth/methods`);
      expect(await methods.json()).toEqual({ password: true, oidc: null, token: true });
    } finally {
      await plain.close();
    }
  });

  it.each([
    ['ADMIN_OIDC_CLIENT_ID', 'ADMIN_OIDC_REDIRECT_URL'],
    ['ADMIN_OIDC_REDIRECT_URL', 'ADMIN_OIDC_CLIENT_ID'],
  ])('refuses to start with ADMIN_OIDC_ISSUER but no %s', async (missing, present) => {
    const port = await freePort();
    const env = oidcEnv(port);
    delete env[missing];
    const dataDir = mkdtempSync(join(tmpdir(), 'mcphost-oidc-config-'));
    try {
      const error = await startTestControlPlane({ ...env, DATA_DIR: dataDir }).then(
        async (started) => {
          await started.close();
          throw new Error('the control plane started');
        },
        (refusal: unknown) => refusal as { code?: string; message: string },
      );
      expect(error.code).toBe('ERR_CONFIG');
      expect(error.message).toContain(missing);
      expect(error.message).not.toContain(present);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('starts without the provider, and a sign-in started while it is away says so', async () => {
    const port = await freePort();
    const away = await startTestControlPlane({
      ...oidcEnv(port),
      ADMIN_OIDC_ISSUER: await closedPortUrl(),
    });
    try {
      const response = await fetch(`${away.adminUrl}/auth/oidc/start`, { redirect: 'manual' });
      expect(response.status).toBe(302);
      const location = new URL(response.headers.get('location')!, away.adminUrl);
      expect(location.origin).toBe(away.adminUrl);
      expect(location.hash).toMatch(/^#\/sign-in\?error=/);
      expect(new URLSearchParams(location.hash.split('?')[1]).get('error')).toMatch(
        /^The identity provider cannot be used now: .*\(ECONNREFUSED\); try again later\.$/,
      );
      expect(setCookieOf(response, FLOW_COOKIE)).toBeUndefined();
    } finally {
      await away.close();
    }
  });

  it('refuses a redirect URL that is not the callback', async () => {
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), 'mcphost-oidc-config-'));
    try {
      await expect(
        startTestControlPlane({
          ...oidcEnv(port),
          ADMIN_OIDC_REDIRECT_URL: `http://127.0.0.1:${port}/callback`,
          DATA_DIR: dataDir,
        }),
      ).rejects.toMatchObject({
        code: 'ERR_CONFIG',
        message: expect.stringMatching(/ADMIN_OIDC_REDIRECT_URL.*\/auth\/oidc\/callback/),
      });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
