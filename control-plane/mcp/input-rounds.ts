/**
 * The modern era's call runner (MCP 2026-07-28, multi round-trip requests):
 * a call whose code waits on nothing but its client answers
 * `input_required` with every pending request and a sealed `requestState`,
 * and its invocation stays parked (parked-calls.ts); the client's retry,
 * carrying the answers and that state, resumes it — on this replica, or on
 * the replica that holds it (the endpoint relays it there, park-relay.ts). The code never runs
 * again from the top: the same invocation goes on where it waited.
 *
 * A state is checked against the retry before anything else: opened (AEAD,
 * expiry), bound to this server, this caller, this tool (or prompt, or
 * resource) and these arguments, and for the round outstanding. Anything
 * else is -32602 and leaves the parked call untouched for its rightful
 * retry. A malformed answer is -32602 too, also before anything reaches the
 * code. A missing answer is asked again; answers to keys nobody asked are
 * ignored.
 */
import { ImplementationSchema, LoggingLevelSchema } from '@modelcontextprotocol/core';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  inputRequired,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type InputRequiredResult,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { CallingClientInfo, ClientOperation } from '../../src/protocol/index.js';
import { McphostError } from '../errors.js';
import { jsonBytesAtMost } from '../json-size.js';
import { MAX_CLIENT_DECLARATION_BYTES } from './client-declarations.js';
import type { CallingClient } from '../invocation/index.js';
import { callerKeyOf } from './caller-identity.js';
import type { CallIo, CallRunner, CodeCall } from './call-runner.js';
import {
  InputExchange,
  MalformedInputResponse,
  sendLogLine,
  sendProgress,
  type RoundOutlet,
} from './input-exchange.js';
import type { LogEntry, ProgressUpdate } from '../sandbox/index.js';
import type { ParkedCall, ParkedCalls } from './parked-calls.js';
import { scopeOf } from './request-scope.js';
import {
  argumentsDigest,
  matchesBinding,
  type RequestState,
  type RequestStateBinding,
  type RequestStateSealer,
} from './request-state.js';

export interface ModernCallRunnerOptions {
  subdomain: string;
  /** This replica's id, as request states name it. */
  replica: string;
  parked: ParkedCalls;
  sealer: RequestStateSealer;
  /** How long a state stays valid: the longest any invocation may run, in ms. */
  stateTtlMs: number;
}

export class ModernCallRunner implements CallRunner {
  readonly #options: ModernCallRunnerOptions;

  constructor(options: ModernCallRunnerOptions) {
    this.#options = options;
  }

  async run<T>(
    call: CodeCall,
    start: (io: CallIo) => Promise<T>,
  ): Promise<T | InputRequiredResult> {
    const { ctx } = call;
    if (call.inputRounds === false) return start(this.#onceIo(ctx));
    const scope = scopeOf(ctx);
    // Made only when a state is read or sealed: most calls never park, and the digest is a hash.
    const binding = (): RequestStateBinding => ({
      server: this.#options.subdomain,
      callerKey: callerKeyOf(scope.caller),
      target: call.target,
      argsDigest: argumentsDigest(call.args ?? {}),
    });
    const state = ctx.mcpReq.requestState<RequestState>();
    if (state !== undefined) return this.#resume<T>(state, binding(), ctx);

    return this.#firstRound(call, start, binding, scope.quotaKey);
  }

  /**
   * The first round of a call. Most code never asks its client for input, so
   * the exchange (input-exchange.ts) is opened only when the code first does
   * (FirstRound, below); the code's outcome is the answer until then.
   */
  #firstRound<T>(
    call: CodeCall,
    start: (io: CallIo) => Promise<T>,
    binding: () => RequestStateBinding,
    quotaKey: string,
  ): Promise<T | InputRequiredResult> {
    const round = new FirstRound<T>(call, (exchange, cancel) =>
      this.#round(exchange, binding, quotaKey, call.ctx, cancel, undefined),
    );
    return round.run(start);
  }

  /** A retry: the parked call it names takes its answers and runs its next round. */
  async #resume<T>(
    state: RequestState,
    binding: RequestStateBinding,
    ctx: ServerContext,
  ): Promise<T | InputRequiredResult> {
    if (!matchesBinding(state, binding)) throw invalidState('it was issued for another request');
    // A retry of a call parked elsewhere was sent there before it reached a handler (park-relay.ts).
    if (state.replica !== this.#options.replica)
      throw invalidState('its call is on no replica now');
    const claim = this.#options.parked.claim(state.parkId, state.round);
    if (!claim.ok) {
      throw invalidState(
        claim.reason === 'unknown'
          ? 'its call has ended'
          : claim.reason === 'in-use'
            ? 'a retry of its call is being served'
            : 'it was used already',
      );
    }
    const parked = claim.call;
    try {
      try {
        parked.exchange.answer(ctx.mcpReq.inputResponses);
      } catch (error) {
        if (error instanceof MalformedInputResponse) {
          throw new ProtocolError(ProtocolErrorCode.InvalidParams, error.message);
        }
        throw error;
      }
      this.#options.parked.spend(parked);
      return (await this.#round(
        parked.exchange,
        () => binding,
        parked.quotaKey,
        ctx,
        parked.cancel,
        parked,
      )) as T | InputRequiredResult;
    } finally {
      this.#options.parked.release(parked);
    }
  }

  /**
   * Serves one round of a call: its notifications on this request's
   * response, then its outcome, or its requests to the client with the state
   * of the next retry. The client closing this response cancels the call.
   */
  async #round(
    exchange: InputExchange<unknown>,
    bindingOf: () => RequestStateBinding,
    quotaKey: string,
    ctx: ServerContext,
    cancel: AbortController,
    parked: ParkedCall | undefined,
  ): Promise<unknown> {
    const onGone = () => cancel.abort();
    ctx.mcpReq.signal.addEventListener('abort', onGone, { once: true });
    if (ctx.mcpReq.signal.aborted) cancel.abort();
    let step;
    try {
      step = await exchange.next(outletOf(ctx));
    } finally {
      ctx.mcpReq.signal.removeEventListener('abort', onGone);
    }
    switch (step.kind) {
      case 'done':
        return step.value;
      case 'unsupported':
        cancel.abort();
        throw new MissingRequiredClientCapabilityError(
          { requiredCapabilities: step.requiredCapabilities },
          step.message,
        );
      case 'malformed':
        cancel.abort();
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, step.message);
      case 'input': {
        const binding = bindingOf();
        let call = parked;
        if (call === undefined) {
          try {
            call = this.#options.parked.park(
              {
                binding,
                quotaKey,
                exchange,
                cancel,
                deadline: Date.now() + this.#options.stateTtlMs,
              },
              exchange.ended,
            );
          } catch (error) {
            cancel.abort();
            throw error;
          }
        }
        const requestState = this.#options.sealer.seal(
          { ...binding, parkId: call.id, replica: this.#options.replica, round: call.round },
          this.#options.stateTtlMs,
        );
        return inputRequired({ inputRequests: step.inputRequests, requestState });
      }
    }
  }

  /** The io of code that may not wait on its client (`completion/complete`). */
  #onceIo(ctx: ServerContext): CallIo {
    const client: CallingClient = {
      info: clientInfoOf(ctx),
      request: (operation) =>
        Promise.reject(
          new McphostError(
            'ERR_CLIENT_UNSUPPORTED',
            `${operation.replace('client.', 'sdk.')} cannot ask the client here: this request has no input rounds (completion/complete)`,
          ),
        ),
    };
    return { client, onLog: () => undefined, signal: ctx.mcpReq.signal };
  }
}

/**
 * The first round of a modern call, as the code's io: its client, log sink
 * and cancellation. Until the code first asks its client, progress and log
 * lines go straight to this request's response, as the exchange would send
 * them, and the code's outcome is the answer. From the first request on, the
 * exchange's round (ModernCallRunner.#round) answers instead. A class, not a
 * set of closures: a call makes one object, not one function per closure.
 */
class FirstRound<T> implements CallIo, CallingClient {
  readonly info: CallingClientInfo;
  readonly signal: AbortSignal;
  readonly #ctx: ServerContext;
  readonly #logger: string;
  readonly #outlet: RoundOutlet;
  readonly #cancel = new AbortController();
  readonly #serveRound: (
    exchange: InputExchange<unknown>,
    cancel: AbortController,
  ) => Promise<unknown>;
  #exchange: InputExchange<T> | undefined;
  #outcome!: Promise<T>;
  #answer!: (value: T | InputRequiredResult | Promise<T | InputRequiredResult>) => void;

  constructor(
    call: CodeCall,
    serveRound: (exchange: InputExchange<unknown>, cancel: AbortController) => Promise<unknown>,
  ) {
    this.#ctx = call.ctx;
    this.#logger = call.logger;
    this.info = clientInfoOf(call.ctx);
    this.#outlet = outletOf(call.ctx);
    this.signal = this.#cancel.signal;
    this.#serveRound = serveRound;
    // Its members are handed on as plain functions (runContextOf, the invoker's hooks): bound once.
    this.onLog = this.onLog.bind(this);
    this.abort = this.abort.bind(this);
    this.progress = this.progress.bind(this);
    this.request = this.request.bind(this);
    this.waiting = this.waiting.bind(this);
    this.rounds = this.rounds.bind(this);
  }

  /** This io's client is itself. */
  get client(): CallingClient {
    return this;
  }

  /** Settled by the code's outcome, or, once the exchange opened, locked to its round's answer. */
  run(start: (io: CallIo) => Promise<T>): Promise<T | InputRequiredResult> {
    const gone = this.#ctx.mcpReq.signal;
    gone.addEventListener('abort', this.abort, { once: true });
    // A listener added to a signal already aborted never hears it.
    if (gone.aborted) this.abort();
    return new Promise<T | InputRequiredResult>((resolve, reject) => {
      this.#answer = resolve;
      this.#outcome = start(this);
      this.#outcome.then(resolve, reject);
    }).finally(() => gone.removeEventListener('abort', this.abort));
  }

  progress(update: ProgressUpdate): void {
    if (this.#exchange === undefined) sendProgress(this.#outlet, update);
    else this.#exchange.client.progress?.(update);
  }

  request(operation: ClientOperation, args: unknown, signal: AbortSignal): Promise<unknown> {
    return this.#opened().client.request(operation, args, signal);
  }

  waiting(): void {
    this.#exchange?.client.waiting?.();
  }

  rounds(): number {
    return this.#exchange?.client.rounds?.() ?? 0;
  }

  onLog(entry: LogEntry): void {
    if (this.#exchange === undefined) sendLogLine(this.#outlet, this.#logger, entry);
    else this.#exchange.log(entry);
  }

  /** The client closed this request's response: the call is cancelled. */
  abort(): void {
    this.#cancel.abort();
  }

  /** The exchange, opened at the code's first request to its client. */
  #opened(): InputExchange<T> {
    if (this.#exchange === undefined) {
      const exchange = new InputExchange<T>(
        this.info,
        this.#logger,
        this.#ctx.mcpReq.inputResponses,
      );
      this.#exchange = exchange;
      exchange.start(this.#outcome);
      this.#answer(
        this.#serveRound(exchange as InputExchange<unknown>, this.#cancel) as Promise<
          T | InputRequiredResult
        >,
      );
    }
    return this.#exchange;
  }
}

/**
 * The request's `_meta` envelope, as the SDK lifted and checked it (the
 * protocol layer refuses a request without its required keys): read by key.
 */
function envelopeOf(ctx: ServerContext): Record<string, unknown> {
  return (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
}

/** The response a round's notifications go to, with this request's progress token and log level. */
function outletOf(ctx: ServerContext): RoundOutlet {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  const logLevel = parsedWhenPresent(LoggingLevelSchema, envelopeOf(ctx)[LOG_LEVEL_META_KEY]);
  return {
    notify: (notification) => void ctx.mcpReq.notify(notification).catch(() => undefined),
    ...(progressToken === undefined ? {} : { progressToken }),
    ...(logLevel === undefined ? {} : { logLevel }),
  };
}

/** What the request's `_meta` says of its client, as `sdk.client` shows it. */
export function clientInfoOf(ctx: ServerContext): CallingClientInfo {
  const envelope = envelopeOf(ctx);
  const declared = envelope[CLIENT_CAPABILITIES_META_KEY];
  const capabilities =
    // Bounded where the request entered (client-declarations.ts); checked again as the value tool code reads.
    isPlainObject(declared) &&
    jsonBytesAtMost(declared, MAX_CLIENT_DECLARATION_BYTES) <= MAX_CLIENT_DECLARATION_BYTES
      ? declared
      : {};
  const info = parsedWhenPresent(ImplementationSchema, envelope[CLIENT_INFO_META_KEY]);
  const version = envelope[PROTOCOL_VERSION_META_KEY];
  return {
    protocolVersion: typeof version === 'string' ? version : 'unknown',
    era: 'modern',
    capabilities,
    ...(info === undefined ? {} : { info }),
  };
}

/**
 * `value` as `schema` reads it; undefined when absent or not of it. An absent
 * optional key is the common case, and a failed zod parse builds its issues:
 * it is not asked.
 */
function parsedWhenPresent<T>(
  schema: { safeParse(value: unknown): { success: true; data: T } | { success: false } },
  value: unknown,
): T | undefined {
  if (value === undefined) return undefined;
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function invalidState(why: string): ProtocolError {
  return new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    `Invalid or expired requestState: ${why}`,
    {
      reason: 'invalid_request_state',
    },
  );
}
