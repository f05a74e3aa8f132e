/**
 * Bundles the harness (runner-image/harness.ts, zod included) into one ESM file
 * and puts lodash.min.js beside it: `dist/runner/harness.mjs` and
 * `dist/runner/lodash.min.js`. Skips work when the outputs are newer than every
 * input. Runnable as `tsx scripts/build-harness.ts`.
 */
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { isMainModule, listFiles, mtimeOrZero, newestMtime } from './file-times.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Folders whose files go into the bundle. */
const SOURCE_DIRS = ['runner-image', 'src'];

/**
 * The bootstrap's files, in the order they are stitched: every one declares one
 * function and names nothing from another (install.js is handed the formatter).
 */
const BOOTSTRAP_DIR = path.join(ROOT, 'runner-image', 'bootstrap');
const BOOTSTRAP_FILES = ['console-format.js', 'install.js'];

/**
 * The script tool-context.ts compiles in every tool context: the bootstrap's
 * files, unchanged, inside one function whose result is `install`. Text, not
 * a bundle: what runs is what was reviewed, and nothing of it is a module a
 * tool could reach.
 */
export async function bootstrapSource(): Promise<string> {
  const files = await Promise.all(
    BOOTSTRAP_FILES.map((name) => readFile(path.join(BOOTSTRAP_DIR, name), 'utf8')),
  );
  return `(function () {\n${files.join('\n')}\nreturn bootstrap(createConsoleFormatter);\n})()`;
}

/** Options of `buildHarness`. */
export interface BuildHarnessOptions {
  /** Output folder; default `<repo>/dist/runner`. */
  outDir?: string;
}

/** Builds the harness bundle if stale; returns the paths of the two files. */
export async function buildHarness(
  options: BuildHarnessOptions = {},
): Promise<{ harnessPath: string; lodashPath: string }> {
  const outDir = path.resolve(options.outDir ?? path.join(ROOT, 'dist', 'runner'));
  const harnessPath = path.join(outDir, 'harness.mjs');
  const lodashPath = path.join(outDir, 'lodash.min.js');
  const lodashSource = path.join(ROOT, 'node_modules', 'lodash', 'lodash.min.js');
  await mkdir(outDir, { recursive: true });

  const sources = (
    await Promise.all(SOURCE_DIRS.map((dir) => listFiles(path.join(ROOT, dir))))
  ).flat();
  sources.push(
    path.join(ROOT, 'scripts', 'build-harness.ts'),
    path.join(ROOT, 'package-lock.json'),
  );
  if ((await newestMtime(sources)) >= (await mtimeOrZero(harnessPath))) {
    await build({
      entryPoints: [path.join(ROOT, 'runner-image', 'harness.ts')],
      outfile: harnessPath,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      // Readable stack traces in diagnostics matter more than a few kB.
      minify: false,
      sourcemap: false,
      legalComments: 'none',
      define: { MCPHOST_BOOTSTRAP_SOURCE: JSON.stringify(await bootstrapSource()) },
      logLevel: 'warning',
    });
  }
  if ((await mtimeOrZero(lodashSource)) >= (await mtimeOrZero(lodashPath))) {
    await copyFile(lodashSource, lodashPath);
  }
  return { harnessPath, lodashPath };
}

if (isMainModule(import.meta.url)) {
  const { harnessPath, lodashPath } = await buildHarness();
  console.log(`harness: ${harnessPath}\nlodash: ${lodashPath}`);
}
