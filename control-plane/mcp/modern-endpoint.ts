/**
 * The modern era of `/mcp` (MCP 2026-07-28): a request the SDK's classifier
 * routed here (its `_meta` claims a protocol version, or its
 * `MCP-Protocol-Version` header names a modern one) is served statelessly —
 * no session is read or written, so any replica answers any request.
 *
 * In order, as the specification's validation ladder goes: the revision must
 * be one this server speaks (-32022 naming the supported ones), the standard
 * headers must be present and agree with the body, and so must the
 * `Mcp-Param-*` headers a tool's `x-mcp-header` marks ask for (-32020); a notification is
 * accepted and dropped (the era's cancellation is a closed response, and a
 * client's `notifications/cancelled` must not reach an instance every client
 * shares); `subscriptions/listen` opens a listen stream (listen-streams.ts);
 * everything else goes to the server's modern SDK instance
 * (modern-servers.ts), whose protocol layer checks the `_meta` envelope,
 * refuses methods this era does not have (404, -32601) and runs the handlers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InboundModernRoute, JSONRPCRequest, RequestId } from '@modelcontextprotocol/server';
import { McphostError } from '../errors.js';
import { MODERN_PROTOCOL_VERSION } from './hosted-mcp-server.js';
import type { ListenStreams } from './listen-streams.js';
import type { ModernServers } from './modern-servers.js';
import type { AnswerSink } from './modern-transport.js';
import type { ParkRelay } from './park-relay.js';
import { authInfoOf, type RequestScope } from './request-scope.js';
import type { McpHeaderDeclaration } from '../store/index.js';
import { paramHeaderProblem, standardHeaderProblem } from './standard-headers.js';
import type { AdmittedScope } from './stream-credential.js';

/** The methods whose result may be `input_required`: their retries carry a `requestState`. */
const RESUMABLE: ReadonlySet<string> = new Set(['tools/call', 'prompts/get', 'resources/read']);

/** A JSON-RPC error the endpoint answers itself, with the HTTP status the ladder gives it. */
export interface LadderAnswer {
  status: number;
  id: RequestId | null;
  error: { code: number; message: string; data?: unknown };
}

/** -32022 (HTTP 400) for a revision this endpoint does not speak, listing those it does. */
export function unsupportedRevision(
  revision: string | undefined,
  id: RequestId | null,
  supported: readonly string[],
): LadderAnswer {
  const requested = revision ?? 'unknown';
  return {
    status: 400,
    id,
    error: {
      code: -32022,
      message: `Unsupported protocol version: ${requested}`,
      data: { supported: [...supported], requested },
    },
  };
}

export interface ModernEndpointOptions {
  servers: ModernServers;
  listen: ListenStreams;
  /** The `x-mcp-header` marks of a tool (none for an unknown tool), for its `Mcp-Param-*` headers. */
  headerDeclarations(subdomain: string, tool: string): readonly McpHeaderDeclaration[];
  /**
   * Which replica holds the call a `requestState` resumes; undefined when it
   * is not one of ours or is not bound to this server, caller and request.
   */
  holderOf(
    requestState: string,
    subdomain: string,
    request: JSONRPCRequest,
    scope: RequestScope,
  ): string | undefined;
  /** This replica's id. */
  replica: string;
  /** Retries of calls parked on other replicas (PostgreSQL); absent with one replica. */
  relay?: ParkRelay;
  /** Which resource serves a URI now, for a listen stream's subscriptions (undefined: none yet). */
  resourceNamed(subdomain: string, uri: string): string | undefined;
}

/** One modern request, with what the hosted side established about it. */
export interface ModernRequest {
  req: IncomingMessage;
  res: ServerResponse;
  subdomain: string;
  scope: AdmittedScope;
  /**
   * For a request routed without the classifier's envelope rung
   * (era-routing.ts): the classifier's refusal of it, if it refuses it, to
   * answer in place of the protocol layer's refusal before any handler.
   */
  refusalOf?: () => LadderAnswer | undefined;
}

export class ModernEndpoint {
  readonly #options: ModernEndpointOptions;

  constructor(options: ModernEndpointOptions) {
    this.#options = options;
  }

  /**
   * Serves a modern request; answers the ladder's refusals as values for the
   * caller to send, and throws McphostErrors (a listen quota) likewise.
   */
  async serve(
    route: InboundModernRoute,
    request: ModernRequest,
  ): Promise<LadderAnswer | undefined> {
    const { res, subdomain, scope } = request;
    const message = route.message;
    const id = route.messageKind === 'request' ? (message as JSONRPCRequest).id : null;
    const revision = route.classification.revision;
    if (revision !== MODERN_PROTOCOL_VERSION) {
      // As `server/discover` lists them: the legacy versions are reached through `initialize`.
      return unsupportedRevision(revision, id, [MODERN_PROTOCOL_VERSION]);
    }
    if (route.messageKind !== 'request') {
      request.req.resume();
      res.writeHead(202).end();
      return undefined;
    }
    const call = message as JSONRPCRequest;
    const params = call.params as { name?: unknown; arguments?: unknown } | undefined;
    const problem =
      standardHeaderProblem(request.req.headers, call.method, call.params) ??
      (call.method === 'tools/call' && typeof params?.name === 'string'
        ? paramHeaderProblem(
            request.req.headers,
            this.#options.headerDeclarations(subdomain, params.name),
            params.arguments,
          )
        : undefined);
    if (problem !== undefined) {
      // The classifier's refusal comes first in the ladder, as it would have without the shortcut.
      const refused = request.refusalOf?.();
      if (refused !== undefined) return refused;
      return {
        status: 400,
        id,
        error: {
          code: -32020,
          message: `Bad Request: the request headers and body disagree: ${problem}`,
        },
      };
    }
    const instance = await this.#options.servers.get(subdomain);
    if (instance === undefined) {
      const refused = request.refusalOf?.();
      if (refused !== undefined) return refused;
      throw new McphostError('ERR_NOT_FOUND', 'no server at this address');
    }
    if (call.method === 'subscriptions/listen') {
      this.#options.listen.open({
        subdomain,
        quotaKey: scope.quotaKey,
        request: call,
        res,
        capabilities: instance.capabilities,
        serverInfo: instance.info,
        resourceNamed: (uri) => this.#options.resourceNamed(subdomain, uri),
        credential: scope.credential,
      });
      return undefined;
    }
    // A retry of a call parked on another replica is served there, if it is that call's retry:
    // a state of another server, caller or request is refused here (by the handler, as on the
    // holder), never carried through the store.
    const state = (call.params as { requestState?: unknown } | undefined)?.requestState;
    const relay = this.#options.relay;
    if (relay !== undefined && typeof state === 'string' && RESUMABLE.has(call.method)) {
      const holder = this.#options.holderOf(state, subdomain, call, scope);
      if (holder !== undefined && holder !== this.#options.replica) {
        relay.forward(holder, subdomain, call, scope, res);
        return undefined;
      }
    }
    instance.transport.serve(call, res, authInfoOf(scope), request.refusalOf);
    return undefined;
  }

  /** Serves a retry another replica relayed here (park-relay.ts); returns its cancellation. */
  async serveRelayed(
    subdomain: string,
    request: JSONRPCRequest,
    scope: RequestScope,
    open: (onGone: () => void) => AnswerSink,
  ): Promise<() => void> {
    const instance = await this.#options.servers.get(subdomain);
    if (instance === undefined)
      throw new McphostError('ERR_NOT_FOUND', 'no server at this address');
    return instance.transport.serveTo(request, open, authInfoOf(scope));
  }
}
