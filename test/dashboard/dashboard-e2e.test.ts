/**
 * The dashboard end to end in Debian's Chromium (playwright-core) against a
 * real control plane with real containers and a real Authorization Server:
 * sign in, create a server, set a secret, write a tool with a parameter,
 * see its syntax error at its line, fix it, run it, switch to OAuth 2.0 with
 * bad URLs (nothing saved) and a good one, resize a pool, delete the server.
 * Screenshots of each screen (1280×800 and 420 px wide) go to
 * test-artifacts/dashboard/.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  startAuthorizationServer,
  type TestAuthorizationServer,
} from '../fixtures/authorization-server.js';
import {
  answerRoutes,
  closedPortUrl,
  startLoopbackServer,
  type LoopbackServer,
} from '../support/loopback-server.js';
import { startTestControlPlane, type TestControlPlane } from '../support/control-plane.js';
import { launchDashboardBrowser, signIn, type DashboardBrowser } from './browser.js';

const SUB = `dash-${process.pid}`;

let plane: TestControlPlane;
let as: TestAuthorizationServer;
let doctored: LoopbackServer;
let ui: DashboardBrowser;
let page: Page;

beforeAll(async () => {
  [plane, as, ui] = await Promise.all([
    startTestControlPlane(),
    startAuthorizationServer(),
    launchDashboardBrowser(),
  ]);
  page = ui.page;
  const metadata = (await (await fetch(as.metadataUrl)).json()) as Record<string, unknown>;
  const { registration_endpoint: _dropped, ...withoutRegistration } = metadata;
  doctored = await startLoopbackServer(
    answerRoutes({ '/.well-known/oauth-authorization-server': { json: withoutRegistration } }),
  );
}, 180_000);

afterAll(async () => {
  await ui?.close();
  await Promise.all([plane?.close(), as?.close(), doctored?.close()]);
});

it('runs the operator flow in a real browser', async () => {
  // Sign in: a wrong token is told plainly, the right one opens the server list.
  await page.goto(plane.adminUrl);
  await page.getByLabel('Admin token').fill('not-the-token');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect
    .poll(() => page.getByRole('alert').first().textContent())
    .toContain('That admin token is not correct');
  await ui.screenshot('01-sign-in-wrong-token');
  await signIn(page);

  // Create a server: it opens on its Tools tab (first-hour-editor.test.ts checks where).
  await page.getByLabel('Subdomain').fill(SUB);
  await page.getByRole('button', { name: 'Create server' }).click();
  await page.getByRole('heading', { name: `Server ${SUB}` }).waitFor();
  await page.getByRole('link', { name: 'Servers' }).click();
  const row = page.getByRole('row', { name: new RegExp(SUB) });
  await expect.poll(() => row.textContent()).toContain(`http://${SUB}.localhost:${plane.port}/mcp`);
  await ui.screenshot('02-servers');
  await row.getByRole('link', { name: SUB }).click();

  // A secret: saved, listed by name, the value never shown again.
  await page.getByRole('link', { name: 'Secrets' }).click();
  await page.getByLabel('Secret name').fill('GREETING_PREFIX');
  await page.getByLabel('Secret value').fill('Hello');
  await page.getByRole('button', { name: 'Save secret' }).click();
  await page.getByRole('row', { name: /GREETING_PREFIX/ }).waitFor();
  expect(await page.getByLabel('Secret value').inputValue()).toBe('');
  expect(await page.locator('main').textContent()).not.toContain('Hello');
  await ui.screenshot('03-secrets');

  // A tool with a parameter and the secret; a syntax error is shown at its line.
  await page.getByRole('link', { name: 'Tools' }).click();
  await page.getByLabel('Tool name').fill('greet');
  await page.getByRole('button', { name: 'Write tool' }).click();
  await page.getByLabel('Description').fill('Greets someone by name.');
  await page.getByRole('button', { name: 'Add parameter' }).click();
  await page.getByLabel('Parameter 1 name').fill('name');
  await page.getByLabel('Parameter 1 type').selectOption('string');
  await page.getByLabel('Parameter 1 description').fill('Who to greet');
  // A new parameter starts optional; this one is required.
  await page.getByLabel('Parameter 1 required').check();
  await page.getByLabel('Secrets used').fill('GREETING_PREFIX');
  const code = page.getByRole('textbox', { name: 'Code' });
  await code.fill(
    [
      'const prefix = env.GREETING_PREFIX;',
      "console.log('greeting', params.name);",
      "return { message: prefix + ', ' + params.name + '!' ;",
    ].join('\n'),
  );
  await page.getByRole('button', { name: 'Save tool' }).click();
  await expect
    .poll(() => page.locator('#tool-error').textContent())
    .toContain('Syntax error at line 3');
  await expect
    .poll(() => page.locator('.cm-error-line').textContent())
    .toContain('return { message');
  await ui.screenshot('04-tool-syntax-error');
  expect((await plane.admin('GET', `/api/servers/${SUB}/tools/greet`)).status).toBe(404);

  // Completion knows the declared parameters.
  await code.press('Control+End');
  await page.keyboard.type('\nparams.');
  await page.getByRole('option', { name: /^name/ }).waitFor();
  await page.keyboard.press('Escape');
  // …and the sdk members and content builders by the names docs/tool-code.md uses.
  await page.keyboard.type('\nsdk.eli');
  await page.getByRole('option', { name: /^elicit/ }).waitFor();
  await page.keyboard.press('Escape');
  await page.keyboard.type('\nsdk.content.ima');
  await page.getByRole('option', { name: /^image/ }).waitFor();
  await page.keyboard.press('Escape');

  await code.fill(
    [
      'const prefix = env.GREETING_PREFIX;',
      "console.log('greeting', params.name);",
      "return { message: prefix + ', ' + params.name + '!' };",
    ].join('\n'),
  );
  await page.getByRole('button', { name: 'Save tool' }).click();
  await expect
    .poll(() => page.locator('#tool-status').textContent())
    .toContain('Saved as version 1');
  expect(await page.locator('.cm-error-line').count()).toBe(0);

  // Test run: the form comes from the declarations; result, console and duration show.
  await page.getByLabel('name', { exact: true }).fill('Ada');
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  await expect
    .poll(() => page.locator('#run-outcome').textContent(), { timeout: 30_000 })
    .toMatch(/Succeeded in \d+ ms/);
  expect(await page.locator('pre.result').textContent()).toContain('"message": "Hello, Ada!"');
  expect(await page.locator('.logs').textContent()).toContain('greeting Ada');
  await page.getByRole('heading', { name: 'Version history' }).waitFor();
  await ui.screenshot('05-tool-test-run');

  // A tool with a JSON Schema 2020-12 inputSchema, an outputSchema, a title and hints:
  // text that is not JSON and a schema the server refuses are shown at the field.
  await page.getByRole('link', { name: 'All tools' }).click();
  await page.getByLabel('Tool name').fill('lookup');
  await page.getByRole('button', { name: 'Write tool' }).click();
  await page.getByLabel('Title (optional)').fill('Look up a region');
  await page.getByLabel('Description').fill('Says where a region is.');
  await page.getByRole('radio', { name: 'JSON Schema 2020-12' }).check();
  const inputSchema = page.getByLabel('Input schema (JSON Schema 2020-12)');
  // Switching starts the schema from the (empty) parameter list.
  expect(JSON.parse(await inputSchema.inputValue())).toMatchObject({
    type: 'object',
    properties: {},
  });
  await inputSchema.fill('{ "type": "object", ');
  await page.getByRole('button', { name: 'Save tool' }).click();
  await expect
    .poll(() => page.locator('#tool-input-schema-error').textContent())
    .toContain('is not valid JSON');
  const schemaText = (enumKeyword: string) =>
    JSON.stringify(
      {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        $defs: { region: { [enumKeyword]: ['eu', 'us'] } },
        properties: { region: { $ref: '#/$defs/region' } },
        required: ['region'],
        additionalProperties: false,
      },
      null,
      2,
    );
  await inputSchema.fill(schemaText('enumm'));
  await page
    .getByLabel('Output schema (optional)')
    .fill('{"type":"object","properties":{"where":{"type":"string"}},"required":["where"]}');
  await page.getByLabel('Read-only').selectOption('true');
  await page.getByLabel('Open world').selectOption('false');
  await page
    .getByRole('textbox', { name: 'Code' })
    .fill("return { where: params.region === 'eu' ? 'Europe' : 'America' };");
  await page.getByRole('button', { name: 'Save tool' }).click();
  await expect
    .poll(() => page.locator('#tool-input-schema-error').textContent())
    .toContain('inputSchema.$defs.region.enumm: unknown keyword "enumm"');
  expect(await inputSchema.getAttribute('aria-invalid')).toBe('true');
  expect(await page.locator('#tool-error').textContent()).toContain('Not saved');
  await ui.screenshot('05b-tool-schema-refused');
  expect((await plane.admin('GET', `/api/servers/${SUB}/tools/lookup`)).status).toBe(404);

  await inputSchema.fill(schemaText('enum'));
  await page.getByRole('button', { name: 'Save tool' }).click();
  await expect
    .poll(() => page.locator('#tool-status').textContent())
    .toContain('Saved as version 1');
  expect(await inputSchema.getAttribute('aria-invalid')).toBeNull();
  const saved = (await plane.admin('GET', `/api/servers/${SUB}/tools/lookup`)).body;
  expect(saved).toMatchObject({
    title: 'Look up a region',
    annotations: { readOnlyHint: true, openWorldHint: false },
    parameters: [],
    outputSchema: { required: ['where'] },
  });
  expect(JSON.stringify(saved.inputSchema, null, 2)).toBe(schemaText('enum'));

  // Its test run takes JSON arguments, prefilled from the schema; a mismatch names the path.
  const args = page.getByLabel('Arguments (JSON)');
  expect(JSON.parse(await args.inputValue())).toEqual({ region: 'eu' });
  await args.fill('{"region": "asia"}');
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  await expect
    .poll(() => page.locator('.run-output').textContent(), { timeout: 30_000 })
    .toContain('ERR_INVALID_ARGUMENT: arguments do not match inputSchema: /region must be one of');
  await args.fill('{"region": "eu"}');
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  await expect
    .poll(() => page.locator('#run-outcome').textContent(), { timeout: 30_000 })
    .toMatch(/Succeeded in \d+ ms/);
  expect(await page.locator('pre.result').textContent()).toContain('"where": "Europe"');
  await ui.screenshot('05c-tool-schema-test-run');

  // OAuth 2.0: unreachable and incomplete metadata are refused inline, nothing saved.
  await page.getByRole('link', { name: 'Settings' }).click();
  await page.getByLabel('Security mode').selectOption('oauth2');
  const unreachable = `${await closedPortUrl()}/.well-known/oauth-authorization-server`;
  await page.getByLabel('OAuth Server URL').fill(unreachable);
  await page.getByRole('button', { name: 'Save settings' }).click();
  await expect.poll(() => page.locator('#settings-error').textContent()).toContain('Not saved');
  expect(await page.getByLabel('OAuth Server URL').inputValue()).toBe(unreachable);
  await page
    .getByLabel('OAuth Server URL')
    .fill(`${doctored.url}/.well-known/oauth-authorization-server`);
  await page.getByRole('button', { name: 'Save settings' }).click();
  await expect
    .poll(() => page.locator('#settings-error').textContent())
    .toContain('registration_endpoint');
  expect(await page.getByLabel('Security mode').inputValue()).toBe('oauth2');
  await ui.screenshot('06-settings-oauth-refused');
  expect((await plane.admin('GET', `/api/servers/${SUB}`)).body.securityMode).toBe('none');

  await page.getByLabel('OAuth Server URL').fill(as.metadataUrl);
  // The default claims tools may read are offered; the operator narrows them.
  expect(await page.getByLabel('Token claims tools may read').inputValue()).toBe(
    'sub iss aud scope email name',
  );
  await page.getByLabel('Token claims tools may read').fill('sub, email roles');
  await page.getByRole('button', { name: 'Save settings' }).click();
  // The preferred address's metadata URL, as the API gives it (the path form on a `localhost` base).
  await expect
    .poll(() => page.locator('#prm-url').textContent())
    .toContain(`localhost:${plane.port}/.well-known/oauth-protected-resource`);
  const { body: active } = await plane.admin('GET', `/api/servers/${SUB}`);
  expect(await page.locator('#prm-url').textContent()).toBe(
    active.oauth.protectedResourceMetadataUrl,
  );
  expect(await page.locator('#settings-error').textContent()).toBe('');
  await ui.screenshot('07-settings-oauth-active');
  expect((await plane.admin('GET', `/api/servers/${SUB}`)).body.oauth.issuer).toBe(as.issuer);
  expect((await plane.admin('GET', `/api/servers/${SUB}`)).body.callerClaims).toEqual([
    'sub',
    'email',
    'roles',
  ]);

  // Pools & activity: the server's share of the budget; resize its shared pools; the run shows in the log.
  await page.getByRole('link', { name: 'Pools & activity' }).click();
  await expect.poll(() => page.locator('#pool-summary').textContent()).toMatch(/fair share/);
  await page.getByLabel(`Minimum containers kept for the shared pools of ${SUB}`).fill('0');
  await page.getByLabel(`Maximum size of the shared pools of ${SUB}`).fill('3');
  await page.getByRole('button', { name: `Save pool size for ${SUB}` }).click();
  await expect
    .poll(async () => {
      const { body } = await plane.admin('GET', '/api/pools');
      return body.pools.find((pool: any) => pool.server === SUB && !pool.tool)?.maxSize;
    })
    .toBe(3);
  await expect
    .poll(() => page.getByRole('table', { name: 'Running pools' }).textContent())
    .toMatch(/\(shared\).*-runc/);
  await page
    .getByRole('row', { name: /greet.*OK/ })
    .first()
    .waitFor();
  await ui.screenshot('08-pools-activity');

  // Delete, after a confirmation.
  await page.getByRole('link', { name: 'Servers' }).click();
  await page.getByRole('button', { name: `Delete ${SUB}` }).click();
  await page
    .getByRole('dialog')
    .getByRole('button', { name: `Delete ${SUB}` })
    .click();
  await expect.poll(() => page.getByRole('row', { name: new RegExp(SUB) }).count()).toBe(0);
  expect((await plane.admin('GET', `/api/servers/${SUB}`)).status).toBe(404);
  expect(ui.problems).toEqual([]);
}, 90_000);
