import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/**
 * Runs files in name order: the numbered files of test/faults end with the
 * Docker engine restart (99-…), which must come last because it stops every
 * container on the machine.
 */
class ByNameSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    return [...files].sort((a, b) => a.moduleId.localeCompare(b.moduleId));
  }
}

// The fault and load suite (`npm run test:faults`): kills containers, the
// control plane and the Docker engine itself, so it runs on its own, one file
// at a time, never beside `npm test`.
export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    fileParallelism: false,
    maxWorkers: 1,
    minWorkers: 1,
    sequence: { sequencer: ByNameSequencer },
    // The fault files skip themselves without it (see test/faults/support/fault-suite-guard.ts).
    env: { MCPHOST_FAULTS_SUITE: '1' },
    testTimeout: 420_000,
    hookTimeout: 180_000,
    reporters: ['default'],
  },
});
