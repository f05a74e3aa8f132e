/**
 * `npm run runner:image [-- --base auto|registry|local] [--node-image node:22-slim]`:
 * bundles the harness, then builds the runner image if its content changed.
 * Progress goes to stderr; the image tag to run is the only line on stdout.
 */
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import {
  ensureRunnerImage,
  RunnerBase,
} from '../control-plane/sandbox/image/ensure-runner-image.js';
import { buildHarness } from './build-harness.js';
import { exitWithFailure } from './file-times.js';

const { values } = parseArgs({
  options: { base: { type: 'string' }, 'node-image': { type: 'string' } },
});

const base = values.base === undefined ? undefined : RunnerBase.safeParse(values.base);
if (base !== undefined && !base.success) {
  console.error(`--base must be auto, registry or local, got "${values.base}"`);
  process.exit(2);
}

try {
  const { harnessPath } = await buildHarness();
  const tag = await ensureRunnerImage({
    base: base?.data,
    nodeImage: values['node-image'],
    harnessDir: dirname(harnessPath),
    log: (line) => console.error(line),
  });
  console.log(tag);
} catch (error) {
  exitWithFailure(error);
}
