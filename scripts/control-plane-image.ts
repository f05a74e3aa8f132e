/**
 * `npm run control-plane:image [-- --tag mcphost:latest]`: builds the control
 * plane's image with no registry at all, on the offline local base
 * (`mcphost-node-base:<node version>`, the host's own node FROM scratch). It
 * packs the host's already built `dist/` (run `npm run build` first), the
 * production dependencies from `node_modules` (as `npm ls --omit=dev` lists
 * them; native modules built here run there, since the base carries this
 * machine's libraries), package.json and Dockerfile.runner into an in-memory
 * build context, and builds the same runtime layout as the repository's
 * `Dockerfile`: /app, a /data volume, a non-root user. Progress goes to
 * stderr; the image tag is the only line on stdout.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import Dockerode from 'dockerode';
import { z } from 'zod';
import { McphostError } from '../control-plane/errors.js';
import {
  buildImage,
  ensureLocalNodeBase,
  findRepoRoot,
  messageOf,
  packBuildContext,
  type ContextEntry,
  RUNNER_USER,
} from '../control-plane/image-build/index.js';
import { exitWithFailure } from './file-times.js';
import { describeProblems } from '../control-plane/validation-problems.js';

const run = promisify(execFile);

/** Default tag of the control plane image (the name compose.yaml runs). */
export const CONTROL_PLANE_IMAGE = 'mcphost:latest';

/**
 * Numeric user:group the control plane runs as, in both Dockerfiles. Not the
 * runner's 10001: the two never share a uid on the host kernel.
 */
export const CONTROL_PLANE_USER = '10002:10002';

/** Folders of dist/ the control plane needs at run time (no tests, no benchmarks). */
const DIST_FOLDERS = ['control-plane', 'src', 'scripts', 'runner', 'dashboard'] as const;

/** Files of dist/ without which the image cannot serve: the entry point and the harness bundle. */
const REQUIRED_DIST_FILES = [
  'control-plane/main.js',
  'runner/harness.mjs',
  'runner/lodash.min.js',
  'runner/context-scripts.json',
];

/** Options of {@link buildControlPlaneImage}. */
export interface ControlPlaneImageOptions {
  /** Engine to build on; default `new Dockerode()` (DOCKER_HOST or /var/run/docker.sock). */
  docker?: Dockerode;
  /** Tag of the built image; default `mcphost:latest`. */
  tag?: string;
  /** Repository root holding package.json, Dockerfile.runner and node_modules; default: found above this file. */
  repoRoot?: string;
  /** Built output to ship; default `<repoRoot>/dist`. */
  distDir?: string;
  /** Receives progress lines; default: dropped. */
  log?: (line: string) => void;
}

const OptionsSchema = z.object({
  tag: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._/-]*(:[A-Za-z0-9_.-]+)?$/, 'tag must be repository[:tag]')
    .optional(),
  repoRoot: z.string().min(1).optional(),
  distDir: z.string().min(1).optional(),
});

/** Builds the control plane image offline from the host's build output; returns its tag. */
export async function buildControlPlaneImage(
  options: ControlPlaneImageOptions = {},
): Promise<string> {
  const parsed = OptionsSchema.safeParse(options);
  if (!parsed.success)
    throw new TypeError(`buildControlPlaneImage: ${describeProblems(parsed.error)}`);
  const docker = options.docker ?? new Dockerode();
  const log = options.log ?? (() => {});
  const tag = options.tag ?? CONTROL_PLANE_IMAGE;
  const repoRoot = resolve(
    options.repoRoot ?? findRepoRoot(dirname(fileURLToPath(import.meta.url))),
  );
  const distDir = resolve(options.distDir ?? join(repoRoot, 'dist'));

  for (const file of REQUIRED_DIST_FILES) {
    if (!existsSync(join(distDir, file)))
      throw new McphostError(
        'ERR_IMAGE_BUILD',
        `cannot build ${tag}: ${join(distDir, file)} is missing (run npm run build first)`,
      );
  }
  if (!existsSync(join(distDir, 'dashboard', 'index.html')))
    log('dist/dashboard is missing: the image will serve the admin API without its dashboard page');

  const base = await ensureLocalNodeBase({ docker, log });
  const packages = await listProductionPackages(repoRoot);
  log(`packing dist/ and ${packages.length} production packages`);
  const entries: ContextEntry[] = [
    { name: 'Dockerfile', content: offlineDockerfile(base) },
    ...passwdEntries(),
    { name: 'data', type: 'directory' },
    { name: 'app/package.json', content: await readFile(join(repoRoot, 'package.json')) },
    { name: 'app/Dockerfile.runner', content: await readFile(join(repoRoot, 'Dockerfile.runner')) },
  ];
  for (const folder of DIST_FOLDERS) {
    const dir = join(distDir, folder);
    if (existsSync(dir)) entries.push(...(await folderEntries(dir, `app/dist/${folder}`, false)));
  }
  for (const dir of packages) {
    entries.push(
      ...(await folderEntries(dir, `app/${relative(repoRoot, dir).split(sep).join('/')}`, true)),
    );
  }
  const context = await packBuildContext(entries);
  log(`building ${tag} FROM ${base} (context ${(context.length / 1048576).toFixed(1)} MiB)`);
  await buildImage(docker, context, {
    tag,
    labels: { 'mcphost.image': 'control-plane', 'mcphost.base': base },
    log,
  });
  if (options.tag === undefined) {
    // mcphost:latest is also mcphost:<version>: the image to go back to after an upgrade.
    const { version } = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as {
      version: string;
    };
    await docker.getImage(tag).tag({ repo: 'mcphost', tag: version });
    log(`tagged mcphost:${version}`);
  }
  return tag;
}

/**
 * Absolute folders of the production dependencies (direct and transitive),
 * as `npm ls --omit=dev --parseable --all` lists them under `repoRoot`.
 */
export async function listProductionPackages(repoRoot: string): Promise<string[]> {
  let stdout: string;
  try {
    stdout = (
      await run('npm', ['ls', '--omit=dev', '--parseable', '--all'], {
        cwd: repoRoot,
        maxBuffer: 16 * 1048576,
      })
    ).stdout;
  } catch (error) {
    // npm ls exits non-zero for a tree it finds odd (extraneous, invalid) yet still lists it.
    stdout = (error as { stdout?: string }).stdout ?? '';
    if (stdout.trim() === '')
      throw new McphostError(
        'ERR_IMAGE_BUILD',
        `npm ls failed in ${repoRoot}: ${messageOf(error)}`,
        { cause: error },
      );
  }
  const modules = join(resolve(repoRoot), 'node_modules') + sep;
  return [...new Set(stdout.split('\n').map((line) => line.trim()))].filter((path) =>
    path.startsWith(modules),
  );
}

/** The generated Dockerfile of the offline image: the same runtime layout as the repository's Dockerfile. */
export function offlineDockerfile(baseImage: string): string {
  const [uid, gid] = CONTROL_PLANE_USER.split(':');
  // The base is FROM scratch with no shell, so nothing can RUN: ownership comes
  // from COPY --chown, the user from the passwd/group files packed beside. One
  // stage, because the classic builder keeps an assembling stage as a dangling image.
  return `# Generated by scripts/control-plane-image.ts (offline build on the local node base).
FROM ${baseImage}
COPY etc/passwd etc/group /etc/
COPY app/ /app/
COPY --chown=${uid}:${gid} data/ /data/
ENV NODE_ENV=production DATA_DIR=/data PORT=8080 LISTEN_HOST=0.0.0.0 HOME=/tmp
WORKDIR /app
USER ${uid}:${gid}
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 CMD ${HEALTHCHECK_COMMAND}
ENTRYPOINT ["node", "dist/control-plane/main.js"]
`;
}

/**
 * Exec-form health check that needs nothing but node (no curl in either base):
 * GET /healthz on the admin listener, exit 0 on a 2xx.
 */
export const HEALTHCHECK_COMMAND = JSON.stringify([
  'node',
  '-e',
  "fetch('http://127.0.0.1:'+(process.env.ADMIN_PORT||process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))",
]);

/** passwd/group naming root, the runner user and the control plane user (the local base knows only the first two). */
function passwdEntries(): ContextEntry[] {
  const [runnerUid, runnerGid] = RUNNER_USER.split(':');
  const [uid, gid] = CONTROL_PLANE_USER.split(':');
  return [
    {
      name: 'etc/passwd',
      content:
        'root:x:0:0:root:/root:/sbin/nologin\n' +
        `mcphost:x:${runnerUid}:${runnerGid}::/tmp:/sbin/nologin\n` +
        `mcphost-plane:x:${uid}:${gid}::/tmp:/sbin/nologin\n`,
    },
    { name: 'etc/group', content: `root:x:0:\nmcphost:x:${runnerGid}:\nmcphost-plane:x:${gid}:\n` },
  ];
}

/**
 * Context entries for every file below `dir`, placed under `prefix`. Build
 * leftovers (`*.staging-*` folders) are skipped; with `skipNestedModules`,
 * nested node_modules are too (npm ls lists the production ones separately).
 * Symbolic links are skipped: production packages hold none, and only
 * node_modules/.bin (never shipped) does.
 */
async function folderEntries(
  dir: string,
  prefix: string,
  skipNestedModules: boolean,
): Promise<ContextEntry[]> {
  const entries: ContextEntry[] = [{ name: prefix, type: 'directory' }];
  for (const item of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, item.name);
    const name = `${prefix}/${item.name}`;
    if (item.isDirectory()) {
      if (item.name.includes('.staging-')) continue;
      if (skipNestedModules && item.name === 'node_modules') continue;
      entries.push(...(await folderEntries(path, name, skipNestedModules)));
    } else if (item.isFile()) {
      const [content, { mode }] = await Promise.all([readFile(path), stat(path)]);
      // Keep the executable bit (native helpers, CLIs); nothing is writable but by root.
      entries.push({ name, content, mode: mode & 0o111 ? 0o755 : 0o644 });
    }
  }
  return entries;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { tag: { type: 'string' } } });
  try {
    const tag = await buildControlPlaneImage({
      tag: values.tag,
      log: (line) => console.error(line),
    });
    console.log(tag);
  } catch (error) {
    exitWithFailure(error);
  }
}

if (
  process.argv[1] !== undefined &&
  import.meta.url === pathToFileURL(resolve(process.argv[1])).href
)
  await main();
