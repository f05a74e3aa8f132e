/**
 * Per-request facts the listeners set and the handlers fill in: the request
 * id (taken from a well-formed `X-Request-Id`, else generated; echoed in the
 * response and carried into the invocation log and log lines) and the route
 * label metrics count under (a pattern, never a raw path).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const routes = new WeakMap<IncomingMessage, string>();

/** Assigns the request's id (normalised into the `x-request-id` header, where the MCP SDK passes headers on). */
export function assignRequestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  req.headers['x-request-id'] = id;
  return id;
}

/** The request's id, as assigned by the listener. */
export function requestIdOf(req: IncomingMessage): string {
  const id = req.headers['x-request-id'];
  return typeof id === 'string' ? id : randomUUID();
}

/** The id in a header map (the SDK's `requestInfo.headers`), or a new one. */
export function requestIdFromHeaders(
  headers: Record<string, string | string[] | undefined> | undefined,
): string {
  const id = headers?.['x-request-id'];
  return typeof id === 'string' ? id : randomUUID();
}

/** Names the route a request matched, for metrics. */
export function setRoute(req: IncomingMessage, route: string): void {
  routes.set(req, route);
}

/** The route label of a request; 'unmatched' when no handler named one. */
export function routeOf(req: IncomingMessage): string {
  return routes.get(req) ?? 'unmatched';
}
