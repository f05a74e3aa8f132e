/**
 * `subscriptions/listen` (MCP 2026-07-28): a modern client's long-lived
 * stream of change notifications, in place of the legacy GET stream and
 * `resources/subscribe`. The stream's first message is the acknowledgement
 * with the part of the client's filter this server honours (what its
 * capabilities announce); every message carries the listen request's id as
 * the subscription id; nothing the client did not ask for is sent; a stream
 * the server ends (shutdown, the server deactivated or its security changed,
 * the credential that opened it revoked or past its end: stream-credential.ts)
 * ends with the request's own result, a closed connection ends it silently.
 *
 * Changes reach every replica through the store's change feed, and each
 * replica tells the streams it holds (config-sync.ts): no stream needs to
 * know where a change was made. Streams are bounded per caller and per
 * server. The SDK's own listen router is private to `createMcpHandler`, which
 * mcphost does not use for calls, and cannot tell which subscribed URIs a
 * template's change touched: this is its small counterpart.
 */
import type { ServerResponse } from 'node:http';
import { SubscriptionsListenRequestParamsSchema } from '@modelcontextprotocol/core';
import {
  SERVER_INFO_META_KEY,
  SUBSCRIPTION_ID_META_KEY,
  type Implementation,
  type JSONRPCRequest,
  type RequestId,
  type ServerCapabilities,
  type SubscriptionFilter,
} from '@modelcontextprotocol/server';
import { McphostError } from '../errors.js';
import { ResourceSubscriptions } from './resource-subscriptions.js';
import type { ResourceChanges } from './resource-updates.js';
import { ResponseStream } from './response-stream.js';
import { CredentialExpiry, type StreamCredential } from './stream-credential.js';

/** What a change of a server's configuration is told to (open sessions, listen streams). */
export interface ChangeListener {
  notifyToolsChanged(): void;
  notifyPromptsChanged(): void;
  notifyResourcesChanged(): void;
  notifyResourcesUpdated(changes: ResourceChanges): void;
  /** The credential it was opened with; absent: nothing ends it but its server (an instance, an anonymous caller). */
  readonly credential?: StreamCredential;
  /** Ends it: the API key it was opened with was revoked or deleted (key-revocations.ts in app/). */
  credentialRevoked?(): void;
}

export interface ListenStreamsOptions {
  /** Silence before a keep-alive comment, in ms. */
  keepAliveMs: number;
  /** Most streams one caller may hold open on one server. */
  maxPerCaller: number;
  /** Most streams open on one server. */
  maxPerServer: number;
}

/** One listen request, with what the hosted side established about it. */
export interface ListenRequest {
  subdomain: string;
  quotaKey: string;
  request: JSONRPCRequest;
  res: ServerResponse;
  capabilities: ServerCapabilities;
  serverInfo: Implementation;
  /** Which resource serves a URI now (static or template), to follow its changes; undefined: none yet. */
  resourceNamed(uri: string): string | undefined;
  /** The credential the request was admitted with (the stream ends with it); absent: an anonymous caller. */
  credential?: StreamCredential;
}

interface OpenStream extends ChangeListener {
  readonly subdomain: string;
  readonly quotaKey: string;
  /** Ends the stream with the listen request's result (the server ended it). */
  close(): void;
}

export class ListenStreams {
  readonly #options: ListenStreamsOptions;
  readonly #streams = new Set<OpenStream>();

  constructor(options: ListenStreamsOptions) {
    this.#options = options;
  }

  /** Streams open now. */
  get size(): number {
    return this.#streams.size;
  }

  /**
   * Opens the stream of one `subscriptions/listen`. A malformed filter is
   * -32602 and a stream over a bound ERR_SUBSCRIPTION_QUOTA, both before the
   * acknowledgement (thrown as McphostErrors for the endpoint to answer).
   */
  open(listen: ListenRequest): void {
    const filter = parseFilter(listen.request);
    const honoured = honouredFilter(filter, listen.capabilities);
    const resources = new ResourceSubscriptions();
    for (const uri of honoured.resourceSubscriptions ?? []) {
      resources.add(uri, listen.resourceNamed(uri) ?? '');
    }
    this.#admit(listen.subdomain, listen.quotaKey);

    const id: RequestId = listen.request.id;
    const stamp = (params: Record<string, unknown>) => ({
      ...params,
      _meta: { [SUBSCRIPTION_ID_META_KEY]: id },
    });
    // Ends the stream gracefully when its credential does (token `exp`, key `expiresAt`).
    const expiry = new CredentialExpiry(() => open.close());
    const stream = ResponseStream.eventStream(
      listen.res,
      undefined,
      this.#options.keepAliveMs,
      () => {
        expiry.cancel();
        this.#streams.delete(open);
      },
    );
    const notify = (method: string, params: Record<string, unknown> = {}) =>
      stream.send({ jsonrpc: '2.0', method, params: stamp(params) });
    const open: OpenStream = {
      subdomain: listen.subdomain,
      quotaKey: listen.quotaKey,
      credential: listen.credential,
      notifyToolsChanged: () => {
        if (honoured.toolsListChanged) notify('notifications/tools/list_changed');
      },
      notifyPromptsChanged: () => {
        if (honoured.promptsListChanged) notify('notifications/prompts/list_changed');
      },
      notifyResourcesChanged: () => {
        if (honoured.resourcesListChanged) notify('notifications/resources/list_changed');
      },
      notifyResourcesUpdated: (changes) => {
        for (const uri of resources.affected(changes)) {
          notify('notifications/resources/updated', { uri });
        }
      },
      credentialRevoked: () => open.close(),
      close: () => {
        expiry.cancel();
        this.#streams.delete(open);
        stream.finish({
          jsonrpc: '2.0',
          id,
          result: {
            resultType: 'complete',
            _meta: { [SUBSCRIPTION_ID_META_KEY]: id, [SERVER_INFO_META_KEY]: listen.serverInfo },
          },
        });
      },
    };
    notify('notifications/subscriptions/acknowledged', { notifications: honoured });
    if (Object.keys(honoured).length === 0) {
      // Nothing this server can send: the stream ends at once, gracefully.
      open.close();
      return;
    }
    this.#streams.add(open);
    expiry.extend(listen.credential?.expiresAt);
  }

  /** Open streams per server, for metrics. */
  countsByServer(): ReadonlyMap<string, number> {
    const counts = new Map<string, number>();
    for (const stream of this.#streams) {
      counts.set(stream.subdomain, (counts.get(stream.subdomain) ?? 0) + 1);
    }
    return counts;
  }

  /** The streams of a server, for its configuration changes. */
  forSubdomain(subdomain: string): ChangeListener[] {
    return [...this.#streams].filter((stream) => stream.subdomain === subdomain);
  }

  /** Ends every stream of a server (it was deleted, deactivated, or its security changed). */
  closeSubdomain(subdomain: string): void {
    for (const stream of this.forSubdomain(subdomain) as OpenStream[]) stream.close();
  }

  /** Ends every stream (shutdown). */
  closeAll(): void {
    for (const stream of [...this.#streams]) stream.close();
  }

  #admit(subdomain: string, quotaKey: string): void {
    let server = 0;
    let caller = 0;
    for (const stream of this.#streams) {
      if (stream.subdomain !== subdomain) continue;
      server += 1;
      if (stream.quotaKey === quotaKey) caller += 1;
    }
    const { maxPerCaller, maxPerServer } = this.#options;
    if (caller >= maxPerCaller || server >= maxPerServer) {
      throw new McphostError(
        'ERR_SUBSCRIPTION_QUOTA',
        caller >= maxPerCaller
          ? `this caller already holds ${maxPerCaller} subscriptions/listen streams on this server; close one first`
          : `this server already has ${maxPerServer} subscriptions/listen streams open; retry later`,
      );
    }
  }
}

function parseFilter(request: JSONRPCRequest): SubscriptionFilter {
  const parsed = SubscriptionsListenRequestParamsSchema.safeParse(request.params);
  if (!parsed.success) {
    throw new McphostError(
      'ERR_VALIDATION',
      "Invalid params: 'notifications' is required and must be a valid subscription filter",
    );
  }
  return parsed.data.notifications;
}

/** The part of a filter this server honours: what its capabilities announce. */
function honouredFilter(
  filter: SubscriptionFilter,
  capabilities: ServerCapabilities,
): SubscriptionFilter {
  const honoured: SubscriptionFilter = {};
  if (filter.toolsListChanged === true && capabilities.tools?.listChanged === true) {
    honoured.toolsListChanged = true;
  }
  if (filter.promptsListChanged === true && capabilities.prompts?.listChanged === true) {
    honoured.promptsListChanged = true;
  }
  if (filter.resourcesListChanged === true && capabilities.resources?.listChanged === true) {
    honoured.resourcesListChanged = true;
  }
  if (
    filter.resourceSubscriptions !== undefined &&
    filter.resourceSubscriptions.length > 0 &&
    capabilities.resources?.subscribe === true
  ) {
    honoured.resourceSubscriptions = [...new Set(filter.resourceSubscriptions)];
  }
  return honoured;
}
