/**
 * /api/audit: the audit log, newest first, filtered and paged. Viewers,
 * admins and owners read every entry; an operator reads its servers'
 * entries only (naming another server is refused rather than answered empty,
 * so the operator knows why).
 */
import { McphostError } from '../errors.js';
import { parseInput, sendJson } from '../http/index.js';
import { auditQuerySchema } from '../store/index.js';
import type { AdminContext } from './admin-context.js';
import { visibleServers, type AdminRouter } from './permissions.js';

export function addAuditRoutes(router: AdminRouter, context: AdminContext): void {
  router.add('GET', '/api/audit', { permission: 'read' }, async ({ res, url, principal }) => {
    const query = parseInput(auditQuerySchema, Object.fromEntries(url.searchParams), 'query');
    const visible = visibleServers(principal);
    if (visible !== undefined && query.server !== undefined && !visible.includes(query.server)) {
      throw new McphostError('ERR_FORBIDDEN', `this account may not read server "${query.server}"`);
    }
    sendJson(res, 200, await context.store.listAudit(query, visible));
  });
}
