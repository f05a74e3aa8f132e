/**
 * `npm run build`: compiles the control plane to dist/ (tsc), bundles the
 * harness to dist/runner/ and the dashboard to dist/dashboard/ (esbuild). `npm start` does not need it (it runs the
 * sources through tsx, and its prestart bundles the harness and the dashboard:
 * scripts/build-assets.ts); deployments do.
 */
import { execFileSync } from 'node:child_process';
import { buildDashboard } from './build-dashboard.js';
import { buildHarness } from './build-harness.js';

const harness = await buildHarness();
console.log(`harness: ${harness.harnessPath}`);
const dashboard = await buildDashboard();
console.log(`dashboard: ${dashboard.assetsDir}`);
execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
  stdio: 'inherit',
});
console.log('control plane: dist/control-plane/main.js');
