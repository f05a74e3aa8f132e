/**
 * A small method + path router for the admin side. Patterns use `:name`
 * segments; matched segments are URI-decoded. Kept tiny on purpose: the admin
 * API is a fixed list of paths and needs no framework.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface RouteContext {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  params: Record<string, string>;
}

export type RouteHandler = (context: RouteContext) => Promise<void> | void;

interface Route {
  method: string;
  path: string;
  pattern: RegExp;
  names: string[];
  handler: RouteHandler;
}

export type RouteMatch =
  | { kind: 'found'; handler: RouteHandler; params: Record<string, string>; pattern: string }
  | { kind: 'method-not-allowed'; allowed: string[] }
  | { kind: 'not-found' };

export class Router {
  readonly #routes: Route[] = [];

  /** Registers `handler` for `method` and a pattern such as `/api/servers/:sub`. */
  add(method: string, path: string, handler: RouteHandler): this {
    const names: string[] = [];
    const source = path
      .split('/')
      .map((segment) => {
        if (!segment.startsWith(':')) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        names.push(segment.slice(1));
        return '([^/]+)';
      })
      .join('/');
    this.#routes.push({ method, path, pattern: new RegExp(`^${source}$`), names, handler });
    return this;
  }

  match(method: string, pathname: string): RouteMatch {
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
      return { kind: 'found', handler: route.handler, params, pattern: route.path };
    }
    return allowed.length > 0 ? { kind: 'method-not-allowed', allowed } : { kind: 'not-found' };
  }
}
