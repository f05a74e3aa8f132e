/**
 * Rolling back without restoring: an mcphost older than the schema of its
 * database refuses to open it, naming the version that migrated it and what
 * to do, instead of Kysely's "corrupted migrations".
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openStore } from '../../control-plane/store/index.js';
import { sqliteTarget, TEST_MASTER_KEY } from './store-targets.js';

const target = sqliteTarget();

beforeAll(async () => {
  await target.setup();
  const store = await target.open();
  await store.setMeta('mcphost_version', 'mcphost 9.9.9');
  await store.close();
  // What a newer version's migration leaves behind.
  await target.raw(
    "INSERT INTO mcphost_migrations (name, timestamp) VALUES ('9999-from-the-future', '2030-01-01T00:00:00.000Z')",
  );
});

afterAll(async () => {
  await target.teardown();
});

it('refuses a database migrated by a newer version, saying which and what to do', async () => {
  await expect(
    openStore({ dataDir: target.dataDir, masterKey: TEST_MASTER_KEY }),
  ).rejects.toMatchObject({
    code: 'ERR_STORE',
    message: expect.stringMatching(
      /belongs to a newer mcphost \(mcphost 9\.9\.9\): its schema has 9999-from-the-future, which this version \(\d{4}-[a-z-]+\) does not know\. Run that version or newer, or restore the backup/,
    ),
  });
});
