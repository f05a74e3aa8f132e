/**
 * What the build scripts need to skip work that is already done: the files
 * under a folder and their modification times, and whether a script runs as
 * the main module.
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Every file below `dir`, recursively. */
export async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
}

/** A file's modification time in ms; 0 when it does not exist. */
export async function mtimeOrZero(file: string): Promise<number> {
  try {
    return (await stat(file)).mtimeMs;
  } catch {
    return 0;
  }
}

/** The newest modification time among `files` (0 for none). */
export async function newestMtime(files: readonly string[]): Promise<number> {
  return Math.max(0, ...(await Promise.all(files.map(mtimeOrZero))));
}

/** True when the module at `moduleUrl` is the script node was started with. */
export function isMainModule(moduleUrl: string): boolean {
  return (
    process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(moduleUrl)
  );
}

/** Prints a failure of a command-line script as `CODE: message` and exits with 1. */
export function exitWithFailure(error: unknown): never {
  console.error(
    error instanceof Error
      ? `${(error as { code?: string }).code ?? 'Error'}: ${error.message}`
      : error,
  );
  process.exit(1);
}
