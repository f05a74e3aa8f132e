/**
 * The dashboard's first hour, its frame, in Debian's Chromium against a real
 * control plane: the sign-in screen of a control plane with no account
 * yet focuses the admin token (and the e-mail once this browser signed in
 * with an account); every MCP address has a Copy button that puts it on the
 * clipboard (through the Clipboard API, and through the older copy command
 * where that API refuses); action columns sit at the right edge, headings
 * over their buttons; and at 390 px every main page fits the window, its
 * tables scrolling inside their own frame, its navigation reachable.
 * Screenshots go to test-artifacts/screenshots/.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../support/control-plane.js';
import {
  launchDashboardBrowser,
  signIn,
  signInWithPassword,
  signOut,
  type DashboardBrowser,
} from './browser.js';
import { DESKTOP, PHONE, pageWidth, screenshot, screenshotBoth } from './first-hour-screens.js';

const SUB = `layout-${process.pid}`;
const LONG = `a-rather-long-subdomain-name-${process.pid}`;
const OWNER = 'first-owner@example.test';
const PASSWORD = 'correct horse battery staple';

let plane: TestControlPlane;
let ui: DashboardBrowser;
let page: Page;

beforeAll(async () => {
  [plane, ui] = await Promise.all([startTestControlPlane(), launchDashboardBrowser()]);
  page = ui.page;
  for (const subdomain of [SUB, LONG]) {
    expect((await plane.admin('POST', '/api/servers', { subdomain })).status).toBe(201);
  }
  const tool = await plane.admin('PUT', `/api/servers/${SUB}/tools/hello`, {
    description: 'Says hello to whoever is named, at some length so the column has to wrap.',
    code: "return 'hello ' + params.name;",
    parameters: [{ name: 'name', type: 'string', required: false }],
  });
  expect(tool.status, JSON.stringify(tool.body)).toBe(201);
  for (const name of ['GREETING', 'A_SECRET_WITH_A_RATHER_LONG_NAME']) {
    const secret = await plane.admin('PUT', `/api/servers/${SUB}/secrets/${name}`, { value: 'x' });
    expect(secret.status).toBe(200);
  }
  for (const label of ['ci-bot', 'a key with a longer label']) {
    const key = await plane.admin('POST', `/api/servers/${SUB}/api-keys`, { label });
    expect(key.status, JSON.stringify(key.body)).toBe(201);
  }
}, 180_000);

afterAll(async () => {
  await ui?.close();
  await plane?.close();
});

/** The id of the focused element. */
const focusedId = () => page.evaluate(() => document.activeElement?.id ?? '');

it('focuses the admin token, not the e-mail, while no account has signed in here', async () => {
  await page.goto(plane.adminUrl);
  await page.getByLabel('Admin token').waitFor();
  expect((await plane.admin('GET', '/api/accounts')).body.accounts).toEqual([]);
  await expect.poll(focusedId).toBe('admin-token');
  await screenshotBoth(page, 'sign-in-first-start');
  expect(ui.problems).toEqual([]);
});

it('focuses the e-mail once this browser has signed in with an account', async () => {
  const created = await plane.admin('POST', '/api/accounts', {
    email: OWNER,
    role: 'owner',
    password: PASSWORD,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  await page.goto(plane.adminUrl);
  await page.getByLabel('Admin token').waitFor();
  // Nothing known of this browser yet: still the token.
  await expect.poll(focusedId).toBe('admin-token');
  await signInWithPassword(page, OWNER, PASSWORD);
  await signOut(page);
  await expect.poll(focusedId).toBe('sign-in-email');
  // And back to the token once the token is what this browser used last.
  await signIn(page);
  await signOut(page);
  await expect.poll(focusedId).toBe('admin-token');
  expect(ui.problems).toEqual([]);
});

/** Every address the API gives a server, the preferred (`mcpUrl`) first; `mcpUrls` lists them where the API has it. */
async function addressesOf(subdomain: string): Promise<string[]> {
  const { body } = await plane.admin('GET', `/api/servers/${subdomain}`);
  const listed = Object.values((body.mcpUrls ?? {}) as Record<string, string>);
  return [...new Set([body.mcpUrl as string, ...listed])];
}

/** What the clipboard holds, read as the page (the test grants the permission). */
const clipboardText = () => page.evaluate(() => navigator.clipboard.readText());

it('copies each MCP address with its button, on the server list and the server page', async () => {
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], {
    origin: plane.adminUrl,
  });
  await page.goto(plane.adminUrl);
  await signIn(page);
  const expected = await addressesOf(SUB);
  const row = page.getByRole('row', { name: new RegExp(SUB) });
  const buttons = row.getByRole('button', { name: new RegExp(`^Copy MCP address of ${SUB}`) });
  expect(await buttons.count()).toBe(expected.length);
  // Each button copies the address beside it; together, every address, the preferred first.
  const copied: string[] = [];
  for (const [index, button] of (await buttons.all()).entries()) {
    await page.evaluate(() => navigator.clipboard.writeText('something else'));
    await button.click();
    await expect.poll(clipboardText).not.toBe('something else');
    copied.push(await clipboardText());
    expect(await button.textContent()).toBe('Copied');
    const item = row.locator('.mcp-addresses li').nth(index);
    expect(await item.locator('code').textContent()).toBe(copied[index]);
  }
  expect(copied).toEqual(expected);
  await screenshotBoth(page, 'servers-copy');
  // The state goes back, so the next copy is seen again.
  await expect.poll(() => buttons.first().textContent(), { timeout: 5000 }).toBe('Copy');

  await row.getByRole('link', { name: SUB }).click();
  await page.getByRole('heading', { name: `Server ${SUB}` }).waitFor();
  const pageButtons = page
    .locator('.meta')
    .getByRole('button', { name: new RegExp(`^Copy MCP address of ${SUB}`) });
  expect(await pageButtons.count()).toBe(expected.length);
  await page.evaluate(() => navigator.clipboard.writeText('something else'));
  await pageButtons.first().click();
  await expect.poll(clipboardText).toBe(expected[0]);
  expect(ui.problems).toEqual([]);
});

it('copies with the copy command where the Clipboard API refuses (plain HTTP on a LAN name)', async () => {
  // The API refuses as it does on an insecure origin; the page must fall back on its own.
  await page.evaluate(() => {
    navigator.clipboard.writeText = () =>
      Promise.reject(new DOMException('refused', 'NotAllowedError'));
  });
  const [address] = await addressesOf(SUB);
  const button = page
    .locator('.meta')
    .getByRole('button', { name: new RegExp(`^Copy MCP address of ${SUB}`) })
    .first();
  await button.click();
  await expect.poll(clipboardText).toBe(address);
  expect(await button.textContent()).toBe('Copied');
  // Focus stays on the button, not on the hidden field the command read.
  expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toMatch(
    /^Copy MCP address/,
  );
  expect(await page.locator('.copy-source').count()).toBe(0);
  expect(ui.problems).toEqual([]);
});

/**
 * For every table on the page with an action column: each row's cell of it
 * is right-aligned like the heading, and each row's last control ends where
 * the heading's text ends. Returns how many rows were checked.
 */
async function checkActionColumns(): Promise<number> {
  const report = await actionColumnReport();
  expect(report.problems).toEqual([]);
  return report.rows;
}

/** Each table's Actions column as laid out now: what is wrong with it, and its rows. */
function actionColumnReport(): Promise<{ problems: string[]; rows: number }> {
  return page.evaluate(() => {
    const problems: string[] = [];
    let rows = 0;
    for (const table of Array.from(document.querySelectorAll('table'))) {
      const headings = Array.from(table.querySelectorAll('thead th'));
      const column = headings.findIndex((th) => /^Actions?$/.test(th.textContent ?? ''));
      if (column < 0) continue;
      const heading = headings[column]!;
      if (getComputedStyle(heading).display !== 'table-cell')
        problems.push(
          `${heading.textContent}: the heading displayed as ${getComputedStyle(heading).display}`,
        );
      const headingBox = heading.getBoundingClientRect();
      const padding = parseFloat(getComputedStyle(heading).paddingRight);
      const contentRight = headingBox.right - padding;
      for (const row of Array.from(table.querySelectorAll('tbody tr'))) {
        const cell = row.children[column] as HTMLElement | undefined;
        if (!cell) continue;
        rows += 1;
        // A cell laid out as anything but a cell leaves its column (and its row's height).
        if (getComputedStyle(cell).display !== 'table-cell')
          problems.push(
            `${heading.textContent}: a cell displayed as ${getComputedStyle(cell).display}`,
          );
        if (Math.abs(cell.getBoundingClientRect().height - row.getBoundingClientRect().height) > 1)
          problems.push(`${heading.textContent}: a cell not as tall as its row`);
        if (getComputedStyle(cell).textAlign !== getComputedStyle(heading).textAlign)
          problems.push(`${heading.textContent}: a cell aligned unlike its heading`);
        const controls = cell.querySelectorAll('button, a');
        const last = controls[controls.length - 1];
        if (last && Math.abs(last.getBoundingClientRect().right - contentRight) > 1.5)
          problems.push(
            `${heading.textContent}: a button ends at ${last.getBoundingClientRect().right}, the heading at ${contentRight}`,
          );
      }
      const range = document.createRange();
      range.selectNodeContents(heading);
      if (Math.abs(range.getBoundingClientRect().right - contentRight) > 1.5)
        problems.push(`${heading.textContent}: the heading's text is not at the column's edge`);
    }
    return { problems, rows };
  });
}

it('aligns the action columns: the heading over its buttons, at the right edge', async () => {
  await page.setViewportSize(DESKTOP);
  await page.goto(`${plane.adminUrl}/#/`);
  await page.getByRole('heading', { name: 'Servers', level: 1 }).waitFor();
  expect(await checkActionColumns()).toBeGreaterThanOrEqual(2);
  const tabHeadings: Record<string, string> = {
    secrets: 'Secrets',
    apikeys: 'API keys',
    activity: 'Invocation log',
  };
  for (const [tab, heading] of Object.entries(tabHeadings)) {
    await page.goto(`${plane.adminUrl}/#/servers/${SUB}/${tab}`);
    // A route change renders after the hash moves: wait for this tab, then for its rows.
    await page.getByRole('heading', { name: heading, exact: true }).waitFor();
    await expect
      .poll(async () => (await actionColumnReport()).rows, { timeout: 10_000 })
      .toBeGreaterThanOrEqual(1);
    expect(await checkActionColumns(), tab).toBeGreaterThanOrEqual(1);
    await screenshot(page, `actions-${tab}-desktop`);
  }
  await page.goto(`${plane.adminUrl}/#/servers/${SUB}/tools/hello`);
  await page.getByRole('heading', { name: 'Version history' }).waitFor();
  expect(await checkActionColumns()).toBeGreaterThanOrEqual(1);
  expect(ui.problems).toEqual([]);
});

/** The main pages, by route and a heading that shows they are rendered. */
const MAIN_PAGES: [string, string, string][] = [
  ['servers', '#/', 'Servers'],
  ['server-settings', `#/servers/${LONG}/settings`, `Server ${LONG}`],
  ['server-tools', `#/servers/${SUB}/tools`, 'Tools'],
  ['tool-editor', `#/servers/${SUB}/tools/hello`, 'Version history'],
  ['server-prompts', `#/servers/${SUB}/prompts`, `Server ${SUB}`],
  ['server-resources', `#/servers/${SUB}/resources`, `Server ${SUB}`],
  ['server-secrets', `#/servers/${SUB}/secrets`, 'Set a secret'],
  ['server-activity', `#/servers/${SUB}/activity`, 'Invocation log'],
  ['server-apikeys', `#/servers/${SUB}/apikeys`, `Server ${SUB}`],
  ['audit', '#/audit', 'Audit log'],
  ['accounts', '#/accounts', 'Accounts'],
];

it('fits every main page into 390 px: tables scroll in their frame, the navigation wraps', async () => {
  await page.setViewportSize(PHONE);
  for (const [name, route, heading] of MAIN_PAGES) {
    await page.goto(`${plane.adminUrl}/${route}`);
    await page.getByRole('heading', { name: heading }).first().waitFor();
    // Let refreshing panels fill in before measuring.
    await page.waitForLoadState('networkidle');
    expect(await pageWidth(page), name).toBeLessThanOrEqual(PHONE.width);
    await screenshot(page, `${name}-390`);
  }
  // A wide table scrolls inside its own frame, not the page.
  await page.goto(`${plane.adminUrl}/#/servers/${SUB}/activity`);
  await page.getByRole('table', { name: 'Running pools' }).waitFor();
  const frame = await page
    .locator('.table-wrap', { has: page.getByRole('table', { name: 'Running pools' }) })
    .evaluate((wrap) => ({ scroll: wrap.scrollWidth, client: wrap.clientWidth }));
  expect(frame.scroll).toBeGreaterThan(frame.client);
  expect(await pageWidth(page)).toBeLessThanOrEqual(PHONE.width);

  // The navigation: every server tab and header link is inside the window, and works.
  for (const tab of await page
    .getByRole('navigation', { name: 'Server sections' })
    .getByRole('link')
    .all()) {
    const box = (await tab.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
  }
  await page
    .getByRole('navigation', { name: 'Server sections' })
    .getByRole('link', { name: 'Secrets' })
    .click();
  await page.getByRole('heading', { name: 'Set a secret' }).waitFor();
  await page
    .getByRole('navigation', { name: 'Sections' })
    .getByRole('link', { name: 'Audit log' })
    .click();
  await page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
  expect(await pageWidth(page), 'sign-in').toBeLessThanOrEqual(PHONE.width);
  await page.setViewportSize(DESKTOP);
  expect(ui.problems).toEqual([]);
});
