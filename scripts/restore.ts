/**
 * `npm run restore -- FILE [--replace] [--master-key-file KEY]`: writes a
 * backup (`npm run backup`) into the configured store, SQLite or PostgreSQL
 * whichever the backup came from. Refuses a store that holds servers unless
 * `--replace`, a backup of a newer schema, and secrets this master key cannot
 * decrypt — each before writing anything; the restore itself is one
 * transaction. `--master-key-file` installs a generated key (FILE.master.key)
 * as DATA_DIR/master.key when no MASTER_KEY is set. Stop a single `npm start`
 * on the same data directory first; replicas on PostgreSQL reload at once.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../control-plane/config.js';
import { isMcphostError } from '../control-plane/errors.js';
import { loadMasterKey, openStore } from '../control-plane/store/index.js';

const args = process.argv.slice(2);
const valueOf = (flag: string) => {
  const at = args.indexOf(flag);
  return at === -1 ? undefined : args[at + 1];
};
const keyFile = valueOf('--master-key-file');
const file = args.find((arg, i) => !arg.startsWith('--') && args[i - 1] !== '--master-key-file');
if (file === undefined) {
  console.error('usage: npm run restore -- FILE [--replace] [--master-key-file KEY]');
  process.exit(64); // EX_USAGE
}

function fail(message: string): never {
  console.error(`restore failed: ${message}`);
  process.exit(1);
}

try {
  const config = loadConfig();
  const backup = JSON.parse(readFileSync(file, 'utf8')) as {
    tables?: { secrets?: unknown[] };
  };
  const installed = join(config.dataDir, 'master.key');
  if (keyFile !== undefined) {
    if (config.masterKey !== undefined) fail('MASTER_KEY is set: leave out --master-key-file');
    if (
      existsSync(installed) &&
      readFileSync(installed, 'utf8') !== readFileSync(keyFile, 'utf8')
    ) {
      fail(`${installed} holds another key: move it away first (it decrypts the secrets it wrote)`);
    }
    mkdirSync(config.dataDir, { recursive: true });
    copyFileSync(keyFile, installed);
    chmodSync(installed, 0o600);
  }
  const hasSecrets = (backup.tables?.secrets?.length ?? 0) > 0;
  if (hasSecrets && config.masterKey === undefined && !existsSync(installed)) {
    fail(
      'the backup holds secrets and no master key is set: pass --master-key-file FILE.master.key, or set MASTER_KEY',
    );
  }
  const masterKey = loadMasterKey({
    configured: config.masterKey,
    dataDir: config.dataDir,
    warn: (message) => console.warn(message),
  });
  const store = await openStore({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    masterKey,
  });
  try {
    const restored = await store.importBackup(backup, { replace: args.includes('--replace') });
    console.log(
      `Restored ${restored.servers} server(s), ${restored.tools} tool(s), ${restored.secrets} secret(s) from ${file}`,
    );
  } finally {
    await store.close();
  }
} catch (error) {
  fail(isMcphostError(error) ? error.message : (error as Error).message);
}
