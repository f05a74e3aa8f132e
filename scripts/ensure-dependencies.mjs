/**
 * `npm start` and `npm test` on a fresh or updated clone: installs the
 * dependencies (`npm ci`) when node_modules is missing or does not hold what
 * package-lock.json names, so those two commands are the whole set-up. Plain
 * Node with no dependency of its own: it runs before any is installed.
 * Optional packages (other platforms' binaries) may be absent.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const lockPath = join(root, 'package-lock.json');
const installedPath = join(root, 'node_modules', '.package-lock.json');

/** Why an install is needed, or undefined when node_modules matches the lock file. */
function staleness() {
  if (!existsSync(installedPath)) return 'node_modules is missing';
  const lock = JSON.parse(readFileSync(lockPath, 'utf8')).packages ?? {};
  const installed = JSON.parse(readFileSync(installedPath, 'utf8')).packages ?? {};
  for (const [path, entry] of Object.entries(lock)) {
    if (path === '' || entry.optional || entry.link) continue;
    if (installed[path]?.version !== entry.version) {
      return `${path.replace(/^node_modules\//, '')} ${entry.version} is not installed`;
    }
  }
  return undefined;
}

const why = staleness();
if (why !== undefined) {
  console.log(`mcphost: installing dependencies (${why}): npm ci`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  // Dev packages too (tsx runs npm start), whatever NODE_ENV or omit=dev say.
  const result = spawnSync(npm, ['ci', '--include=dev', '--no-audit', '--no-fund'], {
    cwd: root,
    stdio: 'inherit',
  });
  if (result.status !== 0) {
    console.error('mcphost: npm ci failed; see above');
    process.exit(result.status ?? 1);
  }
}
