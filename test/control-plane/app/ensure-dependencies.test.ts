/**
 * `npm start` and `npm test` install the dependencies first when
 * node_modules is missing or does not hold what package-lock.json names
 * (scripts/ensure-dependencies.mjs, their pre-scripts), and do nothing when it
 * does. Run on a copy of the script in a scratch project, with `npm` on PATH
 * replaced by a recorder, so nothing is installed from a registry.
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';

const scratch: string[] = [];
afterEach(() => {
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const LOCK = {
  name: 'scratch',
  lockfileVersion: 3,
  packages: {
    '': { name: 'scratch' },
    'node_modules/left-pad': { version: '1.3.0' },
    'node_modules/fsevents': { version: '2.3.3', optional: true },
  },
};

/** A project with the script, a lock file, `installed` as node_modules' record (or none). */
function project(installed: object | undefined) {
  const dir = mkdtempSync(join(tmpdir(), 'mcphost-deps-'));
  scratch.push(dir);
  mkdirSync(join(dir, 'scripts'));
  copyFileSync('scripts/ensure-dependencies.mjs', join(dir, 'scripts/ensure-dependencies.mjs'));
  writeFileSync(join(dir, 'package-lock.json'), JSON.stringify(LOCK));
  if (installed) {
    mkdirSync(join(dir, 'node_modules'));
    writeFileSync(join(dir, 'node_modules/.package-lock.json'), JSON.stringify(installed));
  }
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'npm'), `#!/bin/sh\necho "$@" >> "${join(dir, 'npm-calls')}"\n`);
  chmodSync(join(bin, 'npm'), 0o755);
  const run = spawnSync(process.execPath, [join(dir, 'scripts/ensure-dependencies.mjs')], {
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
    encoding: 'utf8',
  });
  let calls = '';
  try {
    calls = readFileSync(join(dir, 'npm-calls'), 'utf8');
  } catch {
    calls = '';
  }
  return { status: run.status, stdout: run.stdout, calls };
}

it('runs npm ci when node_modules is missing', () => {
  const run = project(undefined);
  expect(run.status).toBe(0);
  expect(run.stdout).toContain('installing dependencies (node_modules is missing)');
  expect(run.calls.trim()).toBe('ci --include=dev --no-audit --no-fund');
});

it('runs npm ci when an installed version differs from the lock file', () => {
  const run = project({ packages: { 'node_modules/left-pad': { version: '1.1.0' } } });
  expect(run.stdout).toContain('left-pad 1.3.0 is not installed');
  expect(run.calls.trim()).toBe('ci --include=dev --no-audit --no-fund');
});

it('does nothing when node_modules holds the lock file (optional packages may be absent)', () => {
  const run = project({ packages: { 'node_modules/left-pad': { version: '1.3.0' } } });
  expect(run.status).toBe(0);
  expect(run.stdout).toBe('');
  expect(run.calls).toBe('');
});
