/**
 * The MCP Inspector's command line, as the README's quick start runs it
 * (`npx @modelcontextprotocol/inspector --cli …`), for the quick-start test.
 *
 * The Inspector 2.x asks for Node ≥ 22.19 (`engines`) and brings a web UI's
 * dependencies (React, Vite, Ink): as a devDependency it would make every
 * `npm ci` on Node 20 print EBADENGINE and weigh on every install. So it is
 * installed like the conformance suite's Node 22 (test/conformance/node22.ts):
 * pinned exactly, from npm, into a cache folder under node_modules, outside
 * package.json and the lockfile, by npm running on that Node 22 (so npm picks
 * the dependencies for the Node that runs them), without install scripts (its
 * only one, `install-clients.mjs`, does nothing in an installed copy).
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { provisionNode22 } from '../conformance/node22.js';

const execFileAsync = promisify(execFile);

/** The Inspector release the test runs: exact, as a lockfile would pin it. */
export const INSPECTOR_VERSION = '2.12.0';

const REPOSITORY_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Where it is installed: one folder, reused by every run on this machine. */
export const INSPECTOR_CACHE_DIR = join(REPOSITORY_ROOT, 'node_modules/.cache/mcphost-inspector');

/** How long npm may take to install it, in ms. */
const NPM_INSTALL_TIMEOUT_MS = 600_000;

const PACKAGE_DIR = join(INSPECTOR_CACHE_DIR, 'node_modules/@modelcontextprotocol/inspector');

function installedVersion(): string | undefined {
  const manifest = join(PACKAGE_DIR, 'package.json');
  if (!existsSync(manifest)) return undefined;
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string }).version;
}

/** How to run the Inspector's `mcp-inspector` bin: a Node 22 binary and the bin's script. */
export interface InspectorCommand {
  node: string;
  script: string;
}

/**
 * The Inspector's launcher (what `npx @modelcontextprotocol/inspector` runs)
 * and the Node 22 binary to run it with, installing both first when missing.
 * Throws with npm's output when they cannot be installed: never a silent skip.
 */
export async function provisionInspector(): Promise<InspectorCommand> {
  const { binary: node } = await provisionNode22();
  if (installedVersion() !== INSPECTOR_VERSION) {
    const spec = `@modelcontextprotocol/inspector@${INSPECTOR_VERSION}`;
    // npm's own script run by the Node 22 binary: `node` on PATH decides which Node npm runs on.
    const path = `${dirname(node)}:${process.env.PATH ?? '/usr/bin:/bin'}`;
    try {
      await execFileAsync(
        'npm',
        [
          'install',
          '--prefix',
          INSPECTOR_CACHE_DIR,
          '--no-save',
          '--no-package-lock',
          '--no-audit',
          '--no-fund',
          '--ignore-scripts',
          spec,
        ],
        {
          encoding: 'utf8',
          timeout: NPM_INSTALL_TIMEOUT_MS,
          env: { ...process.env, PATH: path },
          maxBuffer: 16 * 1024 * 1024,
        },
      );
    } catch (error) {
      const failure = error as NodeJS.ErrnoException & { stderr?: string; stdout?: string };
      throw new Error(
        `could not install ${spec} (npm install --prefix ${INSPECTOR_CACHE_DIR}): ${failure.message}\n${failure.stdout ?? ''}${failure.stderr ?? ''}`,
      );
    }
    if (installedVersion() !== INSPECTOR_VERSION) {
      throw new Error(`npm installed ${spec} into ${INSPECTOR_CACHE_DIR}, but it is not there`);
    }
  }
  const bin = (
    JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as {
      bin: Record<string, string>;
    }
  ).bin['mcp-inspector'];
  if (bin === undefined) throw new Error(`${PACKAGE_DIR}/package.json names no mcp-inspector bin`);
  return { node, script: join(PACKAGE_DIR, bin) };
}
