/**
 * `npm run admin-token -- --rotate`: a new generated admin token when the
 * current one is lost (with it, POST /api/admin-token/rotate does the same).
 * Writes the new token's hash to the store the configuration names and
 * prints the token once. Replicas on PostgreSQL switch to it at once (the
 * change feed); a single process on the embedded store reads it at its next
 * start. Refused while ADMIN_TOKEN is set: that token is the configuration's.
 */
import { generateAdminToken } from '../control-plane/identity/index.js';
import { loadConfig } from '../control-plane/config.js';
import { openToolStore } from './tool-store.js';

if (!process.argv.includes('--rotate')) {
  console.error('usage: npm run admin-token -- --rotate');
  process.exit(64); // EX_USAGE
}
const config = loadConfig();
if (config.adminToken !== undefined) {
  console.error('ADMIN_TOKEN is set in the configuration: change it there and restart.');
  process.exit(78); // EX_CONFIG
}
const store = await openToolStore(config);
try {
  const token = await generateAdminToken(store);
  console.log(
    [
      'New admin token (shown only this once; the previous one no longer works):',
      `  ${token}`,
      config.databaseUrl === undefined
        ? 'A running `npm start` on this data directory uses it after its next start.'
        : 'Running replicas use it at once.',
    ].join('\n'),
  );
} finally {
  await store.close();
}
