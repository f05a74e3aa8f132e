/**
 * The shapes of one tool invocation as the rest of the control plane sees it:
 * what to run (`ToolRuntime`), how the caller takes part (`InvokeHooks`) and
 * what comes back (`InvocationVerdict` and, beside it, what the sandbox measured).
 */
import type {
  CallerView,
  CallingClientInfo,
  CallOperation,
  ContentBlock,
  LogLevel,
} from '../../src/protocol/index.js';
import type { McphostErrorCode } from '../errors.js';
import type { InvocationLimits } from './limits.js';

/** Everything needed to run one tool; built by the caller from its cached configuration. */
export interface ToolRuntime {
  /** The server (tenant) the tool belongs to: containers never cross servers. */
  server: string;
  /** The tool's name (its own pool under `isolation: "tool"`, and for statistics). */
  tool: string;
  /** `server`: the server's tools share containers; `tool`: each tool has its own. */
  isolation: 'server' | 'tool';
  /** OCI runtime of the container: runc, or gVisor's runsc. */
  runtime: 'runc' | 'runsc';
  /** Body of an async function. */
  code: string;
  /** Only the secrets the tool lists, by name. */
  env: Record<string, string>;
  /** Resolved limits (see `resolveLimits`), each part validated where it entered: trusted here. */
  limits: InvocationLimits;
  /** Single-use containers: each one serves one invocation and is retired. */
  strict: boolean;
}

/** One captured console line. */
export interface LogEntry {
  level: LogLevel;
  text: string;
  /** Milliseconds since the invocation started running in its container. */
  at: number;
}

/** One `sdk.progress(...)` of the tool, as the MCP progress notification carries it. */
export interface ProgressUpdate {
  progress: number;
  total?: number;
  message?: string;
}

/** Context handed to a brokered call. */
export interface CallContext {
  /** Aborted when the invocation ends (result, fault, timeout or cancellation). */
  signal: AbortSignal;
}

/** How the caller takes part in an invocation. */
export interface InvokeHooks {
  /** Declared inputs, already validated. */
  params: Record<string, unknown>;
  /** Receives each console line kept (the entries the outcome's `logs` holds), as it arrives. */
  onLog?(entry: LogEntry): void;
  /**
   * Performs a call of the tool: a brokered `sdk.http` / `sdk.db` request, or
   * a request to the calling client (`sdk.elicit`, `sdk.sample`); a thrown
   * McphostError travels back with its code.
   */
  onCall(operation: CallOperation, args: unknown, context: CallContext): Promise<unknown>;
  /**
   * Receives each `sdk.progress(...)`. Present only when the caller asked for
   * progress: without it the harness sends none.
   */
  onProgress?(update: ProgressUpdate): void;
  /**
   * Receives `sdk.closeStream()` (at most once per invocation): end the
   * response carrying the call now, the call going on. Absent when the caller
   * has no response to end (an admin test run).
   */
  onCloseStream?(): void;
  /**
   * Told each time the tool comes to wait on nothing but its requests to the
   * calling client (after `onCall` of each of them): a modern-era call then
   * answers `input_required` while the invocation stays parked.
   */
  onWaiting?(): void;
  /** What the calling MCP client declared, for `sdk.client`; absent in a test run. */
  client?: CallingClientInfo;
  /** Who made the call, for `sdk.caller`. */
  caller?: CallerView;
  /** Cancels the invocation (queued or running) → ERR_CANCELLED. */
  signal?: AbortSignal;
}

/** A failure as reported to the caller: a stable code, a message, and where in the tool's code. */
export interface OutcomeError {
  code: McphostErrorCode;
  message: string;
  /** 1-based position in the tool's code, for syntax and runtime errors. */
  line?: number;
  column?: number;
}

/**
 * The one shape of "what the tool came to", from the runner connection to the
 * MCP result: its value, or its failure. `ok` says which; the other field is
 * absent (typed so that reading it without narrowing gives `undefined`).
 */
export type InvocationVerdict =
  | { ok: true; value: unknown; content?: ContentBlock[]; error?: undefined }
  | { ok: false; error: OutcomeError; value?: undefined; content?: undefined };

/** A verdict with what the sandbox saw beside it; never an exception for tool failures. */
export type InvocationOutcome = InvocationVerdict & {
  /** Console lines kept within the log budget. */
  logs: LogEntry[];
  /** Time spent running in a container, in ms. */
  durationMs: number;
  /** Time spent waiting for a container, in ms. */
  queueMs: number;
  /** Container that ran it, when one was leased. */
  instanceId?: string;
};
