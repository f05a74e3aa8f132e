/**
 * The admin side: the REST API, the dashboard, the unauthenticated health
 * checks and OpenAPI document, and the Prometheus metrics. Every API request
 * goes through one sequence: match the route, find the principal (admin
 * token, personal token or session cookie; wrong bearers are throttled per
 * network, bearer-guard.ts), check CSRF for cookie writes, check the route's
 * permission (a refusal is audited, once a minute per kind with its count),
 * snapshot what a write changes, run the handler, audit the write with its
 * before/after.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isMcphostError, McphostError } from '../errors.js';
import { holdAnswer, releaseHeldAnswer, sendError, sendJson, writeAnswer } from '../http/index.js';
import { setRoute } from '../http/index.js';
import { Router, type RouteEntry } from '../http/index.js';
import type { AdminContext } from './admin-context.js';
import {
  bearerOf,
  csrfTokenMatches,
  fromOwnOrigin,
  type AdminAuthenticator,
  type AdminToken,
} from '../identity/index.js';
import { addAccountRoutes } from './account-routes.js';
import { addApiKeyRoutes } from './api-key-routes.js';
import { addAuditRoutes } from './audit-routes.js';
import { addSessionRoutes } from './session-routes.js';
import { bearerGuard } from './bearer-guard.js';
import {
  checkRouteTable,
  permits,
  visibleServers,
  type AdminRouteContext,
  type AdminRouter,
  type Principal,
  type RouteRule,
} from './permissions.js';
import { openApiDocument } from './openapi.js';
import { addServerRoutes } from './server-routes.js';
import { addEntryRoutes } from './entry-routes.js';
import { addRunRoutes } from './run-routes.js';
import { addPoolRoutes } from './pool-routes.js';
import { addInvocationRoutes } from './invocation-routes.js';
import { addSecretRoutes } from './secret-routes.js';
import { InFlight } from '../in-flight.js';

export interface AdminApiOptions {
  context: AdminContext;
  token: AdminToken;
  /** Finds the principal of a request. */
  authenticator: AdminAuthenticator;
  /** A second token that may read /metrics only; undefined = admin token only. */
  metricsToken?: AdminToken;
  version: string;
  /** Readiness: resolves when the store and the sandbox answer. */
  readiness(): Promise<{ ready: boolean; checks: Record<string, string> }>;
  /** The Prometheus exposition. */
  metrics(): Promise<{ contentType: string; body: string }>;
  /** Counts a refused admin request. */
  onAuthFailure(reason: string): void;
  /** Sends a throttled network's refusal (`answer`) on `res`, held back a while (HeldRefusals). */
  holdRefusal(res: ServerResponse, answer: () => void): void;
  /** The dashboard's pages and assets; resolves true when it answered the request. */
  dashboard?: (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<boolean>;
}

type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>;

/** The admin API's routes, each with its permission and audit action (the table tests enumerate). */
export function adminRoutes(context: AdminContext, token: AdminToken): AdminRouter {
  const api: AdminRouter = new Router<RouteRule, AdminRouteContext>();
  addServerRoutes(api, context);
  addEntryRoutes(api, context);
  addRunRoutes(api, context);
  addSecretRoutes(api, context);
  addInvocationRoutes(api, context);
  addPoolRoutes(api, context);
  addApiKeyRoutes(api, context);
  addAccountRoutes(api, context);
  addSessionRoutes(api, context);
  addAuditRoutes(api, context);
  // The new token is answered once and never stored: only its hash is.
  const rotate = { permission: 'own', audit: { action: 'admin-token.rotate' } } as const;
  api.add('POST', '/api/admin-token/rotate', rotate, async ({ res }) => {
    const rotated = await token.rotate(context.store);
    sendJson(res, 200, {
      token: rotated,
      note: 'the previous admin token no longer works; this one is shown only now',
    });
  });
  checkRouteTable(api);
  return api;
}

/**
 * How long an audited answer waits for its entry: a store that does not
 * answer must not hold the caller's connection (nor shutdown) for longer.
 */
const AUDIT_WRITE_WAIT_MS = 5_000;

/** `work`'s value, or undefined once `ms` have passed without it. */
async function withinTime<T>(ms: number, work: Promise<T>): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The admin side: its request handler, and its route table (each route with its rule). */
export interface AdminApi {
  handle: Handler;
  routes(): RouteEntry<RouteRule>[];
  /**
   * Resolves when no audited answer waits for its entry, or after
   * `timeoutMs`: shutdown waits for it before cutting connections.
   */
  whenAnswered(timeoutMs: number): Promise<void>;
}

/** Builds the admin request handler. */
export function createAdminApi(options: AdminApiOptions): AdminApi {
  const { context, authenticator } = options;
  const api = adminRoutes(context, options.token);
  /** Audited answers held until their entry is written. */
  const heldAnswers = new InFlight();
  const permissions = new Map(
    api
      .routes()
      .map((route) => [
        `${route.method} ${route.path.replace(/:(\w+)/g, '{$1}')}`,
        route.rule.permission,
      ]),
  );

  // Wrong bearers spend the network's allowance of them; past it, bearers wait (429).
  const guard = bearerGuard({
    throttle: context.signIn.bearers,
    audit: context.audit,
    onAuthFailure: options.onAuthFailure,
  });
  /** Runs a credential check, counting its ERR_UNAUTHORIZED in the metrics. */
  const counted = async <T>(check: () => Promise<T>): Promise<T> => {
    try {
      return await check();
    } catch (error) {
      if (isMcphostError(error, 'ERR_UNAUTHORIZED')) {
        options.onAuthFailure('invalid_admin_token');
      }
      throw error;
    }
  };
  const authenticate = (req: IncomingMessage): Promise<Principal | undefined> =>
    counted(() => guard(req, () => authenticator.authenticate(req)));
  const requirePrincipal = (principal: Principal | undefined): Principal => {
    if (principal !== undefined) return principal;
    options.onAuthFailure('missing_token');
    throw new McphostError(
      'ERR_UNAUTHORIZED',
      'admin token required: sign in, or send the admin token or a personal token as Authorization: Bearer <token>',
    );
  };

  // Metrics name every server: the metrics token, or a principal who reads every server.
  const checkMetricsAccess = async (req: IncomingMessage) => {
    const { metricsToken } = options;
    const caller = await counted(() =>
      guard(req, async () => {
        if (metricsToken !== undefined) {
          const bearer = bearerOf(req);
          if (bearer !== undefined && metricsToken.matches(bearer)) return 'metrics-token' as const;
        }
        return authenticator.authenticate(req);
      }),
    );
    if (caller === 'metrics-token') return;
    const principal = requirePrincipal(caller);
    if (!permits(principal, 'read', undefined) || visibleServers(principal) !== undefined) {
      const error = new McphostError(
        'ERR_FORBIDDEN',
        'the metrics name every server: this account may not read them',
      );
      await context.audit.recordRefusal(req, principal, {
        action: 'metrics.read',
        outcome: 'denied',
        reason: error.code,
        note: error.message,
      });
      throw error;
    }
  };

  const fixed: Record<string, Handler> = {
    '/healthz': async (_req, res) => sendJson(res, 200, { status: 'ok', version: options.version }),
    '/readyz': async (_req, res) => {
      const readiness = await options.readiness();
      sendJson(res, readiness.ready ? 200 : 503, readiness);
    },
    '/api/openapi.json': async (_req, res) =>
      sendJson(res, 200, openApiDocument(options.version, permissions)),
    '/metrics': async (req, res) => {
      await checkMetricsAccess(req);
      const { contentType, body } = await options.metrics();
      res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' }).end(body);
    },
  };

  const handle: Handler = async (req, res, url) => {
    try {
      const fixedHandler = req.method === 'GET' ? fixed[url.pathname] : undefined;
      if (fixedHandler) {
        setRoute(req, url.pathname);
        await fixedHandler(req, res, url);
        return;
      }
      if (!url.pathname.startsWith('/api/') && options.dashboard) {
        setRoute(req, 'dashboard');
        if (await options.dashboard(req, res, url)) return;
      }
      const match = api.match(req.method ?? 'GET', url.pathname);
      if (match.kind === 'not-found') {
        setRoute(req, 'unmatched');
        throw new McphostError('ERR_NOT_FOUND', `no such endpoint: ${req.method} ${url.pathname}`);
      }
      if (match.kind === 'method-not-allowed') {
        requirePrincipal(await authenticate(req));
        sendError(
          res,
          new McphostError(
            'ERR_METHOD_NOT_ALLOWED',
            `${req.method} is not allowed on ${url.pathname}`,
          ),
          { allow: match.allowed.join(', ') },
        );
        return;
      }
      setRoute(req, `${req.method} ${match.pattern}`);
      const { rule, params } = match;
      // A refusal of this request, recorded once a minute per kind (with its count).
      const recordRefusal = (who: Principal, error: McphostError) =>
        context.audit.recordRefusal(req, who, {
          action: rule.audit?.action ?? `${req.method} ${match.pattern}`,
          server: params.sub ?? null,
          target: targetOf(params),
          outcome: 'denied',
          reason: error.code,
          note: error.message,
        });
      let principal: Principal | undefined;
      if (rule.permission === 'public') {
        // A page of another site may post a text/plain form to a public route (no
        // preflight): signing a browser in to the attacker's account is refused here.
        if (req.method !== 'GET' && req.method !== 'HEAD' && !fromOwnOrigin(req)) {
          throw foreignOrigin(req);
        }
        // A public route (sign-in) needs no caller and looks for none.
      } else {
        principal = requirePrincipal(await authenticate(req));
        try {
          checkCsrf(req, principal);
        } catch (error) {
          await recordRefusal(principal, error as McphostError);
          throw error;
        }
        if (!permits(principal, rule.permission, params.sub)) {
          const error = forbidden(principal, rule, params.sub);
          await recordRefusal(principal, error);
          throw error;
        }
      }
      // Public routes (sign-ins) write their own entries: they know who tried.
      const audited = rule.audit !== undefined && principal !== undefined;
      const before = audited && rule.audit?.before ? await rule.audit.before(params) : undefined;
      // An audited write's answer waits for its entry: an answer sent always has its entry.
      // Shutdown waits for answers held so (whenAnswered) before it closes connections.
      const serve = async (): Promise<void> => {
        if (audited) holdAnswer(res);
        try {
          await match.handler({ req, res, url, params, principal });
        } catch (error) {
          if (audited) releaseHeldAnswer(res);
          // A handler's own refusal (an operator naming another server in a filter) is a refusal too.
          if (principal !== undefined && isMcphostError(error, 'ERR_FORBIDDEN')) {
            await recordRefusal(principal, error);
          }
          throw error;
        }
        if (audited) {
          const held = releaseHeldAnswer(res);
          // A handler that wrote its answer itself (none does) is audited after it.
          const status = held?.status ?? res.statusCode;
          if (status < 400) {
            const answer = held?.body;
            const written = await withinTime(
              AUDIT_WRITE_WAIT_MS,
              context.audit.record(req, principal!, {
                action: rule.audit!.action,
                server: params.sub ?? rule.audit!.server?.(answer) ?? null,
                target: targetOf(params) ?? rule.audit!.target?.(answer) ?? null,
                outcome: 'ok',
                before,
                after:
                  answer === undefined
                    ? undefined
                    : rule.audit!.after
                      ? rule.audit!.after(answer)
                      : answer,
              }),
            );
            // An answer sent always has its entry: without one, the caller hears so instead.
            if (written !== true) {
              throw new McphostError(
                'ERR_NOT_AUDITED',
                `the change was made, but its audit entry could not be written ${written === undefined ? `within ${AUDIT_WRITE_WAIT_MS} ms` : '(the store refused it)'}: the log has the entry and the cause`,
              );
            }
          }
          if (held !== undefined) writeAnswer(res, held);
        }
      };
      await (audited ? heldAnswers.run(serve) : serve());
    } catch (error) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const answer = () => sendError(res, error, retryAfterOf(error));
      // A network past its allowance of wrong bearers waits for its answer: a guesser
      // waiting for each is slowed to its connections a second.
      if (isMcphostError(error, 'ERR_SIGN_IN_THROTTLED')) {
        req.resume();
        options.holdRefusal(res, answer);
      } else answer();
    }
  };
  return {
    handle,
    routes: () => api.routes(),
    whenAnswered: (timeoutMs) => heldAnswers.whenIdle(timeoutMs),
  };
}

/** A `Retry-After` header for a refusal that says when to come back (a throttled bearer). */
function retryAfterOf(error: unknown): Record<string, string> {
  const details = isMcphostError(error) ? (error.details as { retryAfterSeconds?: unknown }) : {};
  const seconds = details?.retryAfterSeconds;
  return typeof seconds === 'number' ? { 'retry-after': String(seconds) } : {};
}

/** What inside the server a route names (a tool, secret, entry, key or account). */
function targetOf(params: Record<string, string>): string | null {
  return params.name ?? params.tool ?? params.tokenId ?? params.id ?? null;
}

/**
 * A write authenticated by the session cookie must carry the session's CSRF
 * token (a page of another site cannot read it) and, when the browser says
 * where it comes from, come from this origin. Bearer requests need neither:
 * no browser attaches a bearer header on its own.
 */
function checkCsrf(req: IncomingMessage, principal: Principal): void {
  if (principal.session === undefined || req.method === 'GET' || req.method === 'HEAD') return;
  if (!fromOwnOrigin(req)) throw foreignOrigin(req);
  if (!csrfTokenMatches(req.headers['x-csrf-token'], principal.session.csrfToken)) {
    throw new McphostError(
      'ERR_CSRF',
      'the X-CSRF-Token header is missing or wrong: reload the dashboard and try again',
    );
  }
}

/** ERR_CSRF for an Origin that is not this admin side's, saying what was compared. */
function foreignOrigin(req: IncomingMessage): McphostError {
  return new McphostError(
    'ERR_CSRF',
    `this request comes from another site (Origin ${JSON.stringify(req.headers.origin)}, not this admin side's host ${JSON.stringify(req.headers.host)}): refused; behind a reverse proxy, pass the Host header through`,
  );
}

function forbidden(
  principal: Principal,
  rule: RouteRule,
  subdomain: string | undefined,
): McphostError {
  const scoped =
    principal.role === 'operator' &&
    subdomain !== undefined &&
    (rule.permission === 'read' || rule.permission === 'operate');
  return new McphostError(
    'ERR_FORBIDDEN',
    scoped
      ? `this account may not work on server "${subdomain}"`
      : `the ${principal.role} role may not do this (it needs ${ROLE_NEEDED[rule.permission]})`,
  );
}

const ROLE_NEEDED: Record<RouteRule['permission'], string> = {
  public: 'nothing',
  self: 'a signed-in account',
  read: 'any role',
  operate: 'operator, admin or owner',
  administer: 'admin or owner',
  own: 'owner',
};
