import { defineConfig } from 'vitest/config';

// Integration tests share one Docker engine and two database servers; two
// workers keep a 2-core machine busy without starving the containers.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The fault suite restarts the Docker engine: it runs on its own (npm run test:faults).
    exclude: ['test/faults/**', 'node_modules/**'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    minWorkers: 1,
    testTimeout: 60_000,
    hookTimeout: 180_000,
    reporters: ['default'],
  },
});
