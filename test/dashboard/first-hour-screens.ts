/**
 * What the first-hour dashboard tests share: screenshots of a screen at a
 * desktop size and at 390 px (a phone), into test-artifacts/screenshots/
 * (not committed), and the page's width, which must never exceed the
 * window's (no sideways scrolling of the whole page).
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';

const SCREENSHOTS = path.resolve('test-artifacts', 'screenshots');
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** Screenshots the current screen as `{name}-desktop.png` and `{name}-390.png`; the page ends at desktop size. */
export async function screenshotBoth(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.setViewportSize(DESKTOP);
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-desktop.png`), fullPage: true });
  await page.setViewportSize(PHONE);
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-390.png`), fullPage: true });
  await page.setViewportSize(DESKTOP);
}

/** Screenshots the current screen at its current size as `{name}.png`. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** How wide the document is, in CSS pixels (wider than the window: the page scrolls sideways). */
export function pageWidth(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth);
}
