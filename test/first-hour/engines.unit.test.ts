/**
 * package.json's `engines` and every installed package's agree: `npm ci` on
 * any Node the project accepts prints no EBADENGINE, and this machine's Node
 * is one of them. (content-type 3, which asks for Node 22, came in through
 * the conformance suite's @octokit/request: package.json's `overrides` pins
 * it to 2.1.0, which that same @octokit/request code used until 10.0.14.)
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const REPO = new URL('../../', import.meta.url).pathname;
const run = promisify(execFile);

/** npm's own semver (a dependency of the toolchain), for its range arithmetic. */
const semver = createRequire(import.meta.url)('semver') as {
  subset(sub: string, dom: string): boolean;
  satisfies(version: string, range: string): boolean;
};

interface LockEntry {
  version?: string;
  engines?: { node?: string };
  optional?: boolean;
}

const manifest = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
  engines: { node: string };
};
const lock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, LockEntry>;
};

it('accepts Node 20, 22 and 24, and the Node running this test', () => {
  const ours = manifest.engines.node;
  for (const version of ['20.19.0', '22.13.0', '24.0.0']) {
    expect(semver.satisfies(version, ours)).toBe(true);
  }
  expect(semver.satisfies(process.versions.node, ours)).toBe(true);
  expect(lock.packages['']?.engines?.node).toBe(ours);
});

it('asks for no Node that some installed package refuses', () => {
  const ours = manifest.engines.node;
  const refusing = Object.entries(lock.packages)
    // npm leaves out an optional package whose engines do not fit, without a warning.
    .filter(([path, entry]) => path !== '' && !entry.optional && entry.engines?.node)
    .filter(([, entry]) => !semver.subset(ours, entry.engines!.node!))
    .map(([path, entry]) => `${path}@${entry.version} wants node ${entry.engines!.node}`);
  expect(refusing).toEqual([]);
});

it('installs from the lockfile without an EBADENGINE warning on this Node', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcphost-engines-'));
  try {
    copyFileSync(join(REPO, 'package.json'), join(dir, 'package.json'));
    copyFileSync(join(REPO, 'package-lock.json'), join(dir, 'package-lock.json'));
    const { stdout, stderr } = await run(
      'npm',
      ['ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'],
      { cwd: dir, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
    );
    expect(`${stdout}${stderr}`).not.toContain('EBADENGINE');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
