/**
 * The public face of admin/: what other folders may import (eslint.config.js holds the rule).
 */
export { createAdminApi } from './admin-api.js';
export type { AdminContext, AdminSettings, SignInServices } from './admin-context.js';
export { AuditTrail } from './audit-trail.js';
export { permits, type Permission, type Principal, type RouteRule } from './permissions.js';
export type { ServerView } from './server-view.js';
export type { WithEffectiveLimits } from './limit-ceilings.js';
