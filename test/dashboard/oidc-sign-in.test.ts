/**
 * Single sign-on to the dashboard in Debian's Chromium: a real control plane
 * whose OpenID provider is the fixture (oidc-provider). The owner, created
 * with no password, clicks "Sign in with single sign-on" on a deep route,
 * logs in and consents at the provider, and is back on that route signed in
 * with a session cookie that writes work with (CSRF through the page), the
 * sign-in audited and the identity linked to the account. Pressing "Deny" at
 * the provider, and an identity that has no account, come back to the
 * sign-in screen saying why. Screenshots go to test-artifacts/dashboard/.
 *
 * One page serves every sign-in (its problems are recorded by the helper);
 * between sign-ins its cookies are cleared, which makes the provider forget
 * its session as a fresh browser context would.
 */
import { randomBytes } from 'node:crypto';
import type { Page, Response } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  startAuthorizationServer,
  type TestAuthorizationServer,
} from '../fixtures/authorization-server.js';
import {
  freePort,
  oidcCallbackUrl,
  oidcSignInEnv,
  startTestControlPlane,
  type TestControlPlane,
} from '../support/control-plane.js';
import { launchDashboardBrowser, signOut, type DashboardBrowser } from './browser.js';

const OWNER = 'alice@example.test';
const STRANGER = 'bob@example.test';
const CLIENT_ID = 'mcphost-dashboard';
const CLIENT_SECRET = randomBytes(24).toString('base64url');
const EXISTING = `sso-a-${process.pid}`;
const CREATED = `sso-b-${process.pid}`;
/** The deep route the owner starts from, and must come back to. */
const DEEP_ROUTE = `#/servers/${EXISTING}/secrets`;

let as: TestAuthorizationServer;
let plane: TestControlPlane;
let ui: DashboardBrowser;
let page: Page;

beforeAll(async () => {
  const port = await freePort();
  const redirectUrl = oidcCallbackUrl(port);
  as = await startAuthorizationServer({
    accounts: { alice: { email: OWNER }, bob: { email: STRANGER } },
    clients: [{ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: [redirectUrl] }],
  });
  [plane, ui] = await Promise.all([
    startTestControlPlane(oidcSignInEnv(port, as.issuer, CLIENT_ID, CLIENT_SECRET)),
    launchDashboardBrowser(),
  ]);
  page = ui.page;
  expect((await plane.admin('POST', '/api/servers', { subdomain: EXISTING })).status).toBe(201);
  const owner = await plane.admin('POST', '/api/accounts', { email: OWNER, role: 'owner' });
  expect(owner.status, JSON.stringify(owner.body)).toBe(201);
  expect(owner.body).toMatchObject({ password: false, oidcSubject: null });
}, 180_000);

afterAll(async () => {
  await ui?.close();
  await plane?.close();
  await as?.close();
});

/** Opens the dashboard at `route` as a new document (nothing kept from a previous visit). */
async function openDashboard(route: string): Promise<void> {
  await page.goto('about:blank');
  await page.goto(`${plane.adminUrl}/${route}`);
}

/** Clicks the single sign-on link and waits for the provider's login form. */
async function startSingleSignOn(): Promise<void> {
  await page.getByRole('link', { name: 'Sign in with single sign-on' }).click();
  await page.getByLabel('Login').waitFor();
  expect(new URL(page.url()).origin).toBe(as.issuer);
}

/** Logs in at the provider as `login` and waits for its consent form. */
async function logInAtProvider(login: string): Promise<void> {
  await page.getByLabel('Login').fill(login);
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForFunction(() => document.title === 'consent');
}

/** The text of the sign-in screen's message, for polling. */
const signInMessage = () => page.locator('#sign-in-error').textContent();

async function cookieNamed(name: string) {
  return (await page.context().cookies()).find((cookie) => cookie.name === name);
}

async function newestSignInAudit(): Promise<any> {
  const listed = await plane.admin('GET', '/api/audit?action=sign-in.oidc&limit=1');
  expect(listed.status).toBe(200);
  return listed.body.entries[0];
}

it('signs the owner in with single sign-on, back on the route it left, and writes work', async () => {
  await openDashboard(DEEP_ROUTE);
  const link = page.getByRole('link', { name: 'Sign in with single sign-on' });
  await link.waitFor();
  expect(await link.getAttribute('href')).toBe(
    `/auth/oidc/start?returnTo=${encodeURIComponent(DEEP_ROUTE)}`,
  );
  await ui.screenshot('oidc-01-sign-in');

  await startSingleSignOn();
  // The flow's secrets wait in the browser, out of the page's reach and sent only to the callback.
  const flow = await cookieNamed('mcph_oidc_flow');
  expect(flow).toMatchObject({ path: '/auth/oidc', httpOnly: true, sameSite: 'Lax' });
  await logInAtProvider('alice');

  // The page asks who it is once it is back; the answer is the session's.
  const sessionAnswer = page.waitForResponse(
    (response: Response) =>
      new URL(response.url()).pathname === '/api/session' &&
      response.request().method() === 'GET' &&
      response.status() === 200,
  );
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByRole('heading', { name: `Server ${EXISTING}` }).waitFor();
  expect(page.url()).toBe(`${plane.adminUrl}/${DEEP_ROUTE}`);
  const session = (await (await sessionAnswer).json()) as {
    principal: Record<string, unknown>;
    csrfToken?: string;
  };
  expect(session.principal).toMatchObject({
    kind: 'account',
    email: OWNER,
    role: 'owner',
    via: 'session',
  });
  expect(session.csrfToken).toEqual(expect.any(String));
  expect(await page.locator('#signed-in-as').textContent()).toMatch(/alice@example\.test.*Owner/);
  expect(await cookieNamed('mcph_session')).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
  expect(await cookieNamed('mcph_oidc_flow')).toBeUndefined();
  await ui.screenshot('oidc-02-signed-in');

  // A write through the page: the session cookie with the CSRF token the page keeps.
  await page.getByRole('link', { name: 'mcphost' }).click();
  await page.getByRole('heading', { name: 'Servers', level: 1 }).waitFor();
  await page.getByLabel('Subdomain').fill(CREATED);
  await page.getByRole('button', { name: 'Create server' }).click();
  await page.getByRole('heading', { name: `Server ${CREATED}` }).waitFor();
  expect((await plane.admin('GET', `/api/servers/${CREATED}`)).status).toBe(200);
  // The same write without the token is refused: the one above carried it.
  const forged = await page.evaluate(async () => {
    const response = await fetch('/api/servers', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ subdomain: 'forged' }),
    });
    return { status: response.status, body: await response.json() };
  });
  expect(forged).toMatchObject({ status: 403, body: { error: { code: 'ERR_CSRF' } } });

  const alice = (await plane.admin('GET', '/api/accounts')).body.accounts.find(
    (account: { email: string }) => account.email === OWNER,
  );
  expect(alice).toMatchObject({ oidcSubject: 'alice', lastSignInAt: expect.any(String) });
  expect(await newestSignInAudit()).toMatchObject({
    outcome: 'ok',
    actor: { kind: 'account', id: alice.id, label: OWNER },
    summary: { note: 'OpenID subject linked' },
  });
  const created = await plane.admin('GET', `/api/audit?action=server.create&server=${CREATED}`);
  expect(created.body.entries).toHaveLength(1);
  expect(created.body.entries[0]).toMatchObject({
    outcome: 'ok',
    actor: { kind: 'account', label: OWNER },
  });

  await signOut(page);
  expect(ui.problems).toEqual([]);
});

it('comes back to the sign-in screen saying so when the person presses Deny at the provider', async () => {
  await page.context().clearCookies();
  await openDashboard('#/audit');
  await startSingleSignOn();
  await page.getByRole('button', { name: 'Deny' }).click();
  await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
  await expect
    .poll(signInMessage)
    .toBe(
      'The sign-in was cancelled or refused at the identity provider (access_denied); start again to retry.',
    );
  expect(new URL(page.url()).origin).toBe(plane.adminUrl);
  expect(new URL(page.url()).hash).toMatch(/^#\/sign-in\?error=/);
  expect(await cookieNamed('mcph_session')).toBeUndefined();
  // Trying again is one click away.
  expect(await page.getByRole('link', { name: 'Sign in with single sign-on' }).count()).toBe(1);
  expect(await newestSignInAudit()).toMatchObject({
    outcome: 'failed',
    summary: { note: 'the provider refused or could not be reached' },
  });
  await ui.screenshot('oidc-03-denied');
  expect(ui.problems).toEqual([]);
});

it('says there is no account for an identity no one created an account for', async () => {
  await page.context().clearCookies();
  await openDashboard('#/');
  await startSingleSignOn();
  await logInAtProvider('bob');
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
  await expect
    .poll(signInMessage)
    .toBe(`There is no account for ${STRANGER} here. Ask an owner to create one.`);
  expect(await cookieNamed('mcph_session')).toBeUndefined();
  expect(await newestSignInAudit()).toMatchObject({
    outcome: 'failed',
    actor: { kind: 'anonymous', label: STRANGER },
    summary: { note: 'no account for this identity' },
  });
  const accounts = (await plane.admin('GET', '/api/accounts')).body.accounts;
  expect(accounts.map((account: { email: string }) => account.email)).toEqual([OWNER]);
  await ui.screenshot('oidc-04-no-account');
  expect(ui.problems).toEqual([]);
});
