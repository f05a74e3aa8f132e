/** The admin API on PostgreSQL (DATABASE_URL), in a database made for this file. */
import { randomBytes } from 'node:crypto';
import { onPostgresServer, postgresUrl } from '../../store/store-targets.js';
import { describeAdminApi } from './admin-api-contract.js';

describeAdminApi('PostgreSQL', async () => {
  const database = `mcphost_admin_test_${randomBytes(6).toString('hex')}`;
  await onPostgresServer(`CREATE DATABASE ${database}`);
  return {
    env: { DATABASE_URL: postgresUrl(database) },
    teardown: () => onPostgresServer(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`),
  };
});
