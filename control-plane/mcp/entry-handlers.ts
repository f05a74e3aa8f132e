/**
 * The prompts, resources and completion handlers of a hosted server's SDK
 * server, in both eras, registered only for what the hosted server has (the
 * capabilities say the same). Lists come from the in-memory configuration,
 * paginated by count and bytes (pagination.ts); `prompts/get`,
 * `resources/read` and `completion/complete` go to the EntryRunner, which
 * runs code through the invoker as a tool call does, through the era's call
 * runner (its client, log lines and, in the modern era, input rounds).
 * `resources/subscribe` belongs to the legacy era (its session keeps the
 * subscriptions); a modern client listens (listen-streams.ts).
 */
import { GetPromptRequestSchema } from '@modelcontextprotocol/core';
import type { Server, ServerCapabilities } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { isMcphostError, McphostError } from '../errors.js';
import type { EntryRunner } from '../invocation/index.js';
import type { PromptRecord, ResourceRecord } from '../store/index.js';
import { isInputRequired, runContextOf, type CallRunner } from './call-runner.js';
import { describePrompt, describeResource, describeTemplate } from './entry-descriptions.js';
import { paginate } from './pagination.js';
import { toProtocolError } from './protocol-error.js';
import { scopeOf } from './request-scope.js';
import type { ResourceSubscriptions } from './resource-subscriptions.js';
import { isProtocolAnswer } from './tool-call.js';

/**
 * `prompts/get` with arguments of any JSON type: the SDK's schema (strings
 * only) would refuse a number before our check, with zod's text;
 * `checkPromptArguments` answers it as -32602 naming the argument.
 */
const LoosePromptParamsSchema = GetPromptRequestSchema.shape.params.extend({
  arguments: z.record(z.string(), z.unknown()).optional(),
});

/** What the handlers read of the configuration (the ConfigCache). */
export interface EntryCatalog {
  prompts(subdomain: string): readonly PromptRecord[];
  resources(subdomain: string): readonly ResourceRecord[];
}

export interface EntryHandlerContext {
  subdomain: string;
  catalog: EntryCatalog;
  entries: EntryRunner;
  /** Told of a failure that is a bug (not a McphostError); the client sees ERR_INTERNAL only. */
  onInternalError(error: unknown): void;
}

/** What a legacy session keeps of resource subscriptions (absent in the modern era). */
export interface SessionSubscriptions {
  subscriptions: ResourceSubscriptions;
  /** Records a changed subscription where every replica sees it. */
  settingsChanged(): Promise<void>;
}

/** The capabilities a server gets for what its hosted server has now. */
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
  runner: CallRunner,
  session: SessionSubscriptions | undefined,
): void {
  const { subdomain, catalog, entries } = context;
  // What the runner throws is a McphostError for the client; anything else is a bug.
  const answer = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      if (isProtocolAnswer(error) && !isMcphostError(error)) throw error;
      if (!isMcphostError(error)) context.onInternalError(error);
      throw toProtocolError(error);
    }
  };

  if (capabilities.prompts) {
    server.setRequestHandler('prompts/list', (request) =>
      answer(async () => {
        const page = paginate(catalog.prompts(subdomain), request.params?.cursor, describePrompt);
        return { prompts: page.items, ...cursorOf(page.nextCursor) };
      }),
    );
    server.setRequestHandler(
      'prompts/get',
      { params: LoosePromptParamsSchema },
      ({ name, arguments: args }, ctx) =>
        answer(async () => {
          const scope = scopeOf(ctx);
          return runner.run({ ctx, target: { kind: 'prompt', name }, args, logger: name }, (io) =>
            entries.renderPrompt(subdomain, name, args, runContextOf(scope, io)),
          );
        }),
    );
  }

  if (capabilities.resources) {
    server.setRequestHandler('resources/list', (request) =>
      answer(async () => {
        const statics = catalog.resources(subdomain).filter((r) => r.uri !== undefined);
        const page = paginate(statics, request.params?.cursor, describeResource);
        return { resources: page.items, ...cursorOf(page.nextCursor) };
      }),
    );
    server.setRequestHandler('resources/templates/list', (request) =>
      answer(async () => {
        const templates = catalog.resources(subdomain).filter((r) => r.uriTemplate !== undefined);
        const page = paginate(templates, request.params?.cursor, describeTemplate);
        return { resourceTemplates: page.items, ...cursorOf(page.nextCursor) };
      }),
    );
    server.setRequestHandler('resources/read', (request, ctx) =>
      answer(async () => {
        const { uri } = request.params;
        const scope = scopeOf(ctx);
        return runner.run(
          { ctx, target: { kind: 'resource', name: uri }, args: {}, logger: uri },
          (io) => entries.readResource(subdomain, uri, runContextOf(scope, io)),
        );
      }),
    );
    if (session !== undefined) {
      server.setRequestHandler('resources/subscribe', (request) =>
        answer(async () => {
          const { uri } = request.params;
          const resource = entries.resourceNamed(subdomain, uri);
          if (resource === undefined) {
            throw new McphostError(
              'ERR_UNKNOWN_RESOURCE',
              `Resource not found: ${uri.slice(0, 512)}`,
              { details: { uri } },
            );
          }
          session.subscriptions.add(uri, resource);
          await session.settingsChanged();
          return {};
        }),
      );
      server.setRequestHandler('resources/unsubscribe', (request) =>
        answer(async () => {
          session.subscriptions.delete(request.params.uri);
          await session.settingsChanged();
          return {};
        }),
      );
    }
  }

  if (capabilities.completions) {
    server.setRequestHandler('completion/complete', (request, ctx) =>
      answer(async () => {
        const { ref, argument, context: completionContext } = request.params;
        const scope = scopeOf(ctx);
        // `completion/complete` has no input rounds (MCP 2026-07-28): its code runs once.
        const completion = await runner.run(
          {
            ctx,
            target: { kind: 'prompt', name: argument.name },
            args: request.params,
            logger: argument.name,
            inputRounds: false,
          },
          (io) =>
            entries.complete(
              subdomain,
              ref,
              argument,
              completionContext?.arguments,
              runContextOf(scope, io),
            ),
        );
        if (isInputRequired(completion))
          throw new TypeError('a completion answered input_required');
        return { completion: { ...completion } };
      }),
    );
  }
}

/** A page's `nextCursor`, present only when there is a next page. */
export function cursorOf(nextCursor: string | undefined): { nextCursor?: string } {
  return nextCursor === undefined ? {} : { nextCursor };
}
