/**
 * The MCP client that made a call, as tool code reaches it: `sdk.progress`,
 * `sdk.closeStream`, `sdk.elicit`, `sdk.sample` and `sdk.roots` travel to it
 * within the call, and `sdk.client` shows what it declared. The MCP layer implements it (mcp/calling-client.ts); an admin test run
 * has no client, and the tool gets a clear error instead (or, for progress
 * and closeStream, nothing happens).
 */
import {
  CLIENT_OPERATIONS,
  type CallingClientInfo,
  type CallOperation,
  type ClientOperation,
} from '../../src/protocol/index.js';
import { McphostError } from '../errors.js';
import { describeProblems } from '../validation-problems.js';
import type { ProgressUpdate } from '../sandbox/index.js';

export interface CallingClient {
  /** What the client declared (`sdk.client`): protocol version, era, capabilities, name. */
  info?: CallingClientInfo;
  /** Present when the client sent a progress token; otherwise `sdk.progress` sends nothing. */
  progress?(update: ProgressUpdate): void;
  /**
   * `sdk.closeStream()`: ends the HTTP response carrying the call now while
   * the call goes on, when the client can resume it (MCP 2025-11-25, SEP-1699:
   * an SSE response primed with an event id and `retry`); it then reconnects
   * with `Last-Event-ID` and receives the rest, the result included. Does
   * nothing for a client that cannot resume. Called at most once per call.
   */
  closeStream?(): void;
  /**
   * Sends an elicitation or sampling request and resolves with the client's
   * answer; a McphostError (ERR_CLIENT_UNSUPPORTED, ERR_CLIENT_FAILED,
   * ERR_INVALID_ARGUMENT) otherwise. `signal` ends the wait with the invocation.
   */
  request(operation: ClientOperation, args: unknown, signal: AbortSignal): Promise<unknown>;
  /**
   * Told when the code waits on nothing but its requests to this client (see
   * InvokeHooks.onWaiting): a modern-era client is then asked for all of them
   * at once. The legacy era's requests are already on their way: it has none.
   */
  waiting?(): void;
  /** Times the call has waited on this client so far (the invocation log's `inputRounds`). */
  rounds?(): number;
}

/** The sdk function behind each client operation, for messages. */
export const SDK_NAME_OF: Readonly<Record<ClientOperation, string>> = {
  'client.elicit': 'sdk.elicit',
  'client.sample': 'sdk.sample',
  'client.roots': 'sdk.roots',
};

export function isClientOperation(operation: CallOperation): operation is ClientOperation {
  return Object.hasOwn(CLIENT_OPERATIONS, operation);
}

/** A request to the calling client; an admin test run has none to ask. */
export function askClient(
  client: CallingClient | undefined,
  operation: ClientOperation,
  args: unknown,
  signal: AbortSignal,
): Promise<unknown> {
  if (client === undefined) {
    return Promise.reject(
      new McphostError(
        'ERR_CLIENT_UNSUPPORTED',
        `${SDK_NAME_OF[operation]} is not available in a test run: it asks the MCP client that made the call, and a test run has none`,
      ),
    );
  }
  // The outer shape first, for a message in the tool's terms; the MCP layer
  // checks the rest against the request's own schema.
  const parsed = CLIENT_OPERATIONS[operation].safeParse(args);
  if (!parsed.success) {
    return Promise.reject(
      new McphostError(
        'ERR_INVALID_ARGUMENT',
        `${SDK_NAME_OF[operation]}: ${describeProblems(parsed.error)}`,
      ),
    );
  }
  return client.request(operation, args, signal);
}
