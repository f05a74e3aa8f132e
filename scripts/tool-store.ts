/**
 * The store as the scripts beside the service open it (backup, token
 * rotation): the one the configuration names, never migrated or created (a
 * missing store or one of another version is refused), and with no master
 * key, as they read no secret value (ciphertexts are copied as stored).
 */
import type { Config } from '../control-plane/config.js';
import { openStore, type Store } from '../control-plane/store/index.js';

export function openToolStore(config: Config): Promise<Store> {
  return openStore({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    masterKey: Buffer.alloc(32),
    migrate: false,
  });
}
