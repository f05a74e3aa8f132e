/**
 * Docker build contexts as in-memory tar archives (tar-stream), so images are
 * built through the engine API alone — no docker CLI, no temp folders.
 */
import { pack } from 'tar-stream';

/** One entry of a build context. */
export interface ContextEntry {
  /** Path inside the context, without a leading slash. */
  name: string;
  /** File content; omitted for a directory. */
  content?: Buffer | string;
  /** Unix permission bits; default 0o644 for files, 0o755 for directories. */
  mode?: number;
  type?: 'file' | 'directory';
  /** Numeric owner, kept when the archive is unpacked by ADD; default root. */
  owner?: { uid: number; gid: number };
}

// A fixed timestamp keeps the archive identical for identical content.
const FIXED_MTIME = new Date(0);

/** Packs `entries` into one tar archive, in order. */
export async function packBuildContext(entries: readonly ContextEntry[]): Promise<Buffer> {
  const archive = pack();
  const chunks: Buffer[] = [];
  archive.on('data', (chunk) => chunks.push(chunk as Buffer));
  const finished = new Promise<void>((resolve, reject) => {
    archive.on('end', () => resolve());
    archive.on('error', reject);
  });
  for (const entry of entries) {
    if (entry.type === 'directory') {
      archive.entry({
        name: entry.name,
        type: 'directory',
        mode: entry.mode ?? 0o755,
        mtime: FIXED_MTIME,
        ...entry.owner,
      });
      continue;
    }
    const content = typeof entry.content === 'string' ? Buffer.from(entry.content) : entry.content;
    if (content === undefined)
      throw new TypeError(`packBuildContext: file ${entry.name} has no content`);
    archive.entry(
      { name: entry.name, mode: entry.mode ?? 0o644, mtime: FIXED_MTIME, ...entry.owner },
      content,
    );
  }
  archive.finalize();
  await finished;
  return Buffer.concat(chunks);
}
