/**
 * Where the runner image's ingredients live. Resolved from this file's own
 * location by walking up to the repository root, so it works both under tsx
 * (control-plane/image-build/) and compiled (dist/control-plane/image-build/).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** File name of the runner Dockerfile at the repository root. */
export const RUNNER_DOCKERFILE_NAME = 'Dockerfile.runner';

/** The repository root: the nearest ancestor holding package.json and Dockerfile.runner. */
export function findRepoRoot(startDir: string = dirname(fileURLToPath(import.meta.url))): string {
  let dir = startDir;
  while (true) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, RUNNER_DOCKERFILE_NAME)))
      return dir;
    const parent = dirname(dir);
    if (parent === dir) {
      throw new TypeError(`cannot find the mcphost repository root above ${startDir}`);
    }
    dir = parent;
  }
}

/** Default folder of the harness bundle (harness.mjs, lodash.min.js): `<repo>/dist/runner`. */
export function defaultHarnessDir(): string {
  return join(findRepoRoot(), 'dist', 'runner');
}

/** Path of Dockerfile.runner at the repository root. */
export function runnerDockerfilePath(): string {
  return join(findRepoRoot(), RUNNER_DOCKERFILE_NAME);
}
