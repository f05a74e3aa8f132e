/**
 * A syntax error shown when a tool is saved in the dashboard reads as
 * sentences: "…: missing ) after argument list. Nothing was saved." — one
 * full stop after the engine's message, never two after one that has its own
 * (an import statement's, which says what tool code has instead). Debian's
 * Chromium against a real control plane.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchDashboardBrowser, signIn, type DashboardBrowser } from '../../dashboard/browser.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';

const SUB = 'firstsyntax';
let plane: TestControlPlane;
let ui: DashboardBrowser;
let page: Page;

beforeAll(async () => {
  [plane, ui] = await Promise.all([
    startTestControlPlane({
      SANDBOX_DRIVER: 'process',
      GENERIC_POOL_SIZE: '0',
      POOL_MIN_WARM: '0',
    }),
    launchDashboardBrowser(),
  ]);
  page = ui.page;
  expect((await plane.admin('POST', '/api/servers', { subdomain: SUB })).status).toBe(201);
}, 180_000);

afterAll(async () => {
  await ui?.close();
  await plane?.close();
});

/** Writes `code` into a new tool, saves it and answers what the error box says. */
async function saveError(name: string, code: string): Promise<string | null> {
  await page.getByRole('link', { name: 'Tools', exact: true }).click();
  await page.getByLabel('Tool name').fill(name);
  await page.getByRole('button', { name: 'Write tool' }).click();
  await page.getByLabel('Description').fill('A first try.');
  await page.getByRole('textbox', { name: 'Code' }).fill(code);
  await page.getByRole('button', { name: 'Save tool' }).click();
  await expect.poll(() => page.locator('#tool-error').textContent()).toContain('Nothing was saved');
  return page.locator('#tool-error').textContent();
}

it('ends the engine’s message with one full stop before "Nothing was saved."', async () => {
  await page.goto(plane.adminUrl);
  await signIn(page);
  await page.getByRole('link', { name: SUB }).click();
  expect(await saveError('unclosed', "console.log('hello'")).toBe(
    'Syntax error at line 1, column 13: missing ) after argument list. Nothing was saved.',
  );
  expect(await saveError('imports', "import _ from 'lodash';\nreturn _.chunk([1, 2], 1);")).toBe(
    'Syntax error at line 1, column 1: Cannot use import statement outside a module. ' +
      'Tool code is the body of an async function, not a module: it has no require, import or npm packages. ' +
      'What it may use is already in scope: sdk.http or fetch for HTTP, sdk.db for PostgreSQL and MySQL, ' +
      'sdk.lodash for lodash, and the web platform (URL, TextEncoder, crypto, …); see docs/tool-code.md. ' +
      'Nothing was saved.',
  );
  expect(ui.problems).toEqual([]);
}, 120_000);
