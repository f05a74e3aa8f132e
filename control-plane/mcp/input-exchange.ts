/**
 * Input from the client for code running in the modern era (MCP
 * 2026-07-28, multi round-trip requests). Tool, prompt and resource code asks
 * with `sdk.elicit`, `sdk.sample` and `sdk.roots` exactly as in the legacy
 * era; here each request waits in the exchange instead of being sent. When
 * the harness reports that the code waits on nothing else (`waiting`), the
 * call answers `input_required` with every pending request under its key and
 * the invocation stays parked, its container leased. The client's retry
 * brings the answers: they are checked, handed to the code, and the round
 * goes on to the next `waiting` or to the outcome. Tool code never runs
 * again from the top.
 *
 * Progress and log lines of the code travel on the response of the round
 * that is running (each retry is its own request, with its own progress
 * token and log level).
 */
import {
  CreateMessageRequestParamsSchema,
  CreateMessageResultSchema,
  CreateMessageResultWithToolsSchema,
  ElicitRequestFormParamsSchema,
  ElicitResultSchema,
  ListRootsResultSchema,
} from '@modelcontextprotocol/core';
import type {
  ClientCapabilities,
  InputRequest,
  InputRequests,
  LoggingLevel,
  ServerNotification,
} from '@modelcontextprotocol/server';
import type { z } from 'zod';
import type { ClientOperation, CallingClientInfo } from '../../src/protocol/index.js';
import { McphostError } from '../errors.js';
import { SDK_NAME_OF, type CallingClient } from '../invocation/index.js';
import type { LogEntry, ProgressUpdate } from '../sandbox/index.js';
import { describeProblems } from '../validation-problems.js';
import { asObject, checked } from './calling-client.js';
import { FORM_ANSWERS, restrictedFormRequest } from './elicitation-answers.js';
import { isLevelSent, LEVEL_OF_CONSOLE } from './log-levels.js';

/** Where the running round's notifications go: the response of the request being served. */
export interface RoundOutlet {
  /** Sends a notification related to the request being served. */
  notify(notification: ServerNotification): void;
  /** The request's progress token, when it sent one. */
  progressToken?: string | number;
  /** The request's `logLevel`; absent: no log lines are sent (2026-07-28). */
  logLevel?: LoggingLevel;
}

/** What a round came to: the code's outcome, its requests to the client, or a refusal. */
export type RoundStep<T> =
  | { kind: 'done'; value: T }
  | { kind: 'input'; inputRequests: InputRequests }
  | { kind: 'unsupported'; requiredCapabilities: ClientCapabilities; message: string }
  | { kind: 'malformed'; message: string };

/** A response of the retry that is not an answer to what was asked; nothing was delivered. */
export class MalformedInputResponse extends Error {
  constructor(
    readonly key: string,
    detail: string,
  ) {
    super(`inputResponses.${key}: ${detail}`);
  }
}

interface PendingInput {
  key: string;
  operation: ClientOperation;
  request: InputRequest;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** The capability each kind of request needs the client to have declared. */
const REQUIRED_CAPABILITY: Readonly<Record<ClientOperation, ClientCapabilities>> = {
  'client.elicit': { elicitation: { form: {} } },
  'client.sample': { sampling: {} },
  'client.roots': { roots: {} },
};

const KEY_PREFIX: Readonly<Record<ClientOperation, string>> = {
  'client.elicit': 'elicit',
  'client.sample': 'sample',
  'client.roots': 'roots',
};

/** One running invocation's exchange with its client, across rounds. */
export class InputExchange<T> {
  /** The client as the invocation reaches it (sdk.progress, elicit, sample, roots, client). */
  readonly client: CallingClient;
  readonly #capabilities: ClientCapabilities | undefined;
  readonly #logger: string;
  readonly #pending = new Map<string, PendingInput>();
  #nextKey = 1;
  #outlet: RoundOutlet | undefined;
  #wake: ((step: RoundStep<T>) => void) | undefined;
  /** True while the code is known to wait on nothing but the pending requests. */
  #quiet = false;
  /** Rounds answered `input_required` so far. */
  #rounds = 0;
  /** Why the call cannot go on (a capability the client lacks, an answer that is no answer). */
  #refusal: Extract<RoundStep<T>, { kind: 'unsupported' | 'malformed' }> | undefined;
  /** Answers the first request brought along, taken by key when the code asks. */
  readonly #presupplied: Map<string, unknown>;
  #outcome: Promise<RoundStep<T>> | undefined;

  /**
   * `info`: what the client declared on the first request (capabilities are
   * the request's own in this era); `logger`: the name log lines carry;
   * `presupplied`: `inputResponses` the first request already carried — a
   * client may answer before it is asked, and what the code then asks under
   * those keys is answered at once (checked like any answer).
   */
  constructor(info: CallingClientInfo, logger: string, presupplied?: Record<string, unknown>) {
    this.#capabilities = info.capabilities as ClientCapabilities;
    this.#logger = logger;
    this.#presupplied = new Map(Object.entries(presupplied ?? {}));
    this.client = {
      info,
      progress: (update) => this.#progress(update),
      request: (operation, args, signal) => this.#request(operation, args, signal),
      waiting: () => this.#waiting(),
      rounds: () => this.#rounds,
    };
  }

  /** Sends a console line of the code on the running round, at or above its log level. */
  readonly log = (entry: LogEntry): void => sendLogLine(this.#outlet, this.#logger, entry);

  /** Starts the code: `run` is given the client and resolves with its outcome. */
  start(run: Promise<T>): void {
    this.#outcome = run.then((value) => ({ kind: 'done', value }));
  }

  /** Settles when the code's run has (its outcome, or its failure). */
  get ended(): Promise<unknown> {
    if (this.#outcome === undefined) throw new TypeError('InputExchange.ended before start');
    return this.#outcome.catch(() => undefined);
  }

  /**
   * Serves a round: its notifications go to `outlet` until the code's
   * outcome, or until it waits on the client again.
   */
  next(outlet: RoundOutlet): Promise<RoundStep<T>> {
    if (this.#outcome === undefined) throw new TypeError('InputExchange.next before start');
    this.#outlet = outlet;
    const waited = new Promise<RoundStep<T>>((resolve) => {
      this.#wake = resolve;
      if (this.#refusal !== undefined) resolve(this.#refusal);
      // A retry that answered nothing: the code still waits, and nothing will say so again.
      else if (this.#quiet) this.#waiting();
    });
    return Promise.race([this.#outcome, waited]).finally(() => {
      this.#wake = undefined;
      this.#outlet = undefined;
    });
  }

  /** The keys the client has yet to answer. */
  pendingKeys(): string[] {
    return [...this.#pending.keys()];
  }

  /**
   * Checks every response to a pending request, then hands them all to the
   * code (or none: a malformed one throws MalformedInputResponse). Keys the
   * code did not ask are ignored; a missing answer is asked again.
   */
  answer(responses: Record<string, unknown> | undefined): number {
    const answers: [PendingInput, unknown][] = [];
    for (const [key, response] of Object.entries(responses ?? {})) {
      const pending = this.#pending.get(key);
      if (pending === undefined) continue;
      answers.push([pending, checkedAnswer(pending, response)]);
    }
    for (const [pending, value] of answers) {
      this.#pending.delete(pending.key);
      pending.resolve(value);
    }
    // The code runs again: only the harness can say when it waits next.
    if (answers.length > 0) this.#quiet = false;
    return answers.length;
  }

  #request(operation: ClientOperation, args: unknown, signal: AbortSignal): Promise<unknown> {
    const name = SDK_NAME_OF[operation];
    const { key: askedKey, ...fields } = asObject(args);
    const key = typeof askedKey === 'string' ? askedKey : this.#freshKey(operation);
    if (this.#pending.has(key)) {
      return Promise.reject(
        new McphostError(
          'ERR_INVALID_ARGUMENT',
          `${name}: the key "${key}" is already waiting for an answer; give each pending request its own key`,
        ),
      );
    }
    let request: InputRequest;
    try {
      request = embeddedRequest(operation, name, fields);
    } catch (error) {
      return Promise.reject(error);
    }
    if (this.#presupplied.has(key)) {
      const pending: PendingInput = {
        key,
        operation,
        request,
        resolve: () => {},
        reject: () => {},
      };
      const response = this.#presupplied.get(key);
      this.#presupplied.delete(key);
      try {
        return Promise.resolve(checkedAnswer(pending, response));
      } catch (error) {
        return this.#refuse({ kind: 'malformed', message: (error as Error).message });
      }
    }
    if (!declares(this.#capabilities, operation)) {
      // The call cannot go on: it answers -32021 naming what the client lacks.
      return this.#refuse({
        kind: 'unsupported',
        requiredCapabilities: REQUIRED_CAPABILITY[operation],
        message: `${name} asks the client for ${describeCapability(operation)}, which this request's client capabilities do not declare`,
      });
    }
    return new Promise((resolve, reject) => {
      this.#quiet = false;
      this.#pending.set(key, { key, operation, request, resolve, reject });
      signal.addEventListener(
        'abort',
        () => {
          this.#pending.delete(key);
          reject(new McphostError('ERR_CANCELLED', 'the invocation ended'));
        },
        { once: true },
      );
    });
  }

  /** Ends the round with a refusal; the code's request never settles (the call ends its invocation). */
  #refuse(refusal: Extract<RoundStep<T>, { kind: 'unsupported' | 'malformed' }>): Promise<never> {
    this.#refusal ??= refusal;
    this.#wake?.(this.#refusal);
    return new Promise(() => undefined);
  }

  #freshKey(operation: ClientOperation): string {
    let key: string;
    do key = `${KEY_PREFIX[operation]}-${this.#nextKey++}`;
    while (this.#pending.has(key));
    return key;
  }

  #waiting(): void {
    if (this.#pending.size === 0) return;
    this.#quiet = true;
    if (this.#wake === undefined) return;
    const inputRequests: InputRequests = {};
    for (const pending of this.#pending.values()) inputRequests[pending.key] = pending.request;
    this.#rounds += 1;
    this.#wake({ kind: 'input', inputRequests });
  }

  #progress(update: ProgressUpdate): void {
    sendProgress(this.#outlet, update);
  }
}

/** Sends a console line on `outlet` when it is at or above the request's log level. */
export function sendLogLine(
  outlet: RoundOutlet | undefined,
  logger: string,
  entry: LogEntry,
): void {
  const level = LEVEL_OF_CONSOLE[entry.level];
  if (outlet?.logLevel === undefined || !isLevelSent(level, outlet.logLevel)) return;
  outlet.notify({
    method: 'notifications/message',
    params: { level, logger, data: entry.text },
  });
}

/** Sends progress on `outlet` when its request sent a progress token. */
export function sendProgress(outlet: RoundOutlet | undefined, update: ProgressUpdate): void {
  if (outlet?.progressToken === undefined) return;
  outlet.notify({
    method: 'notifications/progress',
    params: { progressToken: outlet.progressToken, ...update },
  });
}

/** The request the code asked for, as MCP embeds it in `inputRequests`. */
function embeddedRequest(
  operation: ClientOperation,
  name: string,
  fields: Record<string, unknown>,
): InputRequest {
  switch (operation) {
    case 'client.elicit': {
      const params = restrictedFormRequest(
        name,
        checked(name, ElicitRequestFormParamsSchema, { mode: 'form', ...fields }),
      );
      return { method: 'elicitation/create', params } as InputRequest;
    }
    case 'client.sample':
      return {
        method: 'sampling/createMessage',
        params: checked(name, CreateMessageRequestParamsSchema, fields),
      } as InputRequest;
    case 'client.roots':
      return { method: 'roots/list' } as InputRequest;
  }
}

/** The client's answer to one request, checked against what that request asked for. */
function checkedAnswer(pending: PendingInput, response: unknown): unknown {
  switch (pending.operation) {
    case 'client.elicit': {
      const result = ElicitResultSchema.safeParse(response);
      if (!result.success) throw malformed(pending.key, result.error);
      if (result.data.action === 'accept') {
        const params = pending.request.params as { requestedSchema: object };
        const validate = FORM_ANSWERS.getValidator(params.requestedSchema as never);
        const verdict = validate(result.data.content ?? {});
        if (!verdict.valid) {
          throw new MalformedInputResponse(
            pending.key,
            `the content does not match the requested schema: ${verdict.errorMessage}`,
          );
        }
      }
      return result.data;
    }
    case 'client.sample': {
      const withTools = (pending.request.params as { tools?: unknown }).tools !== undefined;
      const schema = withTools ? CreateMessageResultWithToolsSchema : CreateMessageResultSchema;
      const result = schema.safeParse(response);
      if (!result.success) throw malformed(pending.key, result.error);
      return result.data;
    }
    case 'client.roots': {
      const result = ListRootsResultSchema.safeParse(response);
      if (!result.success) throw malformed(pending.key, result.error);
      return result.data;
    }
  }
}

function malformed(key: string, error: z.ZodError): MalformedInputResponse {
  return new MalformedInputResponse(key, describeProblems(error));
}

/** Whether the request's capabilities cover an operation (`elicitation: {}` means forms, MCP 2025-11-25). */
function declares(
  capabilities: ClientCapabilities | undefined,
  operation: ClientOperation,
): boolean {
  switch (operation) {
    case 'client.elicit': {
      const elicitation = capabilities?.elicitation as Record<string, unknown> | undefined;
      if (elicitation === undefined) return false;
      return elicitation.form !== undefined || elicitation.url === undefined;
    }
    case 'client.sample':
      return capabilities?.sampling !== undefined;
    case 'client.roots':
      return capabilities?.roots !== undefined;
  }
}

function describeCapability(operation: ClientOperation): string {
  return {
    'client.elicit': 'form elicitation',
    'client.sample': 'sampling',
    'client.roots': 'roots',
  }[operation];
}
