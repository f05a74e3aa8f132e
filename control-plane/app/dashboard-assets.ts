/**
 * The dashboard's built assets (dist/dashboard/). Building them is a step of
 * its own (`npm run build:assets`, which `npm start` runs first; `npm run
 * build` for a deployment): the control plane only reads them. Missing assets
 * never stop the service — the admin API works without its page — they are
 * logged with the command that builds them, and the page is not served.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../logger.js';
import { createDashboardHandler } from '../dashboard/index.js';
import { findRepoRoot } from '../image-build/index.js';

export type DashboardHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
) => Promise<boolean>;

/** The dashboard handler, or undefined when the assets are not built. */
export function prepareDashboard(log: Logger): DashboardHandler | undefined {
  const assetsDir = join(findRepoRoot(), 'dist', 'dashboard');
  if (existsSync(join(assetsDir, 'index.html'))) return createDashboardHandler({ assetsDir });
  log.error(
    { assetsDir },
    'the dashboard is not built: run `npm run build:assets` (`npm start` runs it before it starts); the admin API works without it',
  );
  return undefined;
}
