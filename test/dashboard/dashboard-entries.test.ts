/**
 * The Prompts and Resources tabs end to end in Debian's Chromium
 * (playwright-core) against a real control plane with real containers: a
 * template prompt (a placeholder naming no argument and a syntax error in
 * completion code are refused at their fields, nothing saved; then saved
 * and rendered), a code prompt rendered in a container, a second save and a
 * rollback in the version history, a static resource and a resource
 * template previewed. Screenshots (1280×800 and 420 px wide) go to
 * test-artifacts/dashboard/.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../support/control-plane.js';
import { launchDashboardBrowser, signIn, type DashboardBrowser } from './browser.js';

const SUB = `entries-${process.pid}`;
/** A 1×1 PNG, for an image message. */
const PIXEL_PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
/** Renders and previews that run code wait for a container. */
const RUN_TIMEOUT = { timeout: 60_000 };

let plane: TestControlPlane;
let ui: DashboardBrowser;
let page: Page;

beforeAll(async () => {
  [plane, ui] = await Promise.all([startTestControlPlane(), launchDashboardBrowser()]);
  page = ui.page;
  expect((await plane.admin('POST', '/api/servers', { subdomain: SUB })).status).toBe(201);
}, 180_000);

afterAll(async () => {
  await ui?.close();
  await plane?.close();
});

/** From the list of `kind`, opens the editor of a new one named `name`. */
async function openNewEditor(kind: 'prompt' | 'resource', name: string): Promise<void> {
  await page.getByLabel(kind === 'prompt' ? 'Prompt name' : 'Resource name').fill(name);
  await page.getByRole('button', { name: `New ${kind}` }).click();
  await page.getByRole('heading', { name: `New ${kind} ${name}` }).waitFor();
}

/** Text of an element, for polling. */
const textOf = (selector: string) => () => page.locator(selector).first().textContent();

it('edits, renders and previews prompts and resources in a real browser', async () => {
  await page.goto(plane.adminUrl);
  await signIn(page);
  await page.getByRole('link', { name: SUB }).click();
  await page.getByRole('link', { name: 'Prompts' }).click();
  await page.getByRole('heading', { name: 'Prompts', exact: true }).waitFor();
  expect(await page.locator('main').textContent()).toContain('No prompts yet.');

  // A template prompt whose text names an argument it does not declare: refused at the message.
  await openNewEditor('prompt', 'summarise');
  await page.getByLabel('Title (optional)').fill('Summarise a city');
  await page.getByLabel('Description', { exact: true }).fill('Asks for a summary of a city');
  await page.getByRole('button', { name: 'Add argument' }).click();
  await page.getByLabel('Argument 1 name').fill('city');
  await page.getByLabel('Argument 1 description').fill('Which city');
  await page.getByLabel('Argument 1 required').check();
  await page
    .getByRole('group', { name: 'Argument 1 completion' })
    .getByRole('radio', { name: 'Values' })
    .check();
  await page.getByLabel('Argument 1 completion values').fill('Paris, Parma\nLisbon');
  const messageText = page.getByLabel('Message 1 text');
  await messageText.fill('Summarise {{city}} in a {{ style }} style.');
  await page.getByRole('button', { name: 'Add message' }).click();
  await page.getByLabel('Message 2 content type').selectOption('resource');
  await page.getByLabel('Message 2 resource URI').fill('docs://cities/{{city}}');
  await page.getByLabel('Message 2 MIME type').fill('text/plain');
  await page.getByLabel('Message 2 resource text').fill('Notes on {{city}}');
  await page.getByRole('button', { name: 'Save prompt' }).click();
  await expect.poll(textOf('#prompt-error')).toContain('Not saved');
  expect(await page.locator('#prompt-error').textContent()).toContain(
    '{{style}} is not a declared argument',
  );
  expect(await messageText.getAttribute('aria-invalid')).toBe('true');
  // At the message that holds the placeholder, not at the other one.
  const messageProblems = page.locator('.message-row .field-error');
  expect(await messageProblems.nth(0).textContent()).toContain(
    '{{style}} is not a declared argument',
  );
  expect(await messageProblems.nth(1).textContent()).toBe('');
  await ui.screenshot('entries-01-prompt-placeholder-refused');
  expect((await plane.admin('GET', `/api/servers/${SUB}/prompts/summarise`)).status).toBe(404);

  // The second argument completes from code; a syntax error there is marked at its line.
  await page.getByRole('button', { name: 'Add argument' }).click();
  await page.getByLabel('Argument 2 name').fill('style');
  await page
    .getByRole('group', { name: 'Argument 2 completion' })
    .getByRole('radio', { name: 'Code' })
    .check();
  const completionCode = page.getByRole('textbox', { name: 'Argument 2 completion code' });
  await completionCode.fill("return ['short', 'long'].filter((s) => s.startsWith(params.value);");
  await page.getByRole('button', { name: 'Save prompt' }).click();
  await expect.poll(textOf('#prompt-error')).toContain('Syntax error at line 1');
  expect(await page.locator('#prompt-error').textContent()).toContain('arguments.1.complete.code');
  expect(await page.locator('.cm-error-line').textContent()).toContain("return ['short'");
  expect(await messageText.getAttribute('aria-invalid')).toBeNull();
  await ui.screenshot('entries-02-completion-syntax-error');
  expect((await plane.admin('GET', `/api/servers/${SUB}/prompts/summarise`)).status).toBe(404);

  await completionCode.fill("return ['short', 'long'].filter((s) => s.startsWith(params.value));");
  await page.getByRole('button', { name: 'Save prompt' }).click();
  await expect.poll(textOf('#prompt-status')).toContain('Saved as version 1');
  expect(await page.locator('.cm-error-line').count()).toBe(0);
  expect((await plane.admin('GET', `/api/servers/${SUB}/prompts/summarise`)).body).toMatchObject({
    title: 'Summarise a city',
    arguments: [
      { name: 'city', required: true, complete: { values: ['Paris', 'Parma', 'Lisbon'] } },
      { name: 'style', required: false, complete: { code: expect.stringContaining('short') } },
    ],
    messages: [
      {
        role: 'user',
        content: { type: 'text', text: 'Summarise {{city}} in a {{ style }} style.' },
      },
      {
        role: 'user',
        content: {
          type: 'resource',
          resource: {
            uri: 'docs://cities/{{city}}',
            mimeType: 'text/plain',
            text: 'Notes on {{city}}',
          },
        },
      },
    ],
  });

  // Rendering replaces the placeholders with the values typed.
  await page.getByLabel('city', { exact: true }).fill('Lisbon');
  await page.getByLabel('style (optional)', { exact: true }).fill('short');
  await page.getByRole('button', { name: 'Render', exact: true }).click();
  await expect.poll(textOf('#render-outcome'), RUN_TIMEOUT).toContain('Rendered');
  const templateMessages = page.locator('.messages > li');
  expect(await templateMessages.nth(0).textContent()).toContain(
    'Summarise Lisbon in a short style.',
  );
  expect(await templateMessages.nth(1).textContent()).toMatch(
    /Resource docs:\/\/cities\/Lisbon \(text\/plain\)Notes on Lisbon/,
  );
  await ui.screenshot('entries-03-template-prompt-rendered');

  // A second save, then a rollback to the first: saved again as version 3.
  await page.getByLabel('Title (optional)').fill('Summarise a town');
  await page.getByRole('button', { name: 'Save prompt' }).click();
  await expect.poll(textOf('#prompt-status')).toContain('Saved as version 2');
  await expect
    .poll(() => page.getByRole('table', { name: 'Version history' }).getByRole('row').count())
    .toBe(3);
  await page.getByRole('button', { name: 'Roll back to version 1' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Roll back to 1' }).click();
  await page.getByRole('heading', { name: 'Prompt summarise (version 3)' }).waitFor();
  expect(await page.getByLabel('Title (optional)').inputValue()).toBe('Summarise a city');
  await expect
    .poll(() => page.getByRole('table', { name: 'Version history' }).getByRole('row').count())
    .toBe(4);
  await ui.screenshot('entries-04-prompt-rolled-back');
  const rolledBack = (await plane.admin('GET', `/api/servers/${SUB}/prompts/summarise`)).body;
  expect(rolledBack).toMatchObject({ version: 3, title: 'Summarise a city' });

  // A prompt whose messages come from code, rendered in a container.
  await page.getByRole('link', { name: 'All prompts' }).click();
  await openNewEditor('prompt', 'greeting');
  await page.getByLabel('Description', { exact: true }).fill('Greets someone, from code');
  await page.getByRole('button', { name: 'Add argument' }).click();
  await page.getByLabel('Argument 1 name').fill('name');
  await page.getByLabel('Argument 1 required').check();
  await page
    .getByRole('radiogroup', { name: 'Messages from' })
    .getByRole('radio', { name: 'Code' })
    .check();
  expect(await messageText.isHidden()).toBe(true);
  await page
    .getByRole('textbox', { name: 'Prompt code' })
    .fill(
      [
        "console.log('rendering for', params.name);",
        'return [',
        "  { role: 'user', content: sdk.content.text('Hello ' + params.name) },",
        "  { role: 'assistant', content: { type: 'text', text: 'Hi there!' } },",
        `  { role: 'user', content: sdk.content.image('${PIXEL_PNG}', 'image/png') },`,
        '];',
      ].join('\n'),
    );
  await page.getByRole('button', { name: 'Save prompt' }).click();
  await expect.poll(textOf('#prompt-status')).toContain('Saved as version 1');
  await page.getByLabel('name', { exact: true }).fill('Ada');
  await page.getByRole('button', { name: 'Render', exact: true }).click();
  await expect.poll(textOf('#render-outcome'), RUN_TIMEOUT).toMatch(/Rendered in \d+ ms/);
  const rendered = page.locator('.messages > li');
  expect(await rendered.count()).toBe(3);
  expect(await rendered.nth(0).textContent()).toMatch(/user.*Hello Ada/);
  expect(await rendered.nth(1).textContent()).toMatch(/assistant.*Hi there!/);
  // An image block is shown as the image (the page's policy admits data: images).
  const image = rendered.nth(2).getByRole('img');
  expect(await image.getAttribute('alt')).toBe('Image (image/png, 70 bytes)');
  expect(await image.evaluate((element) => (element as HTMLImageElement).naturalWidth)).toBe(1);
  expect(await page.locator('.logs').textContent()).toContain('rendering for Ada');
  await ui.screenshot('entries-05-code-prompt-rendered');

  // The list shows both, with what their messages come from and their versions.
  await page.getByRole('link', { name: 'All prompts' }).click();
  await expect
    .poll(() => page.getByRole('row', { name: /summarise/ }).textContent())
    .toMatch(/Summarise a city.*city, style.*Template.*3/);
  expect(await page.getByRole('row', { name: /greeting/ }).textContent()).toMatch(/name.*Code.*1/);
  await ui.screenshot('entries-06-prompts');

  // A static text resource, previewed.
  await page.getByRole('link', { name: 'Resources' }).click();
  await page.getByRole('heading', { name: 'Resources', exact: true }).waitFor();
  await openNewEditor('resource', 'handbook');
  await page.getByLabel('Title (optional)').fill('Handbook');
  await page.getByLabel('URI', { exact: true }).fill('docs://handbook');
  await page.getByLabel('MIME type (optional)').fill('text/markdown');
  await page
    .getByRole('textbox', { name: 'Text', exact: true })
    .fill('# Handbook\n\nBe kind to the containers.');
  await page.getByRole('button', { name: 'Save resource' }).click();
  await expect.poll(textOf('#resource-status')).toContain('Saved as version 1');
  await page.getByRole('button', { name: 'Preview', exact: true }).click();
  await expect.poll(textOf('#preview-outcome'), RUN_TIMEOUT).toContain('Read');
  const contents = await page.locator('.contents').textContent();
  expect(contents).toContain('docs://handbook');
  expect(contents).toContain('text/markdown');
  expect(contents).toContain('Be kind to the containers.');
  await ui.screenshot('entries-07-static-resource-preview');

  // A resource template: its variable gets completion values, its preview an input.
  await page.getByRole('link', { name: 'All resources' }).click();
  await openNewEditor('resource', 'weather');
  await page
    .getByRole('radiogroup', { name: 'Resource kind' })
    .getByRole('radio', { name: 'Template' })
    .check();
  await page.getByLabel('URI template').fill('weather://{city}/today');
  await page
    .getByRole('group', { name: 'Variable city completion' })
    .getByRole('radio', { name: 'Values' })
    .check();
  await page.getByLabel('Variable city completion values').fill('Paris\nLisbon');
  await page.getByLabel('MIME type (optional)').fill('application/json');
  await page
    .getByRole('textbox', { name: 'Template code' })
    .fill(
      [
        "console.log('reading', params.city);",
        "return { city: params.city, forecast: 'sunny' };",
      ].join('\n'),
    );
  await page.getByRole('button', { name: 'Save resource' }).click();
  await expect.poll(textOf('#resource-status')).toContain('Saved as version 1');
  expect((await plane.admin('GET', `/api/servers/${SUB}/resources/weather`)).body).toMatchObject({
    uriTemplate: 'weather://{city}/today',
    complete: { city: { values: ['Paris', 'Lisbon'] } },
  });
  await page.getByLabel('city', { exact: true }).fill('Lisbon');
  await page.getByRole('button', { name: 'Preview', exact: true }).click();
  await expect.poll(textOf('#preview-outcome'), RUN_TIMEOUT).toMatch(/Read in \d+ ms/);
  const read = await page.locator('.contents').textContent();
  expect(read).toContain('weather://Lisbon/today');
  expect(read).toContain('sunny');
  expect(await page.locator('.logs').textContent()).toContain('reading Lisbon');
  await ui.screenshot('entries-08-template-resource-preview');

  await page.getByRole('link', { name: 'All resources' }).click();
  await expect
    .poll(() => page.getByRole('row', { name: /weather/ }).textContent())
    .toMatch(/Template.*weather:\/\/\{city\}\/today/);
  expect(await page.getByRole('row', { name: /handbook/ }).textContent()).toMatch(
    /Static.*docs:\/\/handbook.*Handbook.*text\/markdown/,
  );
  await ui.screenshot('entries-09-resources');
  expect(ui.problems).toEqual([]);
}, 180_000);
