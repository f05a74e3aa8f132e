/**
 * The public face of admin/: what other folders may import (eslint.config.js holds the rule).
 */
export { createAdminApi } from './admin-api.js';
export type { AdminContext } from './admin-context.js';
export { ADMIN_TOKEN_META_KEY, AdminToken, generateAdminToken } from './admin-token.js';
export type { ServerView } from './server-view.js';
