/**
 * The public face of http/: what other folders may import (eslint.config.js holds the rule).
 */
export type { Authentication } from './authentication.js';
export {
  holdAnswer,
  releaseHeldAnswer,
  sendError,
  sendJson,
  sendJsonRpcError,
  sendNoContent,
  writeAnswer,
} from './error-response.js';
export { startListeners } from './http-listeners.js';
export type { Listeners } from './http-listeners.js';
export type { HostedEndpoint, HostedTarget, RoutingOptions } from './request-routing.js';
export { ServerGate, type ServerGateSettings } from './server-gate.js';
export { serverResourceAt, type ServerResource } from './server-resource.js';
export { corsHeaders, decideOrigin, preflightHeaders } from './origin-policy.js';
export { parseJsonBody, readBody } from './read-body.js';
export { requestIdFromHeaders, requestIdOf, setRoute } from './request-context.js';
export { clientAddressFromHeaders, clientNetworkOf, TrustedProxies } from './client-address.js';
export { Router } from './router.js';
export type { RouteContext, RouteEntry, RouteHandler, RouteMatch } from './router.js';
export { parseInput } from './validate.js';
export { HeldRefusals } from './held-refusals.js';
