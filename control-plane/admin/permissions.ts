/**
 * Who may call which admin route (docs/accounts-and-keys.md, "Roles"). Every
 * route declares one permission and, when it changes anything, the audit
 * action it is recorded under; the dispatcher checks the permission before
 * the handler runs, so no handler can forget to. Server-scoped routes name
 * the server in `:sub`, which is what an operator's list is checked against.
 */
import type { RouteContext, Router } from '../http/index.js';
import { BOOTSTRAP_PRINCIPAL, type Principal } from '../identity/index.js';
import type { AuditActor } from '../store/index.js';

export { BOOTSTRAP_PRINCIPAL, type Principal };

/**
 * - `public`: no credential (sign-in, its methods).
 * - `self`: any signed-in principal, about itself (session, personal tokens).
 * - `read`: every role; an operator only on its servers (lists are filtered by the handler).
 * - `operate`: tools, secrets, prompts, resources, pools, test runs: owner, admin, an operator on its servers.
 * - `administer`: servers themselves and their API keys: owner, admin.
 * - `own`: accounts and the admin token: owner.
 */
export type Permission = 'public' | 'self' | 'read' | 'operate' | 'administer' | 'own';

/** What the route table holds for each route. */
export interface RouteRule {
  permission: Permission;
  /**
   * The audit action of a route that changes something (e.g. `tool.save`);
   * every method but GET must name one. Optional snapshot of the state
   * before the change, for the entry's `summary.before`.
   */
  audit?: {
    action: string;
    before?: (params: Record<string, string>) => Promise<unknown>;
    /** What of the answer goes into `summary.after` (default: the answer, secrets stripped). */
    after?: (answer: unknown) => unknown;
    /** The server concerned when the path names none (a new server names itself in its answer). */
    server?: (answer: unknown) => string | undefined;
    /** What inside it, when the path names nothing (a new key or account: its id). */
    target?: (answer: unknown) => string | undefined;
  };
}

/** What an admin route handler receives. */
export interface AdminRouteContext extends RouteContext {
  /** The caller; undefined only on `public` routes. */
  principal: Principal | undefined;
}

/** The admin side's router: every route with its rule. */
export type AdminRouter = Router<RouteRule, AdminRouteContext>;

/** True when `principal` may use a route of `permission` on `subdomain` (the route's `:sub`, if any). */
export function permits(
  principal: Principal | undefined,
  permission: Permission,
  subdomain: string | undefined,
): boolean {
  if (permission === 'public') return true;
  if (principal === undefined) return false;
  const { role } = principal;
  const ownServer = subdomain === undefined || principal.servers.includes(subdomain);
  switch (permission) {
    case 'self':
      return true;
    case 'read':
      return role !== 'operator' || ownServer;
    case 'operate':
      return role === 'owner' || role === 'admin' || (role === 'operator' && ownServer);
    case 'administer':
      return role === 'owner' || role === 'admin';
    case 'own':
      return role === 'owner';
  }
}

/** The servers a principal may see: undefined = all of them. */
export function visibleServers(principal: Principal | undefined): readonly string[] | undefined {
  return principal?.role === 'operator' ? principal.servers : undefined;
}

/** The principal of a route handler's context; ERR_INTERNAL-worthy misuse if a public route asks. */
export function principalOf(context: { principal: Principal | undefined }): Principal {
  if (context.principal === undefined) {
    throw new TypeError('principalOf: the route is public; it has no principal');
  }
  return context.principal;
}

/** How the audit log names a principal. */
export function auditActorOf(principal: Principal): AuditActor {
  return principal.kind === 'bootstrap'
    ? { kind: 'bootstrap', id: null, label: 'admin token' }
    : { kind: 'account', id: principal.id, label: principal.email ?? principal.name };
}

/** The `id` of a route's answer: what a create route made (an audit entry's target). */
export function idOfAnswer(answer: unknown): string | undefined {
  const id = (answer as { id?: unknown } | null | undefined)?.id;
  return typeof id === 'string' ? id : undefined;
}

/** The invocation log's caller of a test run by `principal`. */
export function adminCallerOf(principal: Principal): { kind: 'admin'; actor: string } {
  return { kind: 'admin', actor: auditActorOf(principal).label };
}

/**
 * Checks a route table at start-up (TypeError for a bug): every write names
 * its audit action, and every `operate` route names its server in `:sub` —
 * an operator is allowed by its servers, so a route without one would let
 * every operator through.
 */
export function checkRouteTable(router: AdminRouter): void {
  for (const route of router.routes()) {
    if (route.method !== 'GET' && route.rule.audit === undefined) {
      throw new TypeError(`admin route ${route.method} ${route.path} names no audit action`);
    }
    if (route.rule.permission === 'operate' && !route.path.includes('/:sub')) {
      throw new TypeError(`admin route ${route.method} ${route.path} operates on no server`);
    }
  }
}
