/**
 * A small method + path router for the admin side. Patterns use `:name`
 * segments; matched segments are URI-decoded. Every route carries a rule
 * (`Rule`: the admin side's permission and audit action), so the route table
 * is also the table that authorization checks and tests enumerate: a route
 * cannot be added without one. Kept tiny on purpose: the admin API is a fixed
 * list of paths and needs no framework.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface RouteContext {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  params: Record<string, string>;
}

export type RouteHandler<Context extends RouteContext = RouteContext> = (
  context: Context,
) => Promise<void> | void;

/** A route as the table lists it. */
export interface RouteEntry<Rule> {
  readonly method: string;
  /** The pattern, e.g. `/api/servers/:sub`. */
  readonly path: string;
  readonly rule: Rule;
}

interface Route<Rule, Context extends RouteContext> extends RouteEntry<Rule> {
  pattern: RegExp;
  names: string[];
  handler: RouteHandler<Context>;
}

export type RouteMatch<Rule, Context extends RouteContext = RouteContext> =
  | {
      kind: 'found';
      handler: RouteHandler<Context>;
      params: Record<string, string>;
      pattern: string;
      rule: Rule;
    }
  | { kind: 'method-not-allowed'; allowed: string[] }
  | { kind: 'not-found' };

export class Router<Rule, Context extends RouteContext = RouteContext> {
  readonly #routes: Route<Rule, Context>[] = [];

  /** Registers `handler` for `method` and a pattern such as `/api/servers/:sub`, under `rule`. */
  add(method: string, path: string, rule: Rule, handler: RouteHandler<Context>): this {
    const names: string[] = [];
    const source = path
      .split('/')
      .map((segment) => {
        if (!segment.startsWith(':')) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        names.push(segment.slice(1));
        return '([^/]+)';
      })
      .join('/');
    this.#routes.push({ method, path, rule, pattern: new RegExp(`^${source}$`), names, handler });
    return this;
  }

  /** Every route in the order added. */
  routes(): RouteEntry<Rule>[] {
    return this.#routes.map(({ method, path, rule }) => ({ method, path, rule }));
  }

  match(method: string, pathname: string): RouteMatch<Rule, Context> {
    const allowed: string[] = [];
    for (const route of this.#routes) {
      const found = route.pattern.exec(pathname);
      if (!found) continue;
      if (route.method !== method) {
        allowed.push(route.method);
        continue;
      }
      const params: Record<string, string> = {};
      try {
        route.names.forEach((name, index) => {
          params[name] = decodeURIComponent(found[index + 1] ?? '');
        });
      } catch {
        return { kind: 'not-found' }; // a malformed escape names nothing that exists
      }
      return {
        kind: 'found',
        handler: route.handler,
        params,
        pattern: route.path,
        rule: route.rule,
      };
    }
    return allowed.length > 0 ? { kind: 'method-not-allowed', allowed } : { kind: 'not-found' };
  }
}
