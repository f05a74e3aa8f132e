/**
 * Bundles the dashboard (control-plane/dashboard/src, CodeMirror included)
 * with esbuild into `dist/dashboard/`: `index.html`, `app.js`, `app.css`.
 * Skips work when the outputs are newer than every source. Runnable as
 * `tsx scripts/build-dashboard.ts`; `npm start` runs it (scripts/build-assets.ts).
 */
import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { isMainModule, listFiles, mtimeOrZero, newestMtime } from './file-times.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SOURCE_DIR = path.join(ROOT, 'control-plane', 'dashboard', 'src');
/** The files the dashboard handler serves; all must exist for a build to count as done. */
const OUTPUTS = ['index.html', 'app.js', 'app.css'];

/** Options of `buildDashboard`. */
export interface BuildDashboardOptions {
  /** Output folder; default `<repo>/dist/dashboard`. */
  outDir?: string;
}

/** Builds the dashboard assets if stale; returns the folder that holds them. */
export async function buildDashboard(
  options: BuildDashboardOptions = {},
): Promise<{ assetsDir: string }> {
  const assetsDir = path.resolve(options.outDir ?? path.join(ROOT, 'dist', 'dashboard'));
  const sources = await listFiles(SOURCE_DIR);
  sources.push(
    path.join(ROOT, 'scripts', 'build-dashboard.ts'),
    path.join(ROOT, 'package-lock.json'),
  );
  const newestSource = await newestMtime(sources);
  const oldestOutput = Math.min(
    ...(await Promise.all(OUTPUTS.map((name) => mtimeOrZero(path.join(assetsDir, name))))),
  );
  if (oldestOutput > newestSource) return { assetsDir };

  // Built beside and renamed into place: a control plane starting in parallel
  // (tests) never serves a half-written file.
  const staging = `${assetsDir}.staging-${process.pid}-${randomBytes(4).toString('hex')}`;
  await mkdir(staging, { recursive: true });
  await build({
    entryPoints: { app: path.join(SOURCE_DIR, 'main.ts') },
    outdir: staging,
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: ['chrome110', 'firefox110', 'safari16'],
    minify: true,
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'warning',
  });
  await copyFile(path.join(SOURCE_DIR, 'app.css'), path.join(staging, 'app.css'));
  await copyFile(path.join(SOURCE_DIR, 'index.html'), path.join(staging, 'index.html'));
  await mkdir(assetsDir, { recursive: true });
  // index.html last: its time stamp is what marks the build as complete.
  for (const name of ['app.js', 'app.css', 'index.html']) {
    await rename(path.join(staging, name), path.join(assetsDir, name));
  }
  await rm(staging, { recursive: true, force: true });
  return { assetsDir };
}

if (isMainModule(import.meta.url)) {
  const { assetsDir } = await buildDashboard();
  console.log(`dashboard: ${assetsDir}`);
}
