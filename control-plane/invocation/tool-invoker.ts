/**
 * One tool invocation from any entry point (an MCP `tools/call`, the admin
 * API's test run): cached configuration in, sandbox run, brokered calls,
 * secrets redacted, the invocation log written behind. Nothing here touches
 * the store: configuration comes from the in-memory cache.
 *
 * The log keeps a row for each run of code in a container. A call refused
 * before that (arguments that do not match, no container to be had, and the
 * refusals other layers report through `countRefusal`) costs its caller
 * nothing, so it is counted per server, code and time bucket instead: a
 * flood of them cannot push anyone's history out of the log.
 */
import { randomUUID } from 'node:crypto';
import type { BrokerOperation } from '../../src/protocol/index.js';
import { errorSpecOf, isMcphostError, type McphostErrorCode } from '../errors.js';
import type { Logger } from '../logger.js';
import { InvocationLimitsSchema, resolveLimits, type InvocationLimits } from '../sandbox/index.js';
import type {
  InvocationOutcome,
  InvocationVerdict,
  LogEntry,
  ToolRuntime,
  InvokeHooks,
} from '../sandbox/index.js';
import type { BrokerCallContext } from '../broker/index.js';
import {
  DEFAULT_SERVER_TENANCY,
  type CodeKind,
  type ServerTenancy,
  type ToolDefinition,
  type ToolLimits,
} from '../store/index.js';
import { checkArguments } from './arguments.js';
import { checkOutput } from './tool-output.js';
import { SchemaChecker, type SchemaCheckSettings } from './schema-checker.js';
import { askClient, isClientOperation, type CallingClient } from './calling-client.js';
import { createRedactor } from './redact.js';
import { describeProblems } from '../validation-problems.js';
import { InFlight } from '../in-flight.js';
import { recordedCaller, type Caller } from '../identity/index.js';
import { callerView } from './caller-view.js';

/**
 * Code as the invoker runs it: a tool from the configuration cache, or the
 * code of a prompt, resource template or completion in a tool's shape
 * (entry-code.ts), marked by `kind`.
 */
export interface InvocableTool extends ToolDefinition {
  subdomain: string;
  name: string;
  version: number;
  /** Absent for a tool. */
  kind?: Exclude<CodeKind, 'tool'>;
}

/** The parts of a server's settings an invocation depends on (from the configuration cache). */
export interface ServerRuntimeSettings extends Pick<
  ServerTenancy,
  'isolation' | 'runtime' | 'egressAllow' | 'callerClaims'
> {
  /** The server's own limits (between the tool's and the defaults). */
  limits: ToolLimits;
}

/** The narrow ports the invoker depends on; the real classes satisfy them. */
export interface InvokerPorts {
  /** Runs the tool; every line of the outcome's `logs` reaches `hooks.onLog` first (kept from there). */
  sandbox: { invoke(runtime: ToolRuntime, hooks: InvokeHooks): Promise<InvocationOutcome> };
  broker: {
    handle(operation: BrokerOperation, args: unknown, context: BrokerCallContext): Promise<unknown>;
    /** The invocation is over: its database connections are reset and given back. */
    endInvocation(invocation: string): Promise<void>;
  };
  secrets(subdomain: string): Readonly<Record<string, string>>;
  /** The server's settings; undefined when it was deleted meanwhile (defaults apply). */
  server(subdomain: string): ServerRuntimeSettings | undefined;
  /** The invocation log (written behind; neither method blocks). */
  log: {
    append(entry: InvocationLogEntry): void;
    /** One call of an existing server refused with a registry code before any code ran. */
    countRefusal(server: string, code: string): void;
  };
  metrics: {
    invocation(
      server: string,
      tool: string,
      kind: CodeKind,
      outcome: string,
      durationMs: number,
      queueMs: number,
    ): void;
    brokerRequest(operation: string, outcome: string): void;
    /** One call refused before any code ran, as the invocation log counts it. */
    refusal(server: string, code: string): void;
  };
  /** Service log lines (never a secret value: they are redacted first). */
  logger: Logger;
}

export interface InvocationLogEntry {
  id: string;
  at: string;
  server: string;
  kind: CodeKind;
  tool: string;
  version: number;
  durationMs: number;
  ok: boolean;
  errorCode: string | null;
  errorMessage: string | null;
  logs: LogEntry[];
  caller: Caller;
  requestId: string;
  /** The client's address, when known. */
  client: string | null;
  /** The MCP era of the request; null for a test run. */
  era: 'legacy' | 'modern' | null;
  /** Times the call waited on its client for input. */
  inputRounds: number;
}

export interface InvokeRequest {
  tool: InvocableTool;
  /** Arguments as the client sent them; checked against the declarations here. */
  args: Record<string, unknown> | undefined;
  caller: Caller;
  requestId: string;
  /** The client's address (see http/client-address.ts), for the invocation log. */
  clientAddress?: string;
  signal?: AbortSignal;
  /** Each console line, redacted, while the call runs. */
  onLog?: (entry: LogEntry) => void;
  /** The MCP client that made the call; absent in an admin test run, which has none. */
  client?: CallingClient;
}

/** The tool's verdict (secrets redacted), its console lines and the version that ran. */
export type InvokeResult = InvocationVerdict & {
  logs: LogEntry[];
  /** Time spent running in a container, in ms. */
  durationMs: number;
  version: number;
};

export class ToolInvoker {
  readonly #ports: InvokerPorts;
  readonly #defaults: InvocationLimits;
  readonly #schemas: SchemaChecker;
  readonly #inFlight = new InFlight();

  /**
   * `defaults`: the service-wide limits from the configuration; `schemaChecks`:
   * how inputSchema/outputSchema checks run (TOOL_SCHEMA_CHECK_TIMEOUT_MS).
   * Invalid ones are a TypeError.
   */
  constructor(ports: InvokerPorts, defaults: InvocationLimits, schemaChecks: SchemaCheckSettings) {
    // Tools' and servers' own limits are validated when saved: with these, every merge is valid.
    const checked = InvocationLimitsSchema.safeParse(defaults);
    if (!checked.success) {
      throw new TypeError(
        `ToolInvoker: invalid default limits: ${describeProblems(checked.error)}`,
      );
    }
    this.#ports = ports;
    this.#defaults = checked.data;
    this.#schemas = new SchemaChecker(schemaChecks);
  }

  /** Stops the schema-check workers (after `whenIdle`, at shutdown); checks still waiting fail. */
  close(): Promise<void> {
    return this.#schemas.close();
  }

  /** Invocations running now. */
  get active(): number {
    return this.#inFlight.count;
  }

  /** Resolves when no invocation runs, or after `timeoutMs` (shutdown's grace period). */
  whenIdle(timeoutMs: number): Promise<void> {
    return this.#inFlight.whenIdle(timeoutMs);
  }

  /**
   * Counts a call to `server` (one that exists) refused with `code` before
   * any code ran — an unknown tool, a refused origin or credential, a caller
   * past its rate — per server, code and time bucket beside the invocation
   * log, which keeps no row of it.
   */
  countRefusal(server: string, code: McphostErrorCode): void {
    this.#ports.log.countRefusal(server, code);
    this.#ports.metrics.refusal(server, code);
  }

  /** Runs a tool; tool failures are results (`ok: false`), never exceptions. */
  async invoke(request: InvokeRequest): Promise<InvokeResult> {
    return this.#inFlight.run(() => this.#run(request));
  }

  async #run(request: InvokeRequest): Promise<InvokeResult> {
    const { tool } = request;
    const started = Date.now();
    const invocationId = randomUUID();
    const checked = await checkArguments(tool, request.args, this.#schemas);
    if (!checked.ok) {
      const error = { code: 'ERR_INVALID_ARGUMENT' as const, message: checked.message };
      return this.#finish(
        request,
        { ok: false, error, logs: [], durationMs: 0, queueMs: 0 },
        started,
        invocationId,
      );
    }
    const env = pickSecrets(this.#ports.secrets(tool.subdomain), tool.secrets);
    const redact = createRedactor(env);
    const server = this.#ports.server(tool.subdomain);
    // The code of a prompt, resource or completion belongs to no tool: it runs
    // in the server's shared containers (a fresh context each time, as a tool's),
    // named apart from tools (`prompt:greet`, which no tool name can be).
    const runtime: ToolRuntime = {
      server: tool.subdomain,
      tool: tool.kind === undefined ? tool.name : `${tool.kind}:${tool.name}`,
      isolation: tool.kind === undefined ? (server?.isolation ?? 'server') : 'server',
      runtime: server?.runtime ?? 'runc',
      code: tool.code,
      env,
      limits: resolveLimits(tool.limits, server?.limits, this.#defaults),
      strict: tool.kind === undefined && tool.strict,
    };
    const tenant = {
      server: tool.subdomain,
      invocation: invocationId,
      egressAllow: server?.egressAllow ?? [],
    };
    // Each kept line is redacted once, as it arrives: the live listener and the log get that copy.
    const logs: LogEntry[] = [];
    const onLog = request.onLog;
    let outcome: InvocationOutcome;
    try {
      outcome = await this.#ports.sandbox.invoke(runtime, {
        params: checked.params,
        signal: request.signal,
        onLog: (entry) => {
          const shown = { ...entry, text: redact(entry.text) };
          logs.push(shown);
          onLog?.(shown);
        },
        onCall: (operation, args, context) =>
          isClientOperation(operation)
            ? askClient(request.client, operation, args, context.signal)
            : this.#brokered(request.requestId, operation, args, { ...context, ...tenant }),
        onProgress: request.client?.progress?.bind(request.client),
        onCloseStream: request.client?.closeStream?.bind(request.client),
        onWaiting: request.client?.waiting?.bind(request.client),
        ...(request.client?.info === undefined ? {} : { client: request.client.info }),
        caller: callerView(
          request.caller,
          server?.callerClaims ?? DEFAULT_SERVER_TENANCY.callerClaims,
        ),
      });
    } finally {
      // Whatever the outcome (an open transaction included) nothing the invocation
      // did on a database connection survives it; the reset runs behind the answer.
      void this.#ports.broker.endInvocation(invocationId);
    }
    const redacted: InvocationOutcome = outcome.ok
      ? { ...outcome, logs }
      : { ...outcome, logs, error: { ...outcome.error, message: redact(outcome.error.message) } };
    const checkedOutcome = await checkOutput(
      tool,
      redacted,
      this.#schemas,
      runtime.limits.maxResultBytes,
    );
    return this.#finish(request, checkedOutcome, started, invocationId);
  }

  /** One sdk.http / sdk.db request, counted and logged by outcome. */
  async #brokered(
    requestId: string,
    operation: BrokerOperation,
    args: unknown,
    context: BrokerCallContext,
  ): Promise<unknown> {
    try {
      const value = await this.#ports.broker.handle(operation, args, context);
      this.#ports.metrics.brokerRequest(operation, 'ok');
      return value;
    } catch (error) {
      const code = isMcphostError(error) ? error.code : 'ERR_INTERNAL';
      this.#ports.metrics.brokerRequest(operation, code);
      this.#ports.logger.debug({ requestId, operation, code }, 'brokered request refused');
      throw error;
    }
  }

  #finish(
    request: InvokeRequest,
    outcome: InvocationOutcome,
    started: number,
    invocationId: string,
  ): InvokeResult {
    const { tool } = request;
    const outcomeLabel = outcome.ok ? 'ok' : outcome.error.code;
    const kind = tool.kind ?? 'tool';
    this.#ports.metrics.invocation(
      tool.subdomain,
      tool.name,
      kind,
      outcomeLabel,
      outcome.durationMs,
      outcome.queueMs,
    );
    const fields = {
      requestId: request.requestId,
      server: tool.subdomain,
      kind,
      tool: tool.name,
      version: tool.version,
      outcome: outcomeLabel,
      durationMs: outcome.durationMs,
      queueMs: outcome.queueMs,
      container: outcome.instanceId,
    };
    if (!outcome.ok && errorSpecOf(outcome.error.code).infrastructure)
      this.#ports.logger.warn(
        { ...fields, error: outcome.error.message },
        'invocation failed in the sandbox',
      );
    else this.#ports.logger.debug(fields, 'invocation finished');
    // No container touched (arguments refused, none to be had, cancelled while
    // waiting): nothing ran and nothing was logged, so a count says all a row would.
    if (!outcome.ok && outcome.instanceId === undefined) {
      this.countRefusal(tool.subdomain, outcome.error.code);
    } else {
      this.#ports.log.append({
        id: invocationId,
        at: new Date(started).toISOString(),
        server: tool.subdomain,
        kind,
        tool: tool.name,
        version: tool.version,
        durationMs: outcome.durationMs,
        ok: outcome.ok,
        errorCode: outcome.ok ? null : outcome.error.code,
        errorMessage: outcome.ok ? null : outcome.error.message,
        logs: outcome.logs,
        // Who, never what their token said.
        caller: recordedCaller(request.caller),
        requestId: request.requestId,
        client: request.clientAddress ?? null,
        era: request.client?.info?.era ?? null,
        inputRounds: request.client?.rounds?.() ?? 0,
      });
    }
    const measured = { logs: outcome.logs, durationMs: outcome.durationMs, version: tool.version };
    if (!outcome.ok) return { ok: false, error: outcome.error, ...measured };
    return outcome.content === undefined
      ? { ok: true, value: outcome.value, ...measured }
      : { ok: true, value: outcome.value, content: outcome.content, ...measured };
  }
}

/** Only the secrets a tool lists; a listed secret that is not set is absent from `env`. */
function pickSecrets(
  all: Readonly<Record<string, string>>,
  names: readonly string[],
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of names) {
    const value = all[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}
