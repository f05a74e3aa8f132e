/**
 * `npm run build:assets` (and `npm start`, before it starts): bundles what the
 * control plane reads at run time — the harness (dist/runner/) and the
 * dashboard (dist/dashboard/) — when missing or older than their sources.
 * The control plane itself only reads them: building is this explicit step.
 *
 * As before the step moved out of the control plane: a build that fails while
 * an older bundle is there keeps that one (a deployed copy may lack the
 * bundler); a missing harness stops here, a missing dashboard does not (the
 * admin API works without its page).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { buildDashboard } from './build-dashboard.js';
import { buildHarness } from './build-harness.js';
import { isMainModule } from './file-times.js';
import { defaultHarnessDir, findRepoRoot } from '../control-plane/image-build/index.js';

/** Builds both; resolves false when the harness could not be had (the start cannot go on). */
export async function buildAssets(log: (line: string) => void = console.error): Promise<boolean> {
  let ok = true;
  try {
    await buildHarness();
  } catch (error) {
    if (existsSync(join(defaultHarnessDir(), 'harness.mjs'))) {
      log(`harness bundle not rebuilt (${(error as Error).message}); using the one in dist/runner`);
    } else {
      log(`the harness bundle could not be built: ${(error as Error).stack ?? String(error)}`);
      ok = false;
    }
  }
  try {
    await buildDashboard();
  } catch (error) {
    const shipped = existsSync(join(findRepoRoot(), 'dist', 'dashboard', 'index.html'));
    log(
      shipped
        ? `dashboard not rebuilt (${(error as Error).message}); serving the assets in dist/dashboard`
        : `the dashboard could not be built (${(error as Error).message}); the admin API works without it`,
    );
  }
  return ok;
}

if (isMainModule(import.meta.url)) {
  if (!(await buildAssets())) process.exit(1);
}
