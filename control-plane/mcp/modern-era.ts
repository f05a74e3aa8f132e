/**
 * The modern era's parts of one replica, built together: the per-server SDK
 * instances (modern-servers.ts) whose calls run through the input rounds
 * (input-rounds.ts: parked calls, sealed request states, the park relay to
 * other replicas), the listen streams, and the endpoint that routes a modern
 * request among them. The composition root hands in what they are made of.
 */
import type { Implementation, ServerCapabilities } from '@modelcontextprotocol/server';
import { mcpHeaderDeclarations, type McpHeaderDeclaration } from '../store/index.js';
import type { ServerRecord } from '../store/index.js';
import { createModernMcpServer, type HostedServerContext } from './hosted-mcp-server.js';
import { ModernCallRunner } from './input-rounds.js';
import { ListenStreams, type ChangeListener } from './listen-streams.js';
import { ModernEndpoint } from './modern-endpoint.js';
import { ModernServers } from './modern-servers.js';
import { ParkedCalls } from './parked-calls.js';
import { ParkRelay, type RelayChannel } from './park-relay.js';
import { bindingOfRequest, matchesBinding, RequestStateSealer } from './request-state.js';
import { callerKeyOf } from './caller-identity.js';

/** How long a relayed retry waits for the holding replica to take it, in ms (relay latency is milliseconds). */
const RELAY_ACCEPT_TIMEOUT_MS = 5_000;

export interface ModernEraOptions {
  /** The handlers' context of a server (catalog, invoker, entries). */
  contextOf(subdomain: string): HostedServerContext;
  /** A server's settings now (the configuration cache). */
  record(subdomain: string): ServerRecord | undefined;
  /** Which resource serves a URI now (a listen stream's subscriptions). */
  resourceNamed(subdomain: string, uri: string): string | undefined;
  /** The key request states are sealed under (derived from the master key). */
  masterKey: Uint8Array;
  /** This replica's id (LiveReplicas). */
  replica: string;
  /** The store's relay between replicas (PostgreSQL); absent with one replica. */
  channel?: RelayChannel;
  /** Failures of background work (the relay), logged by the caller. */
  onError(error: unknown, what: string): void;
  /** Largest answer of a call (TOOL_MAX_RESULT_BYTES), in bytes: what the relay must carry. */
  maxResultBytes: number;
  /** The longest any invocation may run (TOOL_MAX_TIMEOUT_MS), in ms: how long a state lives. */
  longestCallMs: number;
  /** Service default of a server's `cacheTtlMs` (MCP_CACHE_TTL_MS). */
  cacheTtlMs: number;
  keepAliveMs: number;
  maxParkedPerCaller: number;
  maxParkedPerServer: number;
  maxListenPerCaller: number;
  maxListenPerServer: number;
}

/** A server's change audience: what hears its configuration changes (config-sync.ts). */
export interface ChangeAudience {
  forSubdomain(subdomain: string): Iterable<ChangeListener>;
  closeSubdomain(subdomain: string): void | Promise<void>;
}

export interface ModernEra {
  endpoint: ModernEndpoint;
  /** Retries of calls parked on other replicas; undefined with one replica. */
  relay: ParkRelay | undefined;
  parked: ParkedCalls;
  listen: ListenStreams;
  /** What configuration changes reach in this era: the listen streams and the instances. */
  audiences: ChangeAudience[];
  /** Ends the listen streams (shutdown). */
  close(): void;
}

export function createModernEra(options: ModernEraOptions): ModernEra {
  const sealer = new RequestStateSealer(options.masterKey);
  const parked = new ParkedCalls({
    maxPerCaller: options.maxParkedPerCaller,
    maxPerServer: options.maxParkedPerServer,
  });
  const listen = new ListenStreams({
    keepAliveMs: options.keepAliveMs,
    maxPerCaller: options.maxListenPerCaller,
    maxPerServer: options.maxListenPerServer,
  });
  const servers = new ModernServers({
    record: options.record,
    keepAliveMs: options.keepAliveMs,
    build: (subdomain) => {
      const context = options.contextOf(subdomain);
      const record = options.record(subdomain);
      const server = createModernMcpServer(context, {
        runner: new ModernCallRunner({
          subdomain,
          replica: options.replica,
          parked,
          sealer,
          stateTtlMs: options.longestCallMs,
        }),
        cacheHint: {
          ttlMs: record?.cacheTtlMs ?? options.cacheTtlMs,
          // A server that authenticates its callers may answer each differently.
          cacheScope: record === undefined || record.securityMode === 'none' ? 'public' : 'private',
        },
        openRequestState: (state) => {
          const opened = sealer.open(state);
          if (opened === undefined)
            throw new Error('not a request state of this service, or expired');
          return opened;
        },
      });
      const info: Implementation = { name: `mcphost/${subdomain}`, version: context.version };
      return { server, info, capabilities: server.getCapabilities() as ServerCapabilities };
    },
  });
  // A tool's header marks are read once per saved record (a save replaces the record).
  const marks = new WeakMap<object, readonly McpHeaderDeclaration[]>();
  const channel = options.channel;
  const relay =
    channel === undefined
      ? undefined
      : new ParkRelay({
          channel,
          replica: options.replica,
          serve: (subdomain, request, scope, open) =>
            endpoint.serveRelayed(subdomain, request, scope, open),
          timeoutMs: options.longestCallMs,
          acceptTimeoutMs: RELAY_ACCEPT_TIMEOUT_MS,
          // The whole result as JSON, escaped once more inside the relayed message.
          maxCharacters: 2 * options.maxResultBytes + 64 * 1024,
          keepAliveMs: options.keepAliveMs,
          onError: options.onError,
        });
  const endpoint: ModernEndpoint = new ModernEndpoint({
    servers,
    listen,
    replica: options.replica,
    holderOf: (value, subdomain, request, scope) => {
      const state = sealer.open(value);
      if (state === undefined) return undefined;
      const binding = bindingOfRequest(
        subdomain,
        callerKeyOf(scope.caller),
        request.method,
        request.params,
      );
      return binding !== undefined && matchesBinding(state, binding) ? state.replica : undefined;
    },
    ...(relay === undefined ? {} : { relay }),
    resourceNamed: options.resourceNamed,
    headerDeclarations: (subdomain, name) => {
      const tool = options.contextOf(subdomain).catalog.tool(subdomain, name);
      if (tool?.inputSchema === undefined) return [];
      let declared = marks.get(tool);
      if (declared === undefined) {
        const read = mcpHeaderDeclarations(tool.inputSchema);
        declared = read.ok ? read.declarations : [];
        marks.set(tool, declared);
      }
      return declared;
    },
  });
  return {
    endpoint,
    relay,
    parked,
    listen,
    audiences: [listen, servers],
    close: () => listen.closeAll(),
  };
}
