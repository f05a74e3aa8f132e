/**
 * The dashboard's first hour, reading what happened, in Debian's Chromium
 * against a real control plane with real containers: tools called by the
 * official MCP SDK client with an API key; on Pools & activity each
 * invocation row opens to its console lines, caller, API key label, client
 * address and request id (as the admin API logged them), stays open across
 * the tab's refreshes, and a failed call is coloured and said as failed; the
 * pool terms (fair share, evicted, from generic, the shape of a pool key)
 * are explained on the page itself. Screenshots go to test-artifacts/screenshots/.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectSdkSession, type SdkSession } from '../support/sdk-session.js';
import { startTestControlPlane, type TestControlPlane } from '../support/control-plane.js';
import { launchDashboardBrowser, signIn, type DashboardBrowser } from './browser.js';
import { PHONE, pageWidth, screenshotBoth } from './first-hour-screens.js';

const SUB = `activity-${process.pid}`;
const KEY_LABEL = 'nightly-report-bot';

let plane: TestControlPlane;
let ui: DashboardBrowser;
let page: Page;
let session: SdkSession;

beforeAll(async () => {
  [plane, ui] = await Promise.all([startTestControlPlane(), launchDashboardBrowser()]);
  page = ui.page;
  expect((await plane.admin('POST', '/api/servers', { subdomain: SUB })).status).toBe(201);
  for (const [name, code] of [
    ['greet', "console.log('greeting', params.name);\nreturn 'hello ' + params.name;"],
    ['broken', "console.error('about to fail');\nthrow new Error('boom on purpose');"],
  ]) {
    const tool = await plane.admin('PUT', `/api/servers/${SUB}/tools/${name}`, {
      description: `The ${name} tool.`,
      code,
      parameters: [{ name: 'name', type: 'string', required: false }],
    });
    expect(tool.status, JSON.stringify(tool.body)).toBe(201);
  }
  const settings = await plane.admin('PATCH', `/api/servers/${SUB}/settings`, {
    securityMode: 'apikey',
  });
  expect(settings.status, JSON.stringify(settings.body)).toBe(200);
  const key = await plane.admin('POST', `/api/servers/${SUB}/api-keys`, { label: KEY_LABEL });
  expect(key.status, JSON.stringify(key.body)).toBe(201);
  session = await connectSdkSession(plane.mcpUrl(SUB), {
    requestInit: { headers: { authorization: `Bearer ${key.body.key}` } },
  });
  const ok = await session.client.callTool({ name: 'greet', arguments: { name: 'Ada' } });
  expect(ok.isError).toBeFalsy();
  const failed = await session.client.callTool({ name: 'broken', arguments: {} });
  expect(failed.isError).toBe(true);
}, 180_000);

afterAll(async () => {
  await session?.client.close();
  await ui?.close();
  await plane?.close();
});

/** The logged entry of `tool`, as the admin API lists it. */
async function loggedEntry(tool: string): Promise<any> {
  const { body } = await plane.admin('GET', `/api/invocations?server=${SUB}&tool=${tool}`);
  expect(body.invocations.length).toBeGreaterThan(0);
  return body.invocations[0];
}

/** A colour of a cell of `row`, as the page computes it. */
const cellStyle = (
  row: ReturnType<Page['locator']>,
  cell: string,
  property: 'color' | 'backgroundColor',
) =>
  row
    .locator(cell)
    .first()
    .evaluate((element, name) => getComputedStyle(element)[name], property);

it('opens an invocation row to its console, caller, API key, client address and request id', async () => {
  const entry = await loggedEntry('greet');
  // What the row must show is in the log.
  expect(entry.caller).toMatchObject({ kind: 'apikey', label: KEY_LABEL });
  expect(entry.client).toBeTruthy();
  expect(entry.requestId).toBeTruthy();

  await page.goto(plane.adminUrl);
  await signIn(page);
  await page.goto(`${plane.adminUrl}/#/servers/${SUB}/activity`);
  const row = page.locator('tr.invocation', { hasText: 'greet' });
  await row.waitFor();
  const toggle = row.getByRole('button', { name: /^Details of greet at / });
  expect(await toggle.getAttribute('aria-expanded')).toBe('false');
  const details = page.locator(`#${await toggle.getAttribute('aria-controls')}`);
  expect(await details.isVisible()).toBe(false);

  await toggle.click();
  expect(await toggle.getAttribute('aria-expanded')).toBe('true');
  expect(await details.isVisible()).toBe(true);
  const text = (await details.textContent()) ?? '';
  expect(text).toContain(`API key“${KEY_LABEL}”`);
  expect(text).toContain(`Client address${entry.client}`);
  expect(text).toContain(`Request id${entry.requestId}`);
  expect(text).toContain('CallerMCP client with an API key');
  expect(await details.locator('.logs').textContent()).toContain('greeting Ada');

  // The tab refreshes every 2 s: the row stays open, the button keeps focus.
  await toggle.focus();
  const refreshed = await page.locator('#refreshed').textContent();
  await expect
    .poll(() => page.locator('#refreshed').textContent(), { timeout: 6000 })
    .not.toBe(refreshed);
  expect(await details.isVisible()).toBe(true);
  expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-expanded'))).toBe(
    'true',
  );

  // Keyboard: the button closes it again.
  await page.keyboard.press('Enter');
  expect(await details.isVisible()).toBe(false);
  // A click anywhere on the row opens it too.
  await row.locator('td', { hasText: 'ms' }).click();
  expect(await details.isVisible()).toBe(true);
  expect(ui.problems).toEqual([]);
});

it('colours a failed invocation and says it failed, with its error and console', async () => {
  const failedRow = page.locator('tr.invocation', { hasText: 'broken' });
  const okRow = page.locator('tr.invocation', { hasText: 'greet' });
  await failedRow.waitFor();
  expect(await failedRow.textContent()).toContain('Failed');
  expect(await failedRow.textContent()).toContain('boom on purpose');
  // Tinted row, red outcome; the successful row is neither (the pointer away: no hover tint).
  await page.mouse.move(0, 0);
  const failedBackground = await cellStyle(failedRow, 'td.status-failed', 'backgroundColor');
  const okBackground = await cellStyle(okRow, 'td.status-ok', 'backgroundColor');
  expect(failedBackground).toBe('rgb(255, 245, 245)');
  expect(okBackground).not.toBe(failedBackground);
  expect(await cellStyle(failedRow, 'td.status-failed', 'color')).toBe('rgb(180, 35, 24)');
  expect(await cellStyle(okRow, 'td.status-ok', 'color')).not.toBe('rgb(180, 35, 24)');

  await failedRow.getByRole('button', { name: /^Details of broken at / }).click();
  const details = page.locator(
    `#${await failedRow.getByRole('button').getAttribute('aria-controls')}`,
  );
  const text = (await details.textContent()) ?? '';
  expect(text).toContain('ErrorERR_TOOL_ERROR boom on purpose');
  expect(await details.locator('.logs .log-error').textContent()).toContain('about to fail');
  await screenshotBoth(page, 'activity-rows-open');
  expect(ui.problems).toEqual([]);
});

it('explains the pool terms on the page, not behind a hover', async () => {
  const legend = page.locator('details.legend');
  expect(await legend.getAttribute('open')).not.toBeNull();
  const terms = page.locator('#pool-terms');
  expect(await terms.isVisible()).toBe(true);
  const text = (await terms.textContent()) ?? '';
  for (const term of ['Fair share', 'Evicted', 'From generic', 'Shape'])
    expect(text).toContain(term);
  expect(text).toContain('128m-0.5c-64p-runc is 128 MiB, half a core, 64 processes, runc');
  // Each running pool's shape is spelled out beside its key.
  const shape = page.getByRole('table', { name: 'Running pools' }).locator('td.shape').first();
  await shape.waitFor();
  const key = (await shape.locator('code').textContent()) ?? '';
  const [memory, cpus, pids] = /^(\d+)m-([\d.]+)c-(\d+)p-runc$/.exec(key)!.slice(1);
  expect(await shape.locator('.hint').textContent()).toBe(
    `${memory} MiB · ${cpus} CPU · ${pids} processes · runc`,
  );
  expect(await page.locator('#pool-summary').textContent()).toMatch(
    /fair share \S+ of the machine's/,
  );

  await page.setViewportSize(PHONE);
  expect(await pageWidth(page)).toBeLessThanOrEqual(PHONE.width);
  await screenshotBoth(page, 'activity-pool-terms');
  expect(ui.problems).toEqual([]);
});
