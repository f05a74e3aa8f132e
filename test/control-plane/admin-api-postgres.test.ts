/** The admin API on PostgreSQL (DATABASE_URL), in a database made for this file. */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { postgresUrl } from '../store/store-targets.js';
import { describeAdminApi } from './admin-api-contract.js';

async function onServer(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: postgresUrl('postgres') });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

describeAdminApi('PostgreSQL', async () => {
  const database = `mcphost_admin_test_${randomBytes(6).toString('hex')}`;
  await onServer(`CREATE DATABASE ${database}`);
  return {
    env: { DATABASE_URL: postgresUrl(database) },
    teardown: () => onServer(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`),
  };
});
