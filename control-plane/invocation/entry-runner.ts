/**
 * Prompts, resources and completions as clients (and the admin API's test
 * runs) get them: `prompts/get`, `resources/read` and `completion/complete`
 * answered from the in-memory configuration, running the prompt's,
 * template's or completion's code through the ToolInvoker when it has code —
 * the same path, checks, sandbox, log and metrics as a tool call. Failures
 * are McphostErrors: the MCP layer answers them as JSON-RPC errors.
 *
 * Every answer is bounded by what it will be sent as: its JSON, in bytes
 * (`maxRenderedBytes`). A template render is sized before it is built
 * (prompt-rendering.ts); what code returned is measured once it is an answer
 * (a resource's contents carry a returned value as JSON text, escaped once
 * more); a static resource was measured at save, and again at read, for one
 * saved before.
 */
import type { GetPromptResult, ReadResourceResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { McphostError } from '../errors.js';
import { jsonBytesAtMost } from '../json-size.js';
import type { LogEntry } from '../sandbox/index.js';
import type {
  CompletionSource,
  PromptMessage,
  PromptRecord,
  ResourceRecord,
} from '../store/index.js';
import { describeProblems } from '../validation-problems.js';
import type { CallingClient } from './calling-client.js';
import { bounded, rankCompletions, type Completion } from './completion-ranking.js';
import { completionCode, promptCode, resourceCode } from './entry-code.js';
import {
  answerOf,
  checkPromptArguments,
  messagesFromCode,
  renderTemplate,
} from './prompt-rendering.js';
import { contentsFromCode, staticContents } from './resource-contents.js';
import { findResource, isTemplate } from './resource-lookup.js';
import type { Caller } from '../identity/index.js';
import type { InvocableTool, InvokeRequest, InvokeResult } from './tool-invoker.js';

/** Who asks, and how the run reaches them (as for a tool call). */
export interface EntryRunContext {
  caller: Caller;
  requestId: string;
  /** The client's address, for the invocation log. */
  clientAddress?: string;
  signal?: AbortSignal;
  /** The MCP client (progress, elicitation, sampling); absent in an admin test run. */
  client?: CallingClient;
  /** Each console line of the code, redacted, while it runs. */
  onLog?: (entry: LogEntry) => void;
}

/** What the runner reads of the configuration (the ConfigCache). */
export interface EntryCatalog {
  prompt(subdomain: string, name: string): PromptRecord | undefined;
  resources(subdomain: string): ResourceRecord[];
}

/** A completion request's reference, as MCP sends it. */
export type CompletionReference =
  { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string };

export interface EntryRunnerPorts {
  catalog: EntryCatalog;
  invoker: { invoke(request: InvokeRequest): Promise<InvokeResult> };
  /** Largest answer of a prompt, resource or completion, in bytes of JSON (TOOL_MAX_RESULT_BYTES: an answer is a result). */
  maxRenderedBytes: number;
}

const CodeCompletion = z.union([
  z.array(z.string().max(1024)).max(10_000),
  z.strictObject({
    values: z.array(z.string().max(1024)).max(10_000),
    total: z.number().int().min(0).optional(),
    hasMore: z.boolean().optional(),
  }),
]);

/** Static resources whose contents were measured as an answer (records are replaced on change). */
const measuredStatic = new WeakSet<ResourceRecord>();

export class EntryRunner {
  readonly #ports: EntryRunnerPorts;

  constructor(ports: EntryRunnerPorts) {
    this.#ports = ports;
  }

  /** `prompts/get`: ERR_UNKNOWN_PROMPT, ERR_INVALID_ARGUMENT, or the code's failure. */
  async renderPrompt(
    subdomain: string,
    name: string,
    args: Record<string, unknown> | undefined,
    run: EntryRunContext,
  ): Promise<GetPromptResult> {
    const prompt = this.#ports.catalog.prompt(subdomain, name);
    if (!prompt) throw new McphostError('ERR_UNKNOWN_PROMPT', `Unknown prompt: ${name}`);
    const values = checkPromptArguments(prompt, args);
    if (prompt.messages !== undefined) {
      const template = prompt as PromptRecord & { messages: PromptMessage[] };
      // Sized before it is built.
      return answerOf(prompt, renderTemplate(template, values, this.#ports.maxRenderedBytes));
    }
    const result = await this.#run(
      promptCode(prompt as PromptRecord & { code: string }),
      values,
      run,
    );
    const fromCode = messagesFromCode(prompt, result.value, result.content);
    const described = prompt.description ? { description: prompt.description } : {};
    return this.#bounded({ ...described, ...fromCode }, `prompt "${name}"`);
  }

  /**
   * `resources/read`: a static resource's contents, or a template's code run
   * with the URI's variables; ERR_UNKNOWN_RESOURCE when nothing matches. With
   * `options.resource`, only that resource may answer (the admin preview).
   */
  async readResource(
    subdomain: string,
    uri: string,
    run: EntryRunContext,
    options: { resource?: string } = {},
  ): Promise<ReadResourceResult> {
    const match = findResource(this.#ports.catalog.resources(subdomain), uri, options.resource);
    if (!match) {
      throw new McphostError('ERR_UNKNOWN_RESOURCE', `Resource not found: ${uri.slice(0, 512)}`, {
        details: { uri },
      });
    }
    const { resource, variables } = match;
    const what = `resource "${resource.name}"`;
    if (variables === undefined || !isTemplate(resource)) {
      // Measured at save; a resource saved before (by characters) is measured here once.
      if (!measuredStatic.has(resource)) {
        this.#bounded({ contents: staticContents(resource) }, what);
        measuredStatic.add(resource);
      }
      return { contents: staticContents(resource) };
    }
    const result = await this.#run(resourceCode(resource), variables, run);
    return this.#bounded(
      { contents: contentsFromCode(resource, uri, result.value, result.content) },
      what,
    );
  }

  /** The name of the resource that serves `uri` (a subscription follows it), or undefined. */
  resourceNamed(subdomain: string, uri: string): string | undefined {
    return findResource(this.#ports.catalog.resources(subdomain), uri)?.resource.name;
  }

  /**
   * `completion/complete` for an argument of a prompt or a variable of a
   * template: its value list ranked, or its code's answer; no source, no values.
   */
  async complete(
    subdomain: string,
    ref: CompletionReference,
    argument: { name: string; value: string },
    contextArguments: Record<string, string> | undefined,
    run: EntryRunContext,
  ): Promise<Completion> {
    const { owner, source } = this.#completionSource(subdomain, ref, argument.name);
    if (source === undefined) return { values: [], total: 0, hasMore: false };
    if ('values' in source) return rankCompletions(source.values, argument.value);
    const params = {
      argument: argument.name,
      value: argument.value,
      arguments: { ...contextArguments },
    };
    const result = await this.#run(completionCode(owner, argument.name, source.code), params, run);
    const parsed = CodeCompletion.safeParse(result.value);
    if (!parsed.success) {
      throw new McphostError(
        'ERR_OUTPUT_INVALID',
        `the completion code of "${argument.name}" must return an array of strings or {values, total?, hasMore?}: ${describeProblems(parsed.error)}`,
      );
    }
    const answer = parsed.data;
    return this.#bounded(
      Array.isArray(answer)
        ? bounded(answer)
        : bounded(answer.values, answer.total ?? answer.values.length, answer.hasMore),
      `the completion of "${argument.name}"`,
    );
  }

  /** `answer`, or ERR_RESULT_TOO_LARGE when its JSON is larger than an answer may be. */
  #bounded<T>(answer: T, what: string): T {
    const limit = this.#ports.maxRenderedBytes;
    // The walk stops past the limit: it costs no more than the answer it allows.
    if (jsonBytesAtMost(answer, limit) > limit) {
      throw new McphostError(
        'ERR_RESULT_TOO_LARGE',
        `${what} would answer more than ${limit} bytes of JSON (TOOL_MAX_RESULT_BYTES)`,
      );
    }
    return answer;
  }

  #completionSource(
    subdomain: string,
    ref: CompletionReference,
    argument: string,
  ): { owner: PromptRecord | ResourceRecord; source: CompletionSource | undefined } {
    if (ref.type === 'ref/prompt') {
      const prompt = this.#ports.catalog.prompt(subdomain, ref.name);
      if (!prompt) throw new McphostError('ERR_UNKNOWN_PROMPT', `Unknown prompt: ${ref.name}`);
      const declared = prompt.arguments.find((candidate) => candidate.name === argument);
      return { owner: prompt, source: declared?.complete };
    }
    const template = this.#ports.catalog
      .resources(subdomain)
      .find((resource) => resource.uriTemplate === ref.uri);
    if (!template) {
      throw new McphostError(
        'ERR_UNKNOWN_PROMPT',
        `No resource template ${ref.uri.slice(0, 512)} on this server`,
      );
    }
    // Own keys only: `constructor` or `__proto__` must not find Object's.
    const complete = template.complete ?? {};
    return {
      owner: template,
      source: Object.hasOwn(complete, argument) ? complete[argument] : undefined,
    };
  }

  /** Runs entry code as a tool call; a failure is thrown as its McphostError. */
  async #run(
    code: InvocableTool,
    params: Record<string, unknown>,
    run: EntryRunContext,
  ): Promise<Extract<InvokeResult, { ok: true }>> {
    const result = await this.#ports.invoker.invoke({
      tool: code,
      args: params,
      caller: run.caller,
      requestId: run.requestId,
      clientAddress: run.clientAddress,
      signal: run.signal,
      client: run.client,
      onLog: run.onLog,
    });
    if (!result.ok) {
      const { code: errorCode, message, line, column } = result.error;
      throw new McphostError(errorCode, message, {
        details: line === undefined ? undefined : { line, column },
      });
    }
    return result;
  }
}
