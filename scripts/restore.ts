/**
 * `npm run restore -- FILE [--replace] [--master-key-file KEY]`: writes a
 * backup (`npm run backup`) into the configured store, SQLite or PostgreSQL
 * whichever the backup came from. Refuses a store that holds servers unless
 * `--replace`, a backup of a newer schema, and secrets this master key cannot
 * decrypt — each before writing anything; the restore itself is one
 * transaction. `--master-key-file` installs a generated key (FILE.master.key)
 * as DATA_DIR/master.key when no MASTER_KEY is set, once the restore succeeded. Stop a single `npm start`
 * on the same data directory first; replicas on PostgreSQL reload at once.
 * FILE `-` reads the backup from stdin (`docker compose run -T … - < FILE`).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../control-plane/config.js';
import { isMcphostError } from '../control-plane/errors.js';
import { openStore, parseMasterKey } from '../control-plane/store/index.js';

const args = process.argv.slice(2);
const valueOf = (flag: string) => {
  const at = args.indexOf(flag);
  return at === -1 ? undefined : args[at + 1];
};
const keyFile = valueOf('--master-key-file');
const file = args.find((arg, i) => !arg.startsWith('--') && args[i - 1] !== '--master-key-file');
if (file === undefined) {
  console.error('usage: npm run restore -- FILE|- [--replace] [--master-key-file KEY]');
  process.exit(64); // EX_USAGE
}

function fail(message: string): never {
  console.error(`restore failed: ${message}`);
  process.exit(1);
}

try {
  const config = loadConfig();
  // fd 0 is stdin: `-` reads the backup piped in.
  const backup = JSON.parse(readFileSync(file === '-' ? 0 : file, 'utf8')) as {
    tables?: { secrets?: unknown[] };
  };
  const installed = join(config.dataDir, 'master.key');
  // Keys are compared and used in memory; a key file is written only once the
  // restore succeeded, so a failed restore leaves no key behind.
  const fromFile =
    keyFile === undefined ? undefined : parseMasterKey(readFileSync(keyFile, 'utf8'), keyFile);
  const present = existsSync(installed)
    ? parseMasterKey(readFileSync(installed, 'utf8'), installed)
    : undefined;
  if (fromFile !== undefined && config.masterKey !== undefined) {
    fail('MASTER_KEY is set: leave out --master-key-file');
  }
  if (fromFile !== undefined && present !== undefined && !present.equals(fromFile)) {
    fail(`${installed} holds another key: move it away first (it decrypts the secrets it wrote)`);
  }
  const masterKey =
    config.masterKey !== undefined
      ? parseMasterKey(config.masterKey, 'MASTER_KEY')
      : (fromFile ?? present);
  const hasSecrets = (backup.tables?.secrets?.length ?? 0) > 0;
  if (masterKey === undefined && hasSecrets) {
    fail(
      'the backup holds secrets and no master key is set: pass --master-key-file FILE.master.key, or set MASTER_KEY',
    );
  }
  const store = await openStore({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    // No secret to decrypt and no key yet: the service generates one at its start.
    masterKey: masterKey ?? randomBytes(32),
  });
  try {
    const restored = await store.importBackup(backup, { replace: args.includes('--replace') });
    if (fromFile !== undefined && present === undefined) {
      mkdirSync(config.dataDir, { recursive: true });
      writeFileSync(installed, `${fromFile.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    }
    console.log(
      `Restored ${restored.servers} server(s), ${restored.tools} tool(s), ${restored.secrets} secret(s) from ${file === '-' ? 'stdin' : file}`,
    );
  } finally {
    await store.close();
  }
} catch (error) {
  fail(isMcphostError(error) ? error.message : (error as Error).message);
}
