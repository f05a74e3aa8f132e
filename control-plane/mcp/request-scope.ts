/**
 * What the hosted side established about one HTTP request to `/mcp` — who
 * calls, whom quotas count it against, its request id and the client's
 * address — carried into the SDK's handlers as the request's `authInfo`
 * (the one per-request channel the SDK passes from a transport to a
 * handler, in both eras). The token itself never travels here: `token` is
 * always empty, and nothing of a credential reaches tool code or a log.
 */
import type { AuthInfo, ServerContext } from '@modelcontextprotocol/server';
import type { Caller } from '../identity/index.js';
import { callerKeyOf } from './caller-identity.js';

export interface RequestScope {
  caller: Caller;
  /** Whom quotas count the request against (caller-identity.ts). */
  quotaKey: string;
  /** The HTTP request's id (X-Request-Id or made up), for the invocation log. */
  requestId: string;
  /** The client's address (behind TRUSTED_PROXIES), for the invocation log. */
  clientAddress?: string;
}

const SCOPE = Symbol('mcphost request scope');

/** The `authInfo` a transport hands the SDK with each message of the request. */
export function authInfoOf(scope: RequestScope): AuthInfo {
  return {
    token: '',
    clientId: callerKeyOf(scope.caller),
    scopes: [],
    extra: { [SCOPE]: scope },
  };
}

/** The scope of the request a handler serves (set by the transport that delivered it). */
export function scopeOf(ctx: Pick<ServerContext, 'http'>): RequestScope {
  const scope = (ctx.http?.authInfo?.extra as Record<symbol, unknown> | undefined)?.[SCOPE];
  if (scope === undefined) {
    // Every transport of mcphost sets it: a message without it did not come from one.
    throw new TypeError('mcphost: a request reached a handler without its request scope');
  }
  return scope as RequestScope;
}
