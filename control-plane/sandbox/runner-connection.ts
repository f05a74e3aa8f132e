/**
 * One stdio conversation with one harness: waits for `ready`, then runs
 * invocations one at a time — streams logs, answers brokered calls, returns
 * the result. Anything unexpected (a bad line, an exit, a missed deadline, a
 * cancellation) breaks the connection for good and kills the instance: a
 * faulted connection is never reused.
 */
import { randomUUID } from 'node:crypto';
import {
  DEFAULT_MAX_LINE_BYTES,
  ERROR_CODES,
  HarnessMessage,
  LineReader,
  encodeMessage,
  type CallMessage,
  type ErrorCode,
  type ResultMessage,
  type WireError,
  isCallFailureCode,
} from '../../src/protocol/index.js';
import { McphostError, errorSpecOf, isMcphostError } from '../errors.js';
import type { SandboxExit, SandboxInstance } from './driver.js';
import type { InvocationVerdict, InvokeHooks } from './invocation.js';
import type { InvocationLimits } from './limits.js';
import { asUnavailable, cancelled, sandboxUnavailable, shuttingDown } from './sandbox-errors.js';
import { faultFromExit, timeoutError } from './faults.js';

/** The largest line the harness reads (its LineReader's default): replies must fit. */
const HARNESS_MAX_LINE_BYTES = DEFAULT_MAX_LINE_BYTES;

/**
 * Options of a connection, all required: the values come from the pool
 * settings (whose defaults are the configuration table's), never from here.
 * Validated once, at construction.
 */
export interface RunnerConnectionOptions {
  /** Largest stdout line accepted, in bytes. */
  maxLineBytes: number;
  /** How long the harness may take to say `ready`, in ms. */
  startupTimeoutMs: number;
  /** Time past an invocation's own limit before the container is killed, in ms. */
  timeoutGraceMs: number;
  /**
   * sdk calls one invocation may have in flight. Each holds a connection (a
   * socket, a database session), so this bounds what one tool can open at
   * once: with the container budget, the whole host's.
   */
  maxConcurrentCalls: number;
  /** Milliseconds clock (the pool's). */
  now: () => number;
}

/** What to run. */
export interface ConnectionInvokeRequest {
  code: string;
  params: Record<string, unknown>;
  env: Record<string, string>;
  limits: InvocationLimits;
}

/**
 * How the caller takes part while it runs: the invocation's own hooks (a log
 * entry's `at` is ms since the invocation was sent; a throwing `onLog` is ignored).
 */
export type ConnectionInvokeHooks = Omit<InvokeHooks, 'params'>;

type ConnectionState = 'starting' | 'idle' | 'busy' | 'broken';

interface ActiveInvocation {
  id: string;
  request: ConnectionInvokeRequest;
  hooks: ConnectionInvokeHooks;
  sentAt: number;
  calls: Map<number, AbortController>;
  /** Codes of the failed replies sent: the only sdk codes its result may claim. */
  failedReplyCodes: Set<string>;
  deadline: NodeJS.Timeout;
  resolve(verdict: InvocationVerdict): void;
  reject(error: McphostError): void;
  detachAbort(): void;
}

const WIRE_CODES: ReadonlySet<string> = new Set(ERROR_CODES);

/** The control plane's end of one harness's stdio. */
export class RunnerConnection {
  readonly instance: SandboxInstance;
  /** Resolves at `ready`; rejects with ERR_SANDBOX_UNAVAILABLE if it never comes. */
  readonly ready: Promise<void>;
  readonly #reader: LineReader<HarnessMessage>;
  readonly #timeoutGraceMs: number;
  readonly #now: () => number;
  readonly #brokenListeners: Array<(error: McphostError) => void> = [];
  #state: ConnectionState = 'starting';
  #heapUsedBytes = 0;
  readonly #maxConcurrentCalls: number;
  #active: ActiveInvocation | undefined;
  #brokenBy: McphostError | undefined;
  #settleReady: { resolve(): void; reject(error: McphostError): void; timer: NodeJS.Timeout };

  constructor(instance: SandboxInstance, options: RunnerConnectionOptions) {
    const { startupTimeoutMs, timeoutGraceMs, maxConcurrentCalls, now } = options;
    if (!(Number.isInteger(maxConcurrentCalls) && maxConcurrentCalls >= 1))
      throw new TypeError('RunnerConnection: maxConcurrentCalls must be an integer >= 1');
    if (!(startupTimeoutMs > 0))
      throw new TypeError('RunnerConnection: startupTimeoutMs must be > 0');
    if (!(timeoutGraceMs >= 0))
      throw new TypeError('RunnerConnection: timeoutGraceMs must be >= 0');
    if (typeof now !== 'function') throw new TypeError('RunnerConnection: now must be a function');
    this.instance = instance;
    this.#maxConcurrentCalls = maxConcurrentCalls;
    this.#timeoutGraceMs = timeoutGraceMs;
    this.#now = now;
    this.#reader = new LineReader({
      schema: HarnessMessage,
      maxLineBytes: options.maxLineBytes,
      onMessage: (message) => this.#onMessage(message),
      onFault: (fault) =>
        this.#break(
          new McphostError('ERR_PROTOCOL', `the runner broke the protocol: ${fault.message}`),
        ),
    });
    let settle!: { resolve(): void; reject(error: McphostError): void };
    this.ready = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    this.ready.catch(() => undefined); // observed by whoever awaits it; never unhandled
    const timer = setTimeout(() => {
      this.#break(
        sandboxUnavailable(`the runner did not become ready within ${startupTimeoutMs} ms`),
      );
    }, startupTimeoutMs);
    this.#settleReady = { ...settle, timer };
    instance.onStdout((chunk) => this.#reader.push(chunk));
    void instance.exited.then((exit) => this.#onExit(exit));
  }

  /** V8 heap in use after the last invocation, in bytes, as the harness reported it. */
  get heapUsedBytes(): number {
    return this.#heapUsedBytes;
  }

  /** True while the connection can take an invocation (ready, idle, never faulted). */
  get usable(): boolean {
    return this.#state === 'idle';
  }

  /** Called once, when the connection breaks for any reason (also while idle). */
  onBroken(listener: (error: McphostError) => void): void {
    if (this.#brokenBy) listener(this.#brokenBy);
    else this.#brokenListeners.push(listener);
  }

  /** Runs one invocation; rejects with a McphostError on any fault (the connection is then broken). */
  invoke(
    request: ConnectionInvokeRequest,
    hooks: ConnectionInvokeHooks,
  ): Promise<InvocationVerdict> {
    if (this.#state !== 'idle') {
      if (this.#brokenBy) return Promise.reject(this.#brokenBy);
      throw new TypeError(`RunnerConnection.invoke: connection is ${this.#state}, not idle`);
    }
    if (hooks.signal?.aborted) return Promise.reject(cancelled());
    return new Promise<InvocationVerdict>((resolve, reject) => {
      const id = randomUUID();
      const { timeoutMs } = request.limits;
      const onAbort = (): void => {
        this.#send({ type: 'cancel', invocation: id });
        this.#break(cancelled());
      };
      hooks.signal?.addEventListener('abort', onAbort, { once: true });
      this.#active = {
        id,
        request,
        hooks,
        sentAt: this.#now(),
        calls: new Map(),
        failedReplyCodes: new Set(),
        deadline: setTimeout(
          () => this.#break(timeoutError(timeoutMs)),
          timeoutMs + this.#timeoutGraceMs,
        ),
        resolve,
        reject,
        detachAbort: () => hooks.signal?.removeEventListener('abort', onAbort),
      };
      this.#state = 'busy';
      this.#send(
        {
          type: 'invoke',
          invocation: id,
          code: request.code,
          params: request.params,
          env: request.env,
          timeoutMs,
          progress: hooks.onProgress !== undefined,
          ...(hooks.client !== undefined && { client: hooks.client }),
          ...(hooks.caller !== undefined && { caller: hooks.caller }),
          limits: {
            maxResultBytes: request.limits.maxResultBytes,
            maxLogBytes: request.limits.maxLogBytes,
            maxLogEntries: request.limits.maxLogEntries,
          },
        },
        true,
      );
    });
  }

  /** Breaks the connection (if not yet) and kills the instance; resolves when it is gone. */
  async close(): Promise<void> {
    this.#break(shuttingDown('the runner'));
    await this.instance.kill().catch(() => undefined);
  }

  #onMessage(message: HarnessMessage): void {
    if (message.type === 'ready') {
      if (this.#state !== 'starting') return this.#protocolFault('a second "ready"');
      clearTimeout(this.#settleReady.timer);
      this.#state = 'idle';
      this.#settleReady.resolve();
      return;
    }
    const active = this.#active;
    if (!active) return this.#protocolFault(`"${message.type}" while no invocation runs`);
    if (message.invocation !== active.id) {
      return this.#protocolFault(`"${message.type}" for another invocation`);
    }
    if (message.type === 'log') {
      const { level, text } = message;
      try {
        active.hooks.onLog?.({ level, text, at: this.#now() - active.sentAt });
      } catch {
        // A failing log sink must not take the invocation down (the one guard on the way).
      }
    } else if (message.type === 'progress') {
      const { progress, total, message: text } = message;
      try {
        active.hooks.onProgress?.({ progress, total, message: text });
      } catch {
        // Like a log sink: a failing listener must not take the invocation down.
      }
    } else if (message.type === 'disconnect') {
      try {
        active.hooks.onCloseStream?.();
      } catch {
        // Advisory like progress: a failing listener must not take the invocation down.
      }
    } else if (message.type === 'waiting') {
      // After the calls it follows: each call's onCall runs in a microtask queued before this one.
      void Promise.resolve().then(() => {
        if (this.#active !== active) return;
        try {
          active.hooks.onWaiting?.();
        } catch {
          // Advisory like progress: a failing listener must not take the invocation down.
        }
      });
    } else if (message.type === 'call') {
      this.#answerCall(active, message);
    } else {
      this.#finish(active, message);
    }
  }

  #answerCall(active: ActiveInvocation, message: CallMessage): void {
    if (active.calls.has(message.call))
      return this.#protocolFault(`call ${message.call} sent twice`);
    const base = { type: 'reply' as const, invocation: active.id, call: message.call };
    if (active.calls.size >= this.#maxConcurrentCalls) {
      const error = {
        code: 'ERR_TOO_MANY_CALLS' as const,
        message: `this invocation already has ${this.#maxConcurrentCalls} sdk calls in flight; await some before making more`,
      };
      active.failedReplyCodes.add(error.code);
      return this.#write(encodeMessage({ ...base, ok: false, error }));
    }
    const controller = new AbortController();
    active.calls.set(message.call, controller);
    Promise.resolve()
      .then(() => active.hooks.onCall(message.op, message.args, { signal: controller.signal }))
      .then(
        (value) => ({ ...base, ok: true as const, value }),
        (error: unknown) => ({
          ...base,
          ok: false as const,
          error: toWireError(error, message.op),
        }),
      )
      .then((reply) => {
        if (this.#active !== active) return; // the invocation ended meanwhile
        active.calls.delete(message.call);
        let line: string;
        // The code of the refusal actually sent, if any.
        let refusal: string | undefined = reply.ok ? undefined : reply.error.code;
        try {
          line = encodeMessage(reply);
        } catch {
          const error = {
            code: 'ERR_INTERNAL' as const,
            message: `the ${message.op} reply cannot be sent as JSON`,
          };
          line = encodeMessage({ ...base, ok: false, error });
          refusal = error.code;
        }
        // The harness faults on a line over the limit; the tool gets a clear error instead.
        if (Buffer.byteLength(line) > HARNESS_MAX_LINE_BYTES) {
          const error = {
            code: 'ERR_REPLY_TOO_LARGE' as const,
            message: `the ${message.op} answer is larger than ${HARNESS_MAX_LINE_BYTES} bytes once encoded; ask for less (fewer rows, a smaller response)`,
          };
          line = encodeMessage({ ...base, ok: false, error });
          refusal = error.code;
        }
        if (refusal !== undefined) active.failedReplyCodes.add(refusal);
        this.#write(line);
      });
  }

  #finish(active: ActiveInvocation, message: ResultMessage): void {
    this.#endInvocation(active);
    if (message.heap !== undefined) this.#heapUsedBytes = message.heap;
    this.#state = 'idle';
    // The wire schema requires `value` (the harness sends `undefined` as null): it is JSON here.
    if (message.ok) {
      const { value, content } = message;
      return active.resolve(
        content === undefined ? { ok: true, value } : { ok: true, value, content },
      );
    }
    const error =
      message.error.code === 'ERR_TOOL_TIMEOUT'
        ? { ...message.error, message: timeoutError(active.request.limits.timeoutMs).message }
        : message.error;
    // The container runs tool code: an sdk call's code is believed only when
    // this side sent that refusal to this invocation (call-failure-codes.ts).
    if (isCallFailureCode(error.code) && !active.failedReplyCodes.has(error.code)) {
      return active.resolve({ ok: false, error: { ...error, code: 'ERR_TOOL_ERROR' } });
    }
    active.resolve({ ok: false, error });
  }

  #onExit(exit: SandboxExit): void {
    const memoryMb = this.#active?.request.limits.memoryMb;
    this.#break(faultFromExit(exit, memoryMb, this.#state === 'starting'));
  }

  #protocolFault(what: string): void {
    this.#break(
      new McphostError('ERR_PROTOCOL', `the runner broke the protocol: unexpected ${what}`),
    );
  }

  /** The one way out of service: reject whatever waits, notify, kill. Idempotent. */
  #break(error: McphostError): void {
    if (this.#state === 'broken') return;
    const previous = this.#state;
    this.#state = 'broken';
    this.#brokenBy = error;
    clearTimeout(this.#settleReady.timer);
    if (previous === 'starting') this.#settleReady.reject(asUnavailable(error));
    const active = this.#active;
    if (active) {
      this.#endInvocation(active);
      active.reject(error);
    }
    for (const listener of this.#brokenListeners.splice(0)) listener(error);
    void this.instance.kill().catch(() => undefined);
  }

  #endInvocation(active: ActiveInvocation): void {
    clearTimeout(active.deadline);
    active.detachAbort();
    for (const controller of active.calls.values()) controller.abort();
    active.calls.clear();
    this.#active = undefined;
  }

  /** `invoking`: the line is an invocation, which the runner never gets when this write fails. */
  #send(message: object, invoking = false): void {
    this.#write(encodeMessage(message), invoking);
  }

  #write(line: string, invoking = false): void {
    try {
      this.instance.write(line);
    } catch (error) {
      this.#break(
        new McphostError('ERR_CONTAINER_CRASHED', 'the runner stopped accepting input', {
          cause: error,
          // Nothing of the invocation ran: the caller may run it on another container.
          ...(invoking ? { details: { undelivered: true } } : {}),
        }),
      );
    }
  }
}

/** A brokered call's failure as it travels back: wire codes keep theirs, anything else is internal. */
export function toWireError(error: unknown, operation: string): WireError {
  if (isMcphostError(error) && WIRE_CODES.has(error.code) && errorSpecOf(error.code).exposable) {
    return { code: error.code as ErrorCode, message: error.message.slice(0, 64 * 1024) };
  }
  // Anything else is ours, and tenant code must not read its detail (hosts, paths).
  return { code: 'ERR_INTERNAL', message: `internal error while performing ${operation}` };
}

/** True when an invocation failed before its runner received it (the container had died unnoticed). */
export function wasUndelivered(error: McphostError): boolean {
  const details = error.details as { undelivered?: unknown } | undefined;
  return details?.undelivered === true;
}
