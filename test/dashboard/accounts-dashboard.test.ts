/**
 * Accounts, roles, API keys and the audit log in Debian's Chromium against a
 * real control plane: local accounts sign in with e-mail and password (a
 * wrong one is told plainly); a viewer reads everything and is offered no
 * control that changes anything; an operator sees and works on its servers
 * only; the owner creates an account and finds it in the audit log, creates
 * a server's API key and a personal token (each shown once, and working),
 * and revokes the key. Screenshots go to test-artifacts/dashboard/.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loopbackFetch } from '../support/loopback-fetch.js';
import { startTestControlPlane, type TestControlPlane } from '../support/control-plane.js';
import {
  launchDashboardBrowser,
  signIn,
  signInWithPassword,
  signOut,
  type DashboardBrowser,
} from './browser.js';

const MINE = `acct-a-${process.pid}`;
const THEIRS = `acct-b-${process.pid}`;
const PASSWORD = 'correct horse battery staple';
const VIEWER = 'viewer@example.test';
const OPERATOR = 'operator@example.test';
const OWNER = 'owner@example.test';
const NEWCOMER = `newcomer-${process.pid}@example.test`;

let plane: TestControlPlane;
let ui: DashboardBrowser;
let page: Page;

beforeAll(async () => {
  [plane, ui] = await Promise.all([startTestControlPlane(), launchDashboardBrowser()]);
  page = ui.page;
  for (const subdomain of [MINE, THEIRS]) {
    expect((await plane.admin('POST', '/api/servers', { subdomain })).status).toBe(201);
  }
  const tool = await plane.admin('PUT', `/api/servers/${MINE}/tools/hello`, {
    description: 'Says hello',
    code: "return 'hello';",
    parameters: [],
  });
  expect(tool.status, JSON.stringify(tool.body)).toBe(201);
  const secret = await plane.admin('PUT', `/api/servers/${MINE}/secrets/GREETING`, { value: 'hi' });
  expect(secret.status).toBe(200);
  for (const [email, role, servers] of [
    [VIEWER, 'viewer', undefined],
    [OPERATOR, 'operator', [MINE]],
    [OWNER, 'owner', undefined],
  ] as const) {
    const created = await plane.admin('POST', '/api/accounts', {
      email,
      role,
      password: PASSWORD,
      ...(servers ? { servers } : {}),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  }
}, 180_000);

afterAll(async () => {
  await ui?.close();
  await plane?.close();
});

/** Every button on the page whose name says it changes something. */
const changeButtons = () =>
  page.getByRole('button', { name: /save|create|delete|run|revoke|roll back|write|new /i });

/** The text of `main`, for polling. */
const mainText = () => page.locator('main').textContent();

it('signs a viewer in with a password and offers it nothing that changes a server', async () => {
  await page.goto(plane.adminUrl);
  await page.getByLabel('E-mail', { exact: true }).waitFor();
  // Both ways in: an account, and the admin token for setting up.
  expect(await page.getByLabel('Admin token').count()).toBe(1);
  await ui.screenshot('accounts-01-sign-in');

  await page.getByLabel('E-mail', { exact: true }).fill(VIEWER);
  await page.getByLabel('Password', { exact: true }).fill('not the password at all');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect
    .poll(() => page.getByRole('alert').first().textContent())
    .toContain('That e-mail and password do not match an account');

  await signInWithPassword(page, VIEWER, PASSWORD);
  expect(await page.locator('#signed-in-as').textContent()).toMatch(/viewer@example\.test.*Viewer/);
  // Reads every server, creates none.
  await page.getByRole('link', { name: THEIRS }).waitFor();
  expect(await page.getByRole('link', { name: MINE }).count()).toBe(1);
  expect(await changeButtons().count()).toBe(0);
  expect(await page.getByRole('link', { name: 'Accounts' }).count()).toBe(0);
  await ui.screenshot('accounts-02-viewer-servers');

  await page.getByRole('link', { name: MINE }).click();
  await page.getByRole('heading', { name: `Server ${MINE}` }).waitFor();
  expect(await page.getByLabel('Security mode').isDisabled()).toBe(true);
  expect(await page.getByRole('link', { name: 'API keys', exact: true }).count()).toBe(0);
  expect(await changeButtons().count()).toBe(0);

  await page.getByRole('link', { name: 'Tools', exact: true }).click();
  await page.getByRole('link', { name: 'hello' }).click();
  await page.getByRole('heading', { name: /Tool hello/ }).waitFor();
  await expect.poll(mainText).toContain("return 'hello';");
  await expect.poll(mainText).toContain('may read this tool but not change it');
  expect(await changeButtons().count()).toBe(0);
  await ui.screenshot('accounts-03-viewer-tool');

  await page.getByRole('link', { name: 'Secrets', exact: true }).click();
  await page.getByRole('row', { name: /GREETING/ }).waitFor();
  expect(await changeButtons().count()).toBe(0);

  await signOut(page);
  expect(ui.problems).toEqual([]);
});

it('shows an operator its own servers only, where it may work', async () => {
  await signInWithPassword(page, OPERATOR, PASSWORD);
  await page.getByRole('link', { name: MINE }).waitFor();
  expect(await page.getByRole('link', { name: THEIRS }).count()).toBe(0);
  expect(await page.getByRole('button', { name: 'Create server' }).count()).toBe(0);

  // Secrets of its server: saved through its session (cookie and CSRF token).
  await page.getByRole('link', { name: MINE }).click();
  expect(await page.getByRole('button', { name: 'Save settings' }).count()).toBe(0);
  expect(await page.getByRole('link', { name: 'API keys', exact: true }).count()).toBe(0);
  await page.getByRole('link', { name: 'Secrets', exact: true }).click();
  await page.getByLabel('Secret name').fill('OPERATOR_SET');
  await page.getByLabel('Secret value').fill('value');
  await page.getByRole('button', { name: 'Save secret' }).click();
  await page.getByRole('row', { name: /OPERATOR_SET/ }).waitFor();
  await ui.screenshot('accounts-04-operator-secrets');

  // Another server: the control plane refuses, and the page says so.
  await page.goto(`${plane.adminUrl}/#/servers/${THEIRS}/settings`);
  await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
  await expect.poll(mainText).toContain('Operator');

  await signOut(page);
  expect(ui.problems).toEqual([]);
});

it('lets the owner create an account, audit it, and hand out an API key and a token once', async () => {
  await signInWithPassword(page, OWNER, PASSWORD);

  // A new operator account.
  await page.getByRole('link', { name: 'Accounts' }).click();
  await page.getByRole('heading', { name: 'Accounts', level: 1 }).waitFor();
  await page.getByLabel('E-mail', { exact: true }).fill(NEWCOMER);
  await page.getByLabel('Role').selectOption('operator');
  await page.getByLabel(MINE, { exact: true }).check();
  await page.getByLabel('Password (optional)').fill('another long password');
  await page.getByRole('button', { name: 'Create account' }).click();
  const row = page.getByRole('row', { name: new RegExp(NEWCOMER) });
  await row.waitFor();
  expect(await row.textContent()).toContain('Operator');
  expect(await row.textContent()).toContain(MINE);
  await ui.screenshot('accounts-05-accounts');

  // The audit log names who did it, newest first, with what was created.
  await page.getByRole('link', { name: 'Audit log' }).click();
  await page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor();
  const created = page.getByRole('row', { name: /account\.create/ }).first();
  await created.waitFor();
  expect(await created.textContent()).toContain(OWNER);
  expect(await created.textContent()).toContain(NEWCOMER);
  expect(await created.textContent()).not.toContain('another long password');
  // Filtered by actor: only the owner's own entries.
  await page.getByLabel('Actor').fill(OWNER);
  await page.getByRole('button', { name: 'Show entries' }).click();
  await expect.poll(() => page.url()).toContain(`actor=${encodeURIComponent(OWNER)}`);
  await page
    .getByRole('row', { name: /account\.create/ })
    .first()
    .waitFor();
  const actors = await page.locator('table.audit tbody tr td:nth-child(2)').allTextContents();
  expect(actors.length).toBeGreaterThan(0);
  for (const actor of actors) expect(actor).toContain(OWNER);
  await ui.screenshot('accounts-06-audit');

  // An API key of the server: shown once, listed by its label, then revoked.
  await page.goto(`${plane.adminUrl}/#/servers/${MINE}/apikeys`);
  await page.getByRole('heading', { name: 'API keys', level: 2 }).waitFor();
  await page.getByLabel('Label').fill('CI pipeline');
  await page.getByRole('button', { name: 'Create API key' }).click();
  const keyField = page.getByRole('textbox', { name: 'New API key' });
  await keyField.waitFor();
  const key = await keyField.inputValue();
  expect(key).toMatch(/^mcph_ak_/);
  await page.getByRole('button', { name: 'Copy', exact: true }).click();
  // The clipboard when the browser allows it, else the text selected for Ctrl+C.
  await expect
    .poll(() =>
      page
        .getByRole('status')
        .filter({ hasText: /Copied|Selected/ })
        .count(),
    )
    .toBe(1);
  await page.getByRole('row', { name: /CI pipeline/ }).waitFor();
  await ui.screenshot('accounts-07-api-key');
  await page.getByRole('link', { name: 'Settings', exact: true }).click();
  await page.getByRole('link', { name: 'API keys', exact: true }).click();
  const keyRow = page.getByRole('row', { name: /CI pipeline/ });
  await keyRow.waitFor();
  expect(await page.content()).not.toContain(key);
  expect(await keyRow.textContent()).toContain('Active');
  await keyRow.getByRole('button', { name: 'Revoke API key CI pipeline' }).click();
  await page.getByRole('button', { name: 'Revoke CI pipeline' }).click();
  await expect.poll(() => keyRow.textContent()).toContain('Revoked');

  // The settings offer the API keys mode, pointing at the tab.
  await page.getByRole('link', { name: 'Settings', exact: true }).click();
  await page.getByLabel('Security mode').selectOption('apikey');
  expect(await page.getByRole('link', { name: 'API keys tab' }).isVisible()).toBe(true);
  await page.getByRole('button', { name: 'Save settings' }).click();
  await expect.poll(() => page.locator('#server-mode-label').textContent()).toBe('API keys');

  // A personal token: shown once, and it calls the admin API as the owner.
  await page.getByRole('link', { name: 'Your API tokens' }).click();
  await page.getByLabel('Label').fill('backup script');
  await page.getByRole('button', { name: 'Create token' }).click();
  const token = await page.getByRole('textbox', { name: 'New token' }).inputValue();
  expect(token).toMatch(/^mcph_pat_/);
  const session = await loopbackFetch(`${plane.adminUrl}/api/session`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(session.status).toBe(200);
  expect(((await session.json()) as { principal: { email: string } }).principal.email).toBe(OWNER);

  await signOut(page);
  expect(ui.problems).toEqual([]);
});

it('lets the owner change, reset and delete an account, the change readable in the audit log', async () => {
  await signInWithPassword(page, OWNER, PASSWORD);
  await page.getByRole('link', { name: 'Accounts' }).click();
  await page.getByRole('link', { name: NEWCOMER }).click();
  await page.getByRole('heading', { name: `Account ${NEWCOMER}` }).waitFor();

  await page.getByLabel('Role').selectOption('viewer');
  // Servers are an operator's only: the choice goes away.
  expect(await page.getByLabel(MINE, { exact: true }).isVisible()).toBe(false);
  await page.getByRole('button', { name: 'Save account' }).click();
  await expect.poll(mainText).toContain('Saved: active, Viewer.');

  await page.getByLabel('New password').fill('a brand new long password');
  await page.getByRole('button', { name: 'Set password' }).click();
  await expect.poll(mainText).toContain('Password set.');
  await ui.screenshot('accounts-09-account-editor');

  await page.goto(`${plane.adminUrl}/#/audit?action=account.change`);
  // Newest first: the password reset (which shows no password), then the role change.
  const changes = page.getByRole('row', { name: /account\.change/ });
  await expect.poll(() => changes.count()).toBe(2);
  expect(await changes.nth(1).textContent()).toContain('role: operator → viewer');
  await ui.screenshot('accounts-10-audit-change');
  expect(await page.locator('main').textContent()).not.toContain('a brand new long password');

  await page.goto(`${plane.adminUrl}/#/accounts`);
  await page.getByRole('link', { name: NEWCOMER }).click();
  await page.getByRole('button', { name: 'Delete account' }).click();
  await page.getByRole('button', { name: `Delete ${NEWCOMER}` }).click();
  await page.getByRole('heading', { name: 'Accounts', level: 1 }).waitFor();
  await expect.poll(() => page.getByRole('link', { name: NEWCOMER }).count()).toBe(0);

  await signOut(page);
  expect(ui.problems).toEqual([]);
});

it('shows why single sign-on failed, and still signs in with the admin token, which has no personal tokens', async () => {
  // Where the OpenID Connect callback sends a failure.
  await page.goto(
    `${plane.adminUrl}/#/sign-in?error=${encodeURIComponent('There is no account for x@example.test here.')}`,
  );
  await expect
    .poll(() => page.getByRole('alert').first().textContent())
    .toBe('There is no account for x@example.test here.');
  await signIn(page);
  expect(await page.locator('#signed-in-as').textContent()).toContain('Owner');
  expect(await page.getByRole('link', { name: 'Accounts' }).count()).toBe(1);
  expect(await page.getByRole('link', { name: 'Your API tokens' }).count()).toBe(0);

  // More entries than a page holds: "Older entries" pages on, then goes away.
  for (let i = 0; i < 55; i++) {
    const write = await plane.admin('PUT', `/api/servers/${THEIRS}/secrets/PAGE_${i}`, {
      value: 'x',
    });
    expect(write.status).toBe(200);
  }
  await page.goto(`${plane.adminUrl}/#/audit?server=${THEIRS}`);
  const rows = page.locator('table.audit tbody tr');
  await expect.poll(() => rows.count()).toBe(50);
  expect(await rows.first().textContent()).toContain('PAGE_54');
  await page.getByRole('button', { name: 'Older entries' }).click();
  // The rest of the 55 secret writes (and whatever else concerned the server) appended.
  await expect.poll(() => rows.count()).toBeGreaterThanOrEqual(55);
  expect(await rows.nth(54).textContent()).toContain('PAGE_0');
  expect(await page.getByRole('button', { name: 'Older entries' }).isHidden()).toBe(true);
  await signOut(page);
  expect(ui.problems).toEqual([]);
});

it('says plainly when an account is locked after failed sign-ins', async () => {
  // A control plane of its own: the per-address allowance of the tests above stays out of it.
  const locking = await startTestControlPlane();
  try {
    const locked = 'locked@example.test';
    expect(
      (
        await locking.admin('POST', '/api/accounts', {
          email: locked,
          role: 'viewer',
          password: PASSWORD,
        })
      ).status,
    ).toBe(201);
    await page.goto(locking.adminUrl);
    for (let attempt = 1; attempt <= 5; attempt++) {
      await page.getByLabel('E-mail', { exact: true }).fill(locked);
      await page.getByLabel('Password', { exact: true }).fill(`wrong password ${attempt}`);
      await page.getByRole('button', { name: 'Sign in' }).click();
      // Each attempt runs scrypt (N=2^15) behind a limit of four at once: slow on a busy machine.
      await expect
        .poll(() => page.locator('#sign-in-error').textContent(), { timeout: 20_000 })
        .toContain('do not match');
      await page.locator('#sign-in-error').evaluate((alert) => (alert.textContent = ''));
    }
    // Locked now: even the right password waits.
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect
      .poll(() => page.locator('#sign-in-error').textContent(), { timeout: 20_000 })
      .toMatch(/^Too many attempts to sign in\. Try again in \d+ (seconds|minutes)\.$/);
    await ui.screenshot('accounts-08-locked');
    expect(ui.problems).toEqual([]);
  } finally {
    await locking.close();
  }
});
