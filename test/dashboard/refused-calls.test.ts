/**
 * The invocation log's page in Debian's Chromium (playwright-core) against a
 * real control plane: calls refused before any code ran are not listed one
 * by one; the page heads the log with their counts per error code.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../support/control-plane.js';
import { launchDashboardBrowser, signIn, type DashboardBrowser } from './browser.js';

const SUB = `refused-${process.pid}`;

let plane: TestControlPlane;
let ui: DashboardBrowser;

beforeAll(async () => {
  [plane, ui] = await Promise.all([startTestControlPlane(), launchDashboardBrowser()]);
  expect((await plane.admin('POST', '/api/servers', { subdomain: SUB })).status).toBe(201);
  const saved = await plane.admin('PUT', `/api/servers/${SUB}/tools/echo`, {
    description: 'Says it back.',
    code: 'return params.text;',
    parameters: [{ name: 'text', type: 'string', required: true }],
  });
  expect(saved.status, JSON.stringify(saved.body)).toBe(201);
}, 180_000);

afterAll(async () => {
  await ui?.close();
  await plane?.close();
});

it('shows the refused calls as counts above the invocation log', async () => {
  const run = (params: object) =>
    plane.admin('POST', `/api/servers/${SUB}/tools/echo/invoke`, { params });
  for (let index = 0; index < 3; index++) {
    expect((await run({})).body).toMatchObject({
      ok: false,
      error: { code: 'ERR_INVALID_ARGUMENT' },
    });
  }
  expect((await run({ text: 'hello' })).body).toMatchObject({ ok: true, result: 'hello' });

  const { page } = ui;
  await page.goto(plane.adminUrl);
  await signIn(page);
  await page.getByRole('link', { name: SUB }).click();
  await page.getByRole('link', { name: 'Pools & activity' }).click();
  await expect
    .poll(() => page.locator('#refused-summary').textContent(), { timeout: 20_000 })
    .toMatch(/ERR_INVALID_ARGUMENT 3/);
  await page
    .getByRole('row', { name: /echo.*OK/ })
    .first()
    .waitFor();
  // The one run that reached a container is the only row.
  expect(await page.getByRole('row', { name: /echo/ }).count()).toBe(1);
  await ui.screenshot('09-refused-calls');
  expect(ui.problems).toEqual([]);
}, 120_000);
