/**
 * The dashboard's version history says what the service keeps (issue 28,
 * finding 2): a tool saved more often than VERSIONS_KEPT lists the kept
 * versions, how many are kept, and which older ones were pruned — in
 * Debian's Chromium (playwright-core) against a real control plane.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../support/control-plane.js';
import { launchDashboardBrowser, signIn, type DashboardBrowser } from './browser.js';

const SUB = `history-${process.pid}`;

let plane: TestControlPlane;
let ui: DashboardBrowser;
let page: Page;

beforeAll(async () => {
  [plane, ui] = await Promise.all([
    startTestControlPlane({ VERSIONS_KEPT: '3', GENERIC_POOL_SIZE: '0', POOL_MIN_WARM: '0' }),
    launchDashboardBrowser(),
  ]);
  page = ui.page;
  expect((await plane.admin('POST', '/api/servers', { subdomain: SUB })).status).toBe(201);
  for (let save = 1; save <= 5; save++) {
    const saved = await plane.admin('PUT', `/api/servers/${SUB}/tools/counter`, {
      description: `save ${save}`,
      code: `return ${save};`,
    });
    expect(saved.status).toBe(save === 1 ? 201 : 200);
  }
}, 180_000);

afterAll(async () => {
  await ui?.close();
  await plane?.close();
});

it('shows the kept versions and says the older ones were pruned', async () => {
  await page.goto(plane.adminUrl);
  await signIn(page);
  await page.goto(`${plane.adminUrl}/#/servers/${SUB}/tools/counter`);
  // The panel is the section the heading opens.
  const history = page.getByRole('heading', { name: 'Version history' }).locator('xpath=..');
  await history.waitFor();
  const rows = history.getByRole('row');
  await expect.poll(() => rows.count()).toBe(4);
  expect(await rows.nth(1).textContent()).toContain('save 5');
  expect(await rows.nth(3).textContent()).toContain('save 3');
  const text = await history.textContent();
  expect(text).toContain('The newest 3 versions are kept');
  expect(text).toContain('Versions 1–2 were pruned.');
  await ui.screenshot('version-history-pruned');
  expect(ui.problems).toEqual([]);
}, 120_000);
