/**
 * A maintained Node binary for the local runner base. The local base copies a
 * node binary into a scratch image; when the host's own node is on a line past
 * its end of life, the V8 that separates one server's tools from another's
 * would get no fixes, so the base takes the pinned LTS release instead.
 *
 * It comes from the npm registry, the one registry a machine that installs our
 * dependencies reaches: `node-linux-<arch>` is the plain package of files that
 * the `node` package's installer links, holding the official, glibc-linked
 * binary. The tarball is checked against the pinned sha512 before a byte of it
 * is unpacked, the unpacked binary against its pinned sha256, and the binary
 * is kept in a private cache folder so later builds need no network; a cached
 * binary is hashed against the pin before it is trusted, never run to ask.
 * Failing to get it never fails a start: the host's node is used, with a
 * warning that says why.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, rmSync } from 'node:fs';
import { chmod, lstat, mkdir, mkdtemp, rename, rm, stat } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { createGunzip } from 'node:zlib';
import tar from 'tar-stream';
import { McphostError } from '../errors.js';
import { messageOf } from './image-builds.js';
import {
  PINNED_LTS_NODE,
  endOfLife,
  isEndOfLife,
  majorOf,
  platformPackage,
  type PinnedNodeRelease,
} from './node-lines.js';

const run = promisify(execFile);

/** Registry the platform package is fetched from. */
export const NPM_REGISTRY = 'https://registry.npmjs.org';

/** Where fetched binaries are kept, one folder per package and version. */
export const DEFAULT_NODE_CACHE_DIR = join(homedir(), '.cache', 'mcphost', 'node');

/** How long the registry may take for the package's metadata, in ms. */
const METADATA_TIMEOUT_MS = 15_000;
/** How long the registry may take for the tarball (tens of MB), in ms. */
const TARBALL_TIMEOUT_MS = 180_000;

/** Options of {@link fetchNodeRelease}. */
export interface FetchNodeReleaseOptions {
  /** Release to fetch; default {@link PINNED_LTS_NODE}. */
  release?: PinnedNodeRelease;
  /** Folder the binary is kept in; default {@link DEFAULT_NODE_CACHE_DIR}. */
  cacheDir?: string;
  /** Registry base URL; default {@link NPM_REGISTRY}. */
  registry?: string;
  /** HTTP client; default the global `fetch`. Tests give a fake registry. */
  fetch?: typeof fetch;
  /** Platform and architecture to fetch for; default this process's. */
  platform?: NodeJS.Platform;
  arch?: string;
  log?: (line: string) => void;
}

/** A node binary on disk and the version it reports (`v26.12.1`). */
export interface NodeBinary {
  path: string;
  version: string;
}

/**
 * The binary of `release` for this machine, from the cache folder or else
 * fetched from the registry, verified and unpacked there. Throws
 * ERR_IMAGE_BUILD when there is no package for this machine, the registry
 * cannot be reached, or anything fails verification.
 */
export async function fetchNodeRelease(options: FetchNodeReleaseOptions = {}): Promise<NodeBinary> {
  const release = options.release ?? PINNED_LTS_NODE;
  const platform = options.platform ?? process.platform;
  const arch = options.arch ?? process.arch;
  const pkg = platformPackage(platform, arch);
  if (pkg === undefined)
    throw failure(`npm publishes no node binary package for ${platform}-${arch}`);
  const expected = release.integrity[pkg.arch];
  const expectedBinary = release.binarySha256[pkg.arch];
  const what = `${pkg.name}@${release.version}`;
  const cacheDir = resolve(options.cacheDir ?? DEFAULT_NODE_CACHE_DIR);
  const cacheFolder = join(cacheDir, `${pkg.name}-${release.version}`);
  const wanted = `v${release.version}`;
  // A folder another user can write to may hold their binary, or get one after our check:
  // nothing in it is looked at, and the binary is fetched into a private folder instead.
  const refusal = await unsafeCacheReason(cacheDir, cacheFolder);
  if (refusal !== undefined)
    options.log?.(
      `not using the node cache ${cacheDir}: ${refusal}; fetching into a private folder`,
    );
  // The cached file is hashed, never run, before it is trusted: it may be anyone's.
  else if ((await sha256OfFile(join(cacheFolder, 'node'))) === expectedBinary)
    return { path: join(cacheFolder, 'node'), version: wanted };

  const fetchImpl = options.fetch ?? fetch;
  const registry = (options.registry ?? NPM_REGISTRY).replace(/\/+$/, '');
  const metadataUrl = `${registry}/${pkg.name}/${release.version}`;
  const metadata = await download(fetchImpl, metadataUrl, METADATA_TIMEOUT_MS);
  const dist = parseDist(metadata, metadataUrl);
  // The registry's own claim must match the pin before its tarball is even asked for.
  if (dist.integrity !== expected)
    throw failure(`${what}: the registry lists integrity ${dist.integrity}, pinned is ${expected}`);
  options.log?.(`fetching ${dist.tarball}`);
  const tarball = await download(fetchImpl, dist.tarball, TARBALL_TIMEOUT_MS);
  verifyIntegrity(tarball, expected, what);

  const folder =
    refusal === undefined
      ? await privateCacheFolder(cacheDir, cacheFolder)
      : await privateTemporaryFolder(pkg.name);
  const binary = join(folder, 'node');
  // Unpacked into a folder of its own (mkdtemp: a name no one else writes, created here, so
  // no planted link is followed) and renamed: a half-written binary is never found.
  const partialFolder = await mkdtemp(join(folder, '.partial-'));
  const partial = join(partialFolder, 'node');
  try {
    await extractFile(tarball, 'package/bin/node', partial);
    const actual = await sha256OfFile(partial);
    if (actual !== expectedBinary)
      throw failure(
        `${what}: its bin/node hashes to sha256 ${actual}, pinned is ${expectedBinary}; refused`,
      );
    await chmod(partial, 0o755);
    const version = await reportedVersion(partial);
    if (version !== wanted)
      throw failure(
        `${what} unpacked a node that ${version === undefined ? 'does not run here' : `reports ${version}`}`,
      );
    await rename(partial, binary);
  } finally {
    await rm(partialFolder, { recursive: true, force: true });
  }
  return { path: binary, version: wanted };
}

/** Throws ERR_IMAGE_BUILD unless `bytes` hash to `integrity` (`sha512-<base64>`). */
export function verifyIntegrity(bytes: Buffer, integrity: string, what: string): void {
  if (!integrity.startsWith('sha512-'))
    throw failure(`${what}: integrity ${integrity} is not sha512, refused`);
  const actual = `sha512-${createHash('sha512').update(bytes).digest('base64')}`;
  if (actual !== integrity)
    throw failure(`${what}: the tarball hashes to ${actual}, expected ${integrity}; refused`);
}

/** Which node the local base holds, and the sentence that says why. */
export interface LocalNodeChoice extends NodeBinary {
  reason: string;
  /** True when the choice is an end-of-life node because nothing better could be had. */
  warning: boolean;
}

/** Options of {@link chooseLocalNode}. */
export interface ChooseLocalNodeOptions extends FetchNodeReleaseOptions {
  /** The host's node; default this process's own. */
  host?: NodeBinary;
  /** The day to judge end of life on; default now. */
  now?: Date;
}

/**
 * The node for the local base: the host's while its line is maintained, else
 * the pinned LTS release (fetched once, then cached), else — with no registry,
 * no package for this machine, or no `ldd` to find the LTS binary's libraries —
 * the host's after all, flagged as a warning. Never throws for any of those.
 */
export async function chooseLocalNode(
  options: ChooseLocalNodeOptions = {},
): Promise<LocalNodeChoice> {
  const host = options.host ?? { path: process.execPath, version: process.version };
  const now = options.now ?? new Date();
  const release = options.release ?? PINNED_LTS_NODE;
  if (!isEndOfLife(host.version, now)) {
    const end = endOfLife(majorOf(host.version));
    return {
      ...host,
      warning: false,
      reason: `the host's node ${host.version} is maintained${end === undefined ? '' : ` until ${end}`}`,
    };
  }
  const ended = `the host's node ${host.version} reached its end of life on ${endOfLife(majorOf(host.version))}`;
  try {
    // Without ldd (the control plane's own scratch image) a foreign binary's libraries are
    // unknown; better to learn that before downloading tens of megabytes.
    await run('ldd', ['--version']);
  } catch {
    return {
      ...host,
      warning: true,
      reason: `${ended}, and without ldd here the LTS node's libraries cannot be found: the runner keeps it (fix: build the runner image on a host with ldd, or use RUNNER_BASE=registry)`,
    };
  }
  try {
    const lts = await fetchNodeRelease({ ...options, release });
    return { ...lts, warning: false, reason: `${ended}: using the pinned LTS ${lts.version}` };
  } catch (error) {
    return {
      ...host,
      warning: true,
      reason: `${ended}, and the LTS node ${release.version} could not be had (${messageOf(error)}): the runner keeps it, unmaintained`,
    };
  }
}

/** The version `binary --version` prints, or undefined when it is missing or does not run. */
async function reportedVersion(binary: string): Promise<string | undefined> {
  try {
    return (await run(binary, ['--version'], { timeout: 30_000 })).stdout.trim();
  } catch {
    return undefined;
  }
}

/** sha256 (hex) of the file at `path`, streamed; undefined when it cannot be read. */
async function sha256OfFile(path: string): Promise<string | undefined> {
  const hash = createHash('sha256');
  try {
    await pipeline(createReadStream(path), hash);
  } catch {
    return undefined;
  }
  return hash.digest('hex');
}

/**
 * Why the cache folders may hold a file someone else put or swaps there, or
 * undefined when only this user (and root) can write to them or to any folder
 * above them. Folders not made yet are fine: {@link privateCacheFolder} makes
 * them private. A folder above may be writable by all when sticky (`/tmp`).
 */
async function unsafeCacheReason(
  cacheDir: string,
  cacheFolder: string,
): Promise<string | undefined> {
  const uid = process.getuid?.();
  if (uid === undefined) return 'this platform has no owners to check';
  for (const folder of [cacheFolder, cacheDir]) {
    const info = await lstat(folder).catch(() => undefined);
    if (info === undefined) continue;
    if (!info.isDirectory()) return `${folder} is not a folder (a link is not followed)`;
    if (info.uid !== uid) return `${folder} belongs to uid ${info.uid}, not ${uid}`;
    if ((info.mode & 0o022) !== 0)
      return `${folder} is writable by others (mode ${(info.mode & 0o7777).toString(8)})`;
  }
  for (let folder = dirname(cacheDir); ; folder = dirname(folder)) {
    const info = await stat(folder).catch(() => undefined);
    if (info !== undefined) {
      if (info.uid !== uid && info.uid !== 0) return `${folder} belongs to uid ${info.uid}`;
      if ((info.mode & 0o022) !== 0 && (info.mode & 0o1000) === 0)
        return `${folder} is writable by others (mode ${(info.mode & 0o7777).toString(8)})`;
    }
    if (dirname(folder) === folder) return undefined;
  }
}

/** Makes the cache folders (0700) and checks them again: another user may have been first. */
async function privateCacheFolder(cacheDir: string, cacheFolder: string): Promise<string> {
  await mkdir(cacheFolder, { recursive: true, mode: 0o700 });
  const refusal = await unsafeCacheReason(cacheDir, cacheFolder);
  if (refusal !== undefined) throw failure(`cannot keep node in ${cacheDir}: ${refusal}`);
  return cacheFolder;
}

/** Temporary folders holding a binary for this process only; removed when it exits. */
const temporaryFolders = new Set<string>();

/**
 * A fresh folder only this user can enter (mkdtemp makes it 0700), for when
 * the cache is refused. Its binary must outlive this call (the base image is
 * built from it later), so it is removed when the process exits.
 */
async function privateTemporaryFolder(name: string): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), `mcphost-${name}-`));
  if (temporaryFolders.size === 0)
    process.once('exit', () => {
      for (const each of temporaryFolders) rmSync(each, { recursive: true, force: true });
    });
  temporaryFolders.add(folder);
  return folder;
}

async function download(fetchImpl: typeof fetch, url: string, timeoutMs: number): Promise<Buffer> {
  let response: Response;
  try {
    response = await fetchImpl(url, { signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    throw failure(`cannot reach ${url}: ${messageOf(error)}`, error);
  }
  if (!response.ok) throw failure(`${url} answered ${response.status}`);
  try {
    return Buffer.from(await response.arrayBuffer());
  } catch (error) {
    throw failure(`reading ${url} failed: ${messageOf(error)}`, error);
  }
}

/** `dist.tarball` and `dist.integrity` of a version document of the registry. */
function parseDist(body: Buffer, url: string): { tarball: string; integrity: string } {
  let dist: unknown;
  try {
    dist = (JSON.parse(body.toString('utf8')) as { dist?: unknown }).dist;
  } catch (error) {
    throw failure(`${url} did not answer JSON`, error);
  }
  const { tarball, integrity } = (dist ?? {}) as { tarball?: unknown; integrity?: unknown };
  if (typeof tarball !== 'string' || typeof integrity !== 'string')
    throw failure(`${url} lists no dist.tarball and dist.integrity`);
  return { tarball, integrity };
}

/** Writes the one file named `entryName` of the gzipped tar `tarball` to `destination`. */
async function extractFile(tarball: Buffer, entryName: string, destination: string): Promise<void> {
  const extract = tar.extract();
  let found = false;
  extract.on('entry', (header, stream, next) => {
    if (header.name !== entryName || header.type !== 'file') {
      stream.on('end', next);
      stream.resume();
      return;
    }
    found = true;
    pipeline(stream, createWriteStream(destination, { flags: 'wx', mode: 0o700 })).then(
      () => next(),
      (error: unknown) => next(error as Error),
    );
  });
  try {
    await pipeline(Readable.from([tarball]), createGunzip(), extract);
  } catch (error) {
    throw failure(`cannot unpack the tarball: ${messageOf(error)}`, error);
  }
  if (!found) throw failure(`the tarball holds no ${entryName}`);
}

function failure(message: string, cause?: unknown): McphostError {
  return new McphostError('ERR_IMAGE_BUILD', message, cause === undefined ? {} : { cause });
}
