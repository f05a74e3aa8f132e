/** The admin API on the embedded store. */
import { describeAdminApi } from './admin-api-contract.js';

describeAdminApi('embedded SQLite', async () => ({ env: {}, teardown: async () => undefined }));
