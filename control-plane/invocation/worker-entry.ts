/**
 * Starts a worker thread on a module of this folder, from the sources or the
 * build alike. Built (`dist/`, the image) the module is JavaScript beside
 * this file and Node loads it as is. From the sources (`npm start`, tests)
 * it is TypeScript, which Node 20 cannot load in a worker even under tsx
 * (the parent's loader hooks do not reach it): the worker then starts on a
 * two-line script that registers tsx's loader first.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** A worker on `name` (without extension) of this folder: `.js` when built, `.ts` from the sources. */
export function startWorker(name: string, options: WorkerOptions): Worker {
  const extension = extname(fileURLToPath(import.meta.url));
  const entry = new URL(`./${name}${extension}`, import.meta.url);
  if (extension !== '.ts') return new Worker(entry, options);
  const bootstrap = [
    `const { register } = await import(${JSON.stringify(tsxLoaderApi())});`,
    'register();',
    `await import(${JSON.stringify(entry.href)});`,
  ].join('\n');
  // An ES module either way: dynamic import and top-level await need no `require`.
  return new Worker(new URL(`data:text/javascript,${encodeURIComponent(bootstrap)}`), options);
}

/**
 * The ES module build of `tsx/esm/api`, whose `register()` installs tsx's
 * loader in the calling thread (`tsx/esm` alone does so only in the main
 * thread). Resolved from here, through tsx's own exports map: vitest offers
 * this module no import.meta.resolve, and `require.resolve` finds the
 * CommonJS build, which cannot register from a worker.
 */
function tsxLoaderApi(): string {
  const manifestPath = createRequire(import.meta.url).resolve('tsx/package.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
    exports: Record<string, { import: { default: string } }>;
  };
  return new URL(manifest.exports['./esm/api']!.import.default, pathToFileURL(manifestPath)).href;
}
