/**
 * The public face of admin/: what other folders may import (eslint.config.js holds the rule).
 */
export { createAdminApi } from './admin-api.js';
export type { AdminContext } from './admin-context.js';
export { AdminToken } from './admin-token.js';
export type { ServerView } from './server-view.js';
