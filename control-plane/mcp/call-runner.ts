/**
 * How a handler runs code that may ask its client for input — a tool call, a
 * prompt or a resource rendered by code — in the era of the server instance
 * serving it. The handler says what to start; the runner gives it the client
 * (`sdk.elicit`, `sdk.sample`, `sdk.roots`, `sdk.progress`, `sdk.client`), the
 * log sink and the cancellation signal, and answers with the code's outcome
 * or, in the modern era, with an `input_required` result while the code
 * waits on its client (input-rounds.ts). Handlers are written once for both
 * eras: this is the one place where they differ.
 */
import type { InputRequiredResult, ServerContext } from '@modelcontextprotocol/server';
import type { CallingClient, EntryRunContext } from '../invocation/index.js';
import type { LogEntry } from '../sandbox/index.js';
import type { RequestScope } from './request-scope.js';
import type { ParkedTarget } from './request-state.js';

/** One run of code for a request. */
export interface CodeCall {
  ctx: ServerContext;
  /** What runs (a retry must name the same). */
  target: ParkedTarget;
  /** The request's arguments, as the client sent them (a retry must repeat them). */
  args: unknown;
  /** The name log lines carry (the tool, prompt or resource). */
  logger: string;
  /**
   * False for a request whose result cannot be `input_required`
   * (`completion/complete`): in the modern era its code's requests to the
   * client then fail at once with ERR_CLIENT_UNSUPPORTED. Default true.
   */
  inputRounds?: boolean;
}

/** What the code's run is given. */
export interface CallIo {
  client: CallingClient;
  onLog(entry: LogEntry): void;
  /** Aborted when the call is cancelled (the client went away, the session ended). */
  signal: AbortSignal;
}

/** Who runs the code (the request's scope) and how it reaches its client (the run's io). */
export function runContextOf(scope: RequestScope, io: CallIo): EntryRunContext {
  return {
    caller: scope.caller,
    requestId: scope.requestId,
    clientAddress: scope.clientAddress,
    signal: io.signal,
    client: io.client,
    onLog: io.onLog,
  };
}

export interface CallRunner {
  run<T>(call: CodeCall, start: (io: CallIo) => Promise<T>): Promise<T | InputRequiredResult>;
}

/** True for the answer of a run that waits on its client. */
export function isInputRequired(value: unknown): value is InputRequiredResult {
  return (
    value !== null &&
    typeof value === 'object' &&
    (value as { resultType?: unknown }).resultType === 'input_required'
  );
}
