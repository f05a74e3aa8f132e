/**
 * The dashboard's first hour, writing a tool, in Debian's Chromium against a
 * real control plane with real containers: creating a server lands on its
 * Tools tab; a new parameter starts optional; a secret the tool lists
 * without a value is said in the editor and on the tools list, until it is
 * set; a syntax error is marked while typing (before any save), at its line
 * and column, and cleared once fixed; a test run that throws marks its line
 * and column in the code. Screenshots go to test-artifacts/screenshots/.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../support/control-plane.js';
import { launchDashboardBrowser, signIn, type DashboardBrowser } from './browser.js';
import { screenshotBoth } from './first-hour-screens.js';

const SUB = `editor-${process.pid}`;

let plane: TestControlPlane;
let ui: DashboardBrowser;
let page: Page;

beforeAll(async () => {
  [plane, ui] = await Promise.all([startTestControlPlane(), launchDashboardBrowser()]);
  page = ui.page;
}, 180_000);

afterAll(async () => {
  await ui?.close();
  await plane?.close();
});

const code = () => page.getByRole('textbox', { name: 'Code' });
const syntaxStatus = () => page.locator('#code-syntax').textContent();
const liveMarks = () => page.locator('.cm-syntax-error, .cm-syntax-error-end').count();

it('lands a new server on its Tools tab', async () => {
  await page.goto(plane.adminUrl);
  await signIn(page);
  await page.getByLabel('Subdomain').fill(SUB);
  await page.getByRole('button', { name: 'Create server' }).click();
  await page.getByRole('heading', { name: 'Tools', level: 2 }).waitFor();
  expect(new URL(page.url()).hash).toBe(`#/servers/${SUB}/tools`);
  const current = page
    .getByRole('navigation', { name: 'Server sections' })
    .locator('[aria-current="page"]');
  expect(await current.textContent()).toBe('Tools');
  expect(await page.getByLabel('Tool name').count()).toBe(1);
  await screenshotBoth(page, 'new-server-tools-tab');
  expect(ui.problems).toEqual([]);
});

it('starts a new parameter optional and says which listed secret has no value', async () => {
  await page.getByLabel('Tool name').fill('greet');
  await page.getByRole('button', { name: 'Write tool' }).click();
  await page.getByLabel('Description').fill('Greets someone.');
  await page.getByRole('button', { name: 'Add parameter' }).click();
  expect(await page.getByLabel('Parameter 1 required').isChecked()).toBe(false);
  await page.getByLabel('Parameter 1 name').fill('name');

  const missing = page.locator('#tool-secrets-missing');
  await page.getByLabel('Secrets used').fill('API_TOKEN, GREETING');
  await expect
    .poll(() => missing.textContent())
    .toContain('No value set for secrets API_TOKEN, GREETING');
  expect(
    await plane.admin('PUT', `/api/servers/${SUB}/secrets/GREETING`, { value: 'Hi' }),
  ).toMatchObject({
    status: 200,
  });
  await code().fill("return env.GREETING + ', ' + (params.name ?? 'you');");
  await page.getByRole('button', { name: 'Save tool' }).click();
  await expect
    .poll(() => page.locator('#tool-status').textContent())
    .toContain('Saved as version 1');
  const saved = await plane.admin('GET', `/api/servers/${SUB}/tools/greet`);
  expect(saved.body.parameters).toEqual([{ name: 'name', type: 'string', required: false }]);
  // The test run's field says it may stay empty.
  await page.getByLabel('name (optional)').waitFor();

  // The list: the secret still without a value is named under the tool, with the way to set it.
  await page.getByRole('link', { name: 'All tools' }).click();
  const row = page.getByRole('row', { name: /greet/ });
  await expect.poll(() => row.textContent()).toContain('No value set for secret API_TOKEN');
  expect(await row.textContent()).not.toContain('GREETING');
  await screenshotBoth(page, 'tools-missing-secret');
  await row.getByRole('link', { name: 'Set it on the Secrets tab' }).click();
  await page.getByLabel('Secret name').fill('API_TOKEN');
  await page.getByLabel('Secret value').fill('t0ken');
  await page.getByRole('button', { name: 'Save secret' }).click();
  await page.getByRole('row', { name: /API_TOKEN/ }).waitFor();
  await page.getByRole('link', { name: 'Tools', exact: true }).click();
  await page.getByRole('row', { name: /greet/ }).waitFor();
  expect(await page.getByRole('row', { name: /greet/ }).textContent()).not.toContain(
    'No value set',
  );
  expect(ui.problems).toEqual([]);
});

it('marks a syntax error while typing, at its line and column, before any save', async () => {
  await page.getByRole('link', { name: 'greet' }).click();
  await page.getByRole('heading', { name: /Tool greet/ }).waitFor();
  await expect.poll(syntaxStatus).toBe('');
  const versionsBefore = (await plane.admin('GET', `/api/servers/${SUB}/tools/greet`)).body.version;
  await code().fill(
    [
      'const prefix = env.GREETING;',
      "console.log('greeting', params.name);",
      "return { message: prefix + ', ' + params.name + '!' ;",
    ].join('\n'),
  );
  await expect.poll(syntaxStatus).toBe('Syntax error at line 3, column 53: unexpected “;”.');
  expect(await liveMarks()).toBeGreaterThan(0);
  const marked = page.locator('.cm-line', { has: page.locator('.cm-syntax-error') });
  expect(await marked.textContent()).toContain('return { message');
  expect(await page.locator('.cm-syntax-error').first().textContent()).toBe(';');
  await screenshotBoth(page, 'editor-syntax-while-typing');
  // Nothing was sent: the check ran in the page.
  expect((await plane.admin('GET', `/api/servers/${SUB}/tools/greet`)).body.version).toBe(
    versionsBefore,
  );

  // An unclosed brace: the end of the code is marked.
  await code().fill('if (params.name) {\n  return 1;');
  await expect.poll(syntaxStatus).toContain('Syntax error at line 2');
  await expect.poll(syntaxStatus).toContain('the code ends too early');

  // Fixed: the marks and the message go.
  await code().fill(
    "const prefix = env.GREETING;\nreturn { message: prefix + ', ' + params.name + '!' };",
  );
  await expect.poll(syntaxStatus).toBe('');
  expect(await liveMarks()).toBe(0);
  expect(ui.problems).toEqual([]);
});

it("marks a test run's error at its line and column in the code", async () => {
  await code().fill(
    ["console.log('about to fail');", "  throw new Error('boom on purpose');", 'return 1;'].join(
      '\n',
    ),
  );
  await page.getByRole('button', { name: 'Save tool' }).click();
  await expect.poll(() => page.locator('#tool-status').textContent()).toContain('Saved as version');
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  await expect
    .poll(() => page.locator('#run-outcome').textContent(), { timeout: 30_000 })
    .toMatch(/Failed in \d+ ms/);
  const said = await page.locator('.run-output [role="alert"]').textContent();
  expect(said).toContain('boom on purpose');
  const position = /at line (\d+), column (\d+)/.exec(said ?? '');
  expect(position, said ?? '').not.toBeNull();
  const [, line, column] = position!;
  expect(line).toBe('2');
  expect(await page.locator('.cm-error-line').getAttribute('data-error-line')).toBe(line);
  expect(await page.locator('.cm-error-line').textContent()).toContain("throw new Error('boom");
  expect(await page.locator('.cm-error-column').getAttribute('data-error-column')).toBe(column);
  // The column marked is the one the run reported, on the line's own text.
  const lineText = "  throw new Error('boom on purpose');";
  expect(await page.locator('.cm-error-column').textContent()).toBe(lineText[Number(column) - 1]);
  await screenshotBoth(page, 'editor-run-error');
  expect(ui.problems).toEqual([]);
}, 60_000);
