/**
 * The dashboard's built assets: bundled at start when missing or older than
 * their sources (a checkout), shipped prebuilt in a deployed build. A failure
 * to build never stops the service — the admin API works without its page —
 * it is logged, and the page is not served.
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

/** The dashboard handler, or undefined when no assets could be had. */
export async function prepareDashboard(log: Logger): Promise<DashboardHandler | undefined> {
  const shipped = join(findRepoRoot(), 'dist', 'dashboard');
  try {
    const { buildDashboard } = await import('../../scripts/build-dashboard.js');
    const { assetsDir } = await buildDashboard();
    return createDashboardHandler({ assetsDir });
  } catch (error) {
    if (existsSync(join(shipped, 'index.html'))) {
      log.debug({ err: error }, 'dashboard not rebuilt; serving the shipped assets');
      return createDashboardHandler({ assetsDir: shipped });
    }
    log.error({ err: error }, 'the dashboard could not be built; the admin API works without it');
    return undefined;
  }
}
