/**
 * The offline base image: FROM scratch holding a node binary and the shared
 * libraries it links against, for machines where no container registry is
 * reachable. The binary is the host's own unless the caller names another
 * (the runner's base takes the pinned LTS node when the host's is end of
 * life, `lts-node.ts`); the control plane's image keeps the host's, whose
 * native modules were built for it. The build context is packed in memory.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import type Dockerode from 'dockerode';
import { McphostError } from '../errors.js';
import { packBuildContext, type ContextEntry } from './build-context.js';
import { buildImage, imageExists, messageOf } from './image-builds.js';
import { RUNNER_USER } from './runner-user.js';

const run = promisify(execFile);

/** Options of {@link ensureLocalNodeBase}. */
export interface LocalNodeBaseOptions {
  docker: Dockerode;
  /** Node binary to copy (glibc-linked, its libraries found by `ldd`); default `process.execPath`. */
  nodePath?: string;
  /** Receives progress lines; default: dropped. */
  log?: (line: string) => void;
}

/** Tag of the local base for a node version such as `v20.20.2`: `mcphost-node-base:20.20.2`. */
export function localNodeBaseTag(nodeVersion: string): string {
  return `mcphost-node-base:${nodeVersion.replace(/^v/, '')}`;
}

/** Builds `mcphost-node-base:<version>` unless it exists; returns its tag. */
export async function ensureLocalNodeBase(options: LocalNodeBaseOptions): Promise<string> {
  const nodePath = options.nodePath ?? process.execPath;
  const log = options.log ?? (() => {});
  const version = await nodeVersionOf(nodePath);
  const tag = localNodeBaseTag(version);
  if (await imageExists(options.docker, tag)) return tag;

  log(`building ${tag} from ${nodePath} (offline, FROM scratch)`);
  const libraries = await librariesOf(nodePath);
  const [uid, gid] = RUNNER_USER.split(':');
  const entries: ContextEntry[] = [
    { name: 'Dockerfile', content: LOCAL_BASE_DOCKERFILE },
    { name: `rootfs${BASE_NODE_PATH}`, content: await readFile(nodePath), mode: 0o755 },
    { name: `rootfs${BASE_LIBRARY_LIST}`, content: libraries.map((path) => `${path}\n`).join('') },
    ...(await Promise.all(
      libraries.map(async (path) => ({
        name: `rootfs${path}`,
        content: await readFile(path),
        mode: 0o755,
      })),
    )),
    {
      name: 'rootfs/etc/passwd',
      content: `root:x:0:0:root:/root:/sbin/nologin\nmcphost:x:${uid}:${gid}::/tmp:/sbin/nologin\n`,
    },
    { name: 'rootfs/etc/group', content: `root:x:0:\nmcphost:x:${gid}:\n` },
    { name: 'rootfs/tmp', type: 'directory', mode: 0o1777 },
  ];
  await buildImage(options.docker, await packBuildContext(entries), {
    tag,
    log,
    labels: { 'mcphost.base': 'local', 'mcphost.node': version },
  });
  return tag;
}

// PATH is set because a scratch image has none and the runner's exec-form
// ENTRYPOINT names plain `node`.
const LOCAL_BASE_DOCKERFILE = `FROM scratch
COPY rootfs/ /
ENV PATH=/usr/local/bin:/usr/bin:/bin
WORKDIR /tmp
CMD ["node"]
`;

/** Where the base holds node (the runner's exec-form ENTRYPOINT finds it on PATH). */
const BASE_NODE_PATH = '/usr/local/bin/node';

/**
 * The libraries the base was built with, one path a line. A control plane
 * whose own image is this base (`npm run control-plane:image`) has no `ldd`;
 * with this list it rebuilds the base from its own files, so an image moved
 * to a host without the base (`docker save`/`load`) still builds its runner
 * image there, offline.
 */
const BASE_LIBRARY_LIST = '/usr/local/lib/mcphost/node-libraries';

/** The libraries node needs: the base's own list when we run on the base, else `ldd`'s. */
async function librariesOf(nodePath: string): Promise<string[]> {
  if (nodePath === BASE_NODE_PATH) {
    const listed = await readFile(BASE_LIBRARY_LIST, 'utf8').catch(() => undefined);
    if (listed !== undefined) return listed.split('\n').filter((line) => line.startsWith('/'));
  }
  return listSharedLibraries(nodePath);
}

/** Version string (`v20.20.2`) of the node binary at `nodePath`. */
async function nodeVersionOf(nodePath: string): Promise<string> {
  if (nodePath === process.execPath) return process.version;
  try {
    const { stdout } = await run(nodePath, ['--version']);
    return stdout.trim();
  } catch (error) {
    throw new McphostError(
      'ERR_IMAGE_BUILD',
      `cannot run ${nodePath} --version: ${messageOf(error)}`,
      {
        cause: error,
      },
    );
  }
}

/**
 * Absolute paths of the shared libraries (and the dynamic loader) `binary`
 * needs, as `ldd` lists them; the kernel's vDSO has no file and is skipped.
 */
export async function listSharedLibraries(binary: string): Promise<string[]> {
  let output: string;
  try {
    output = (await run('ldd', [binary])).stdout;
  } catch (error) {
    const stdout = (error as { stdout?: string }).stdout ?? '';
    // A static binary makes ldd exit non-zero with "not a dynamic executable".
    if (/not a dynamic executable|statically linked/.test(stdout + messageOf(error))) return [];
    throw new McphostError(
      'ERR_IMAGE_BUILD',
      `cannot list the libraries of ${binary} with ldd: ${messageOf(error)}`,
      {
        cause: error,
      },
    );
  }
  return parseLddOutput(output);
}

/** The library paths in `ldd` output ("name => /path (0x…)" or "/path (0x…)"). */
export function parseLddOutput(output: string): string[] {
  const paths = new Set<string>();
  for (const line of output.split('\n')) {
    const match = /(?:=>\s*)?(\/\S+)\s+\(0x[0-9a-f]+\)/.exec(line);
    if (match?.[1] !== undefined) paths.add(match[1]);
    else if (/=>\s*not found/.test(line)) {
      throw new McphostError(
        'ERR_IMAGE_BUILD',
        `ldd cannot find a library node needs: ${line.trim()}`,
      );
    }
  }
  return [...paths];
}
