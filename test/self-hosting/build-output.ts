/**
 * Test helper: a complete build output (what `npm run build` leaves in dist/)
 * in a temporary folder, so these tests never write the shared dist/ that
 * other suites and engineers use at the same time.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { buildDashboard } from '../../scripts/build-dashboard.js';
import { buildHarness } from '../../scripts/build-harness.js';

const run = promisify(execFile);

/** The repository root (this file lives in test/self-hosting/). */
export const REPO_ROOT = resolve(import.meta.dirname, '..', '..');

/** Compiles the control plane and bundles harness and dashboard into a new temp folder; returns it. */
export async function buildOutputInTemp(): Promise<string> {
  const distDir = await mkdtemp(join(tmpdir(), 'mcphost-self-hosting-dist-'));
  try {
    await run(
      process.execPath,
      [
        join(REPO_ROOT, 'node_modules/typescript/bin/tsc'),
        '-p',
        'tsconfig.build.json',
        '--outDir',
        distDir,
      ],
      { cwd: REPO_ROOT, maxBuffer: 16 * 1048576 },
    );
  } catch (error) {
    // tsc still emits on type errors; those are the lint step's business. A
    // missing entry point is ours.
    if (!existsSync(join(distDir, 'control-plane', 'main.js'))) throw error;
  }
  await buildHarness({ outDir: join(distDir, 'runner') });
  await buildDashboard({ outDir: join(distDir, 'dashboard') });
  return distDir;
}
