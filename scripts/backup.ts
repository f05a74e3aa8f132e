/**
 * `npm run backup -- FILE`: every server, tool (with its versions), secret
 * (still encrypted), pool size, prompt and resource of the configured store
 * (embedded SQLite or DATABASE_URL) as one JSON file, mode 0600. When the
 * master key is one mcphost generated (no MASTER_KEY), it is copied beside
 * it as FILE.master.key: the backup's secrets need it, and it should be kept
 * apart from the backup (one place holding both gives every secret away).
 * Safe while the service runs (one read transaction). FILE `-` writes the
 * backup to stdout (messages go to stderr), for `docker compose exec -T … >`;
 * a generated key is then copied separately (the message says from where).
 */
import { copyFileSync, existsSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../control-plane/config.js';
import type { StoreBackup } from '../control-plane/store/index.js';
import { openToolStore } from './tool-store.js';

const file = process.argv.slice(2).find((arg) => !arg.startsWith('--'));
if (file === undefined) {
  console.error('usage: npm run backup -- FILE|- [--allow-empty]');
  process.exit(64); // EX_USAGE
}
const config = loadConfig();
const store = await openToolStore(config);
try {
  const backup = await store.exportBackup();
  if (backup.tables.servers.length === 0 && !process.argv.includes('--allow-empty')) {
    // Most likely the wrong store (another DATA_DIR, DATABASE_URL unset): say so.
    console.error(
      'the store holds no server: check DATA_DIR / DATABASE_URL (pass --allow-empty to back up an empty store)',
    );
    process.exitCode = 1;
  } else {
    writeBackup(file, backup);
  }
} finally {
  await store.close();
}

function writeBackup(file: string, backup: StoreBackup): void {
  if (file === '-') {
    writeToStdout(backup);
    return;
  }
  // A new file, renamed into place: mode 0600 whatever was there, and a crash
  // mid-write never truncates the last good backup.
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, `${JSON.stringify(backup)}\n`, { mode: 0o600, flag: 'wx' });
  renameSync(partial, file);
  console.log(`Backed up ${contentsOf(backup)} to ${file}`);
  const generatedKey = join(config.dataDir, 'master.key');
  if (config.masterKey === undefined && existsSync(generatedKey)) {
    copyFileSync(generatedKey, `${file}.master.key`);
    console.log(
      `The generated master key is in ${file}.master.key: keep it apart from the backup (restore with --master-key-file).`,
    );
  } else if (backup.tables.secrets.length > 0) {
    console.log('Secrets are encrypted with MASTER_KEY: a restore needs the same MASTER_KEY.');
  }
}

/** The backup on stdout; everything said goes to stderr, so the output is the file. */
function writeToStdout(backup: StoreBackup): void {
  process.stdout.write(`${JSON.stringify(backup)}\n`);
  console.error(`Backed up ${contentsOf(backup)} to stdout`);
  const generatedKey = join(config.dataDir, 'master.key');
  if (config.masterKey === undefined && existsSync(generatedKey)) {
    console.error(
      `The secrets need the generated master key ${generatedKey}: copy it too, and keep it apart from the backup (restore with MASTER_KEY or --master-key-file).`,
    );
  } else if (backup.tables.secrets.length > 0) {
    console.error('Secrets are encrypted with MASTER_KEY: a restore needs the same MASTER_KEY.');
  }
}

/** "2 server(s), 5 tool(s), 1 secret(s)": what a backup holds. */
function contentsOf(backup: StoreBackup): string {
  const { servers, server_entries: entries, secrets } = backup.tables;
  const tools = entries.filter((row) => row.kind === 'tool').length;
  return `${servers.length} server(s), ${tools} tool(s), ${secrets.length} secret(s)`;
}
