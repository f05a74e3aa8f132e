/**
 * The shapes of one tool invocation as the rest of the control plane sees it:
 * what to run (`ToolRuntime`), how the caller takes part (`InvokeHooks`) and
 * what comes back (`InvocationOutcome`, never an exception for tool failures).
 */
import type { CallOperation, LogLevel } from '../../src/protocol/index.js';
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
  /** Resolved limits (see `resolveLimits`). */
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

/** Context handed to a brokered call. */
export interface CallContext {
  /** Aborted when the invocation ends (result, fault, timeout or cancellation). */
  signal: AbortSignal;
}

/** How the caller takes part in an invocation. */
export interface InvokeHooks {
  /** Declared inputs, already validated. */
  params: Record<string, unknown>;
  /** Receives each console line as it arrives. */
  onLog?(entry: LogEntry): void;
  /** Performs a brokered `sdk.http` / `sdk.db` request; a thrown McphostError travels back with its code. */
  onCall(operation: CallOperation, args: unknown, context: CallContext): Promise<unknown>;
  /** Cancels the invocation (queued or running) → ERR_CANCELLED. */
  signal?: AbortSignal;
}

/** A failure as reported to the caller. */
export interface OutcomeError {
  code: McphostErrorCode;
  message: string;
  line?: number;
  column?: number;
}

/** What an invocation came to; `ok` false carries `error`. */
export interface InvocationOutcome {
  ok: boolean;
  value?: unknown;
  error?: OutcomeError;
  logs: LogEntry[];
  /** Time spent running in a container, in ms. */
  durationMs: number;
  /** Time spent waiting for a container, in ms. */
  queueMs: number;
  /** Container that ran it, when one was leased. */
  instanceId?: string;
}
