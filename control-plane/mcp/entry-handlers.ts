/**
 * The prompts, resources and completion handlers of one session's SDK
 * server, registered only for what the hosted server has (the session's
 * capabilities say the same). Lists come from the in-memory configuration,
 * paginated; `prompts/get`, `resources/read` and `completion/complete` go to
 * the EntryRunner, which runs code through the invoker as a tool call does
 * (the session's log level, cancellation and client apply alike).
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type LoggingLevel,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { isMcphostError, McphostError } from '../errors.js';
import { clientAddressFromHeaders, requestIdFromHeaders } from '../http/index.js';
import type { Caller, EntryRunContext, EntryRunner } from '../invocation/index.js';
import type { PromptRecord, ResourceRecord } from '../store/index.js';
import { callingClientFor } from './calling-client.js';
import { describePrompt, describeResource, describeTemplate } from './entry-descriptions.js';
import { paginate } from './pagination.js';
import { toProtocolError } from './protocol-error.js';
import type { ResourceSubscriptions } from './resource-subscriptions.js';
import { logForwarder, type HandlerExtra } from './tool-call.js';

/**
 * `prompts/get` with arguments of any JSON type: the SDK's schema (strings
 * only) would refuse a number before our check, with -32603 and zod's text;
 * `checkPromptArguments` answers it as -32602 naming the argument.
 */
const LooseGetPromptRequestSchema = GetPromptRequestSchema.extend({
  params: GetPromptRequestSchema.shape.params.extend({
    arguments: z.record(z.string(), z.unknown()).optional(),
  }),
});

/** What the handlers read of the configuration (the ConfigCache). */
export interface EntryCatalog {
  prompts(subdomain: string): readonly PromptRecord[];
  resources(subdomain: string): ResourceRecord[];
}

export interface EntryHandlerContext {
  subdomain: string;
  caller: Caller;
  catalog: EntryCatalog;
  entries: EntryRunner;
  /** Told of a failure that is a bug (not a McphostError); the client sees ERR_INTERNAL only. */
  onInternalError(error: unknown): void;
}

/** The capabilities a session gets for what its server has now. */
export function entryCapabilities(context: EntryHandlerContext): ServerCapabilities {
  const hasPrompts = context.catalog.prompts(context.subdomain).length > 0;
  const hasResources = context.catalog.resources(context.subdomain).length > 0;
  return {
    ...(hasPrompts ? { prompts: { listChanged: true } } : {}),
    ...(hasResources ? { resources: { subscribe: true, listChanged: true } } : {}),
    ...(hasPrompts || hasResources ? { completions: {} } : {}),
  };
}

/** Registers the handlers `capabilities` announce. */
export function addEntryHandlers(
  server: Server,
  context: EntryHandlerContext,
  capabilities: ServerCapabilities,
  session: {
    minimumLevel(): LoggingLevel;
    subscriptions: ResourceSubscriptions;
    /** Records a changed subscription where every replica sees it. */
    settingsChanged(): Promise<void>;
  },
): void {
  const { subdomain, catalog, entries } = context;
  const runOf = (
    request: { params?: { _meta?: { progressToken?: string | number } } },
    extra: HandlerExtra,
    logger: string,
  ): EntryRunContext => ({
    caller: context.caller,
    requestId: requestIdFromHeaders(extra.requestInfo?.headers),
    clientAddress: clientAddressFromHeaders(extra.requestInfo?.headers),
    signal: extra.signal,
    client: callingClientFor(server, request, extra),
    onLog: logForwarder(extra, logger, session.minimumLevel),
  });
  // What the runner throws is a McphostError for the client; anything else is a bug.
  const answer = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      if (!isMcphostError(error)) context.onInternalError(error);
      throw toProtocolError(error);
    }
  };

  if (capabilities.prompts) {
    server.setRequestHandler(ListPromptsRequestSchema, (request) =>
      answer(async () => {
        const page = paginate(catalog.prompts(subdomain), request.params?.cursor);
        return { prompts: page.items.map(describePrompt), ...cursorOf(page.nextCursor) };
      }),
    );
    server.setRequestHandler(LooseGetPromptRequestSchema, (request, extra) =>
      answer(() =>
        entries.renderPrompt(
          subdomain,
          request.params.name,
          request.params.arguments,
          runOf(request, extra, request.params.name),
        ),
      ),
    );
  }

  if (capabilities.resources) {
    server.setRequestHandler(ListResourcesRequestSchema, (request) =>
      answer(async () => {
        const statics = catalog.resources(subdomain).filter((r) => r.uri !== undefined);
        const page = paginate(statics, request.params?.cursor);
        return { resources: page.items.map(describeResource), ...cursorOf(page.nextCursor) };
      }),
    );
    server.setRequestHandler(ListResourceTemplatesRequestSchema, (request) =>
      answer(async () => {
        const templates = catalog.resources(subdomain).filter((r) => r.uriTemplate !== undefined);
        const page = paginate(templates, request.params?.cursor);
        return {
          resourceTemplates: page.items.map(describeTemplate),
          ...cursorOf(page.nextCursor),
        };
      }),
    );
    server.setRequestHandler(ReadResourceRequestSchema, (request, extra) =>
      answer(() =>
        entries.readResource(
          subdomain,
          request.params.uri,
          runOf(request, extra, request.params.uri),
        ),
      ),
    );
    server.setRequestHandler(SubscribeRequestSchema, (request) =>
      answer(async () => {
        const { uri } = request.params;
        const resource = entries.resourceNamed(subdomain, uri);
        if (resource === undefined) {
          throw new McphostError(
            'ERR_UNKNOWN_RESOURCE',
            `Resource not found: ${uri.slice(0, 512)}`,
          );
        }
        session.subscriptions.add(uri, resource);
        await session.settingsChanged();
        return {};
      }),
    );
    server.setRequestHandler(UnsubscribeRequestSchema, (request) =>
      answer(async () => {
        session.subscriptions.delete(request.params.uri);
        await session.settingsChanged();
        return {};
      }),
    );
  }

  if (capabilities.completions) {
    server.setRequestHandler(CompleteRequestSchema, (request, extra) =>
      answer(async () => {
        const { ref, argument, context: completionContext } = request.params;
        const completion = await entries.complete(
          subdomain,
          ref,
          argument,
          completionContext?.arguments,
          runOf(request, extra, argument.name),
        );
        return { completion };
      }),
    );
  }
}

function cursorOf(nextCursor: string | undefined): { nextCursor?: string } {
  return nextCursor === undefined ? {} : { nextCursor };
}
