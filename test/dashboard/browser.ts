/**
 * The browser of the dashboard's end-to-end tests: Debian's Chromium
 * (playwright-core), headless, with one page that records what a test must
 * never see — script errors, CSP violations, page assets that failed to
 * load — screenshots of each screen wide and narrow, and signing in.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { TEST_ADMIN_TOKEN } from '../support/control-plane.js';

const ARTIFACTS = path.resolve('test-artifacts', 'dashboard');
const WIDE = { width: 1280, height: 800 };
const NARROW = { width: 420, height: 800 };

export interface DashboardBrowser {
  readonly page: Page;
  /** What went wrong on the page so far; a test ends expecting none. */
  readonly problems: string[];
  /** Screenshots the current screen 1280×800 and 420 px wide, as `{name}-1280.png` and `{name}-420.png`. */
  screenshot(name: string): Promise<void>;
  close(): Promise<void>;
}

/** Launches Chromium and opens the page (1280×800). */
export async function launchDashboardBrowser(): Promise<DashboardBrowser> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const browser: Browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  const page = await browser.newPage({ viewport: WIDE });
  const problems: string[] = [];
  // CSP violations and script errors show up here; the page must have none.
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of 4\d\d/.test(message.text()))
      problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  // Every page asset must load (the API's 4xx answers are part of the flow).
  page.on('response', (response) => {
    const { pathname } = new URL(response.url());
    if (!pathname.startsWith('/api/') && response.status() >= 400)
      problems.push(`${response.status()} ${pathname}`);
  });
  return {
    page,
    problems,
    screenshot: async (name) => {
      await page.screenshot({ path: path.join(ARTIFACTS, `${name}-1280.png`), fullPage: true });
      await page.setViewportSize(NARROW);
      await page.screenshot({ path: path.join(ARTIFACTS, `${name}-420.png`), fullPage: true });
      await page.setViewportSize(WIDE);
    },
    close: () => browser.close(),
  };
}

/** Signs in with the test admin token from the sign-in screen; resolves on the server list. */
export async function signIn(page: Page): Promise<void> {
  await page.getByLabel('Admin token').fill(TEST_ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Servers', level: 1 }).waitFor();
}

/** Signs in with a local account's e-mail and password; resolves on the server list. */
export async function signInWithPassword(
  page: Page,
  email: string,
  password: string,
): Promise<void> {
  await page.getByLabel('E-mail', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Servers', level: 1 }).waitFor();
}

/** Signs out from the header; resolves on the sign-in screen. */
export async function signOut(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
}
