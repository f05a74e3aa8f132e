/**
 * `npm run build`: compiles the control plane to dist/ (tsc) and bundles the
 * harness to dist/runner/ (esbuild). `npm start` does not need it (it runs the
 * sources through tsx and bundles the harness on demand); deployments do.
 */
import { execFileSync } from 'node:child_process';
import { buildHarness } from './build-harness.js';

const harness = await buildHarness();
console.log(`harness: ${harness.harnessPath}`);
execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
  stdio: 'inherit',
});
console.log('control plane: dist/control-plane/main.js');
