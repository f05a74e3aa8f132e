/**
 * `npm run runner:image [-- --base auto|registry|local] [--node-image node:26-slim]`
 * (without --base, RUNNER_BASE from the environment, default auto):
 * bundles the harness, then builds the runner image if its content changed.
 * The local base holds the pinned LTS node when the host's is end of life.
 * Progress (and the node the image runs) goes to stderr; the image tag to run
 * is the only line on stdout.
 */
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { readSetting } from '../control-plane/config.js';
import { ensureRunnerImage, RunnerBase } from '../control-plane/image-build/index.js';
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
    // --base wins over RUNNER_BASE (or its former name MCPHOST_RUNNER_BASE) in the environment.
    base: base?.data ?? readSetting('runnerBase'),
    nodeImage: values['node-image'],
    harnessDir: dirname(harnessPath),
    log: (line) => console.error(line),
  });
  console.log(tag);
} catch (error) {
  exitWithFailure(error);
}
