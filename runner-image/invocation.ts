/**
 * The host side of one running invocation: answers the context's bridge calls
 * (logs, sdk calls, timers, the outcome), enforces the log and result limits,
 * and ends exactly once — by result, error or cancel. After the end every bridge
 * call is ignored, so late output of the tool is dropped and no timer fires.
 *
 * Tool code runs only when the host enters the context (start, a reply, a
 * timer) and in the microtasks drained right after. An outcome reached during
 * a drain is written when the drain returns: whatever the tool queued behind
 * its `return` runs on its own time, and once the result is out the context
 * is never entered or drained again. A chain that never ends is an endless
 * loop like any other: the control plane's deadline kills the container.
 */
import { Buffer } from 'node:buffer';
import {
  CALL_OPERATIONS,
  CLIENT_OPERATIONS,
  ContentBlock,
  DEFAULT_MAX_LINE_BYTES,
  LOG_ENTRY_MIN_BYTES,
  LogLevel,
  type CallOperation,
  type ErrorCode,
  type InvokeLimits,
  type ReplyMessage,
  type WireError,
} from '../src/protocol/index.js';
import { isCallFailureCode } from '../src/protocol/call-failure-codes.js';
import { withInsteadOfGlobal } from '../src/tool-code/instead-of-node.js';
import {
  callLine,
  contentResultLine,
  disconnectLine,
  errorResultLine,
  logLine,
  okResultLine,
  progressLine,
  waitingLine,
} from './protocol-lines.js';
import type { HostBridge, ToolContext } from './tool-context.js';
import { answerWebCall, startWebClock } from './web-host.js';

/**
 * The blocks a tool returned, checked here as the control plane will check
 * them: a block it would refuse must fail this invocation, not fault the container.
 */
const ContentBlocks = ContentBlock.array().min(1).max(1024);

/** Largest error message on the wire, in characters (WireError's limit). */
const MAX_MESSAGE_CHARS = 64 * 1024;
/** Longest progress message sent, in characters (a status line, not a log). */
const MAX_PROGRESS_MESSAGE_CHARS = 1024;
/** Codes the context may end an invocation with. */
const CONTEXT_FAILURE_CODES: ReadonlySet<string> = new Set<ErrorCode>([
  'ERR_TOOL_ERROR',
  'ERR_RESULT_NOT_SERIALISABLE',
]);

/**
 * Largest line the control plane reads (its LineReader's default): a call
 * over it is refused in the tool instead of faulting the whole container.
 */
const MAX_LINE_BYTES = DEFAULT_MAX_LINE_BYTES;

/** What an invocation needs from the harness. */
export interface InvocationOptions {
  id: string;
  limits: InvokeLimits;
  /** Whether the caller asked for progress: otherwise `sdk.progress` sends nothing. */
  progress: boolean;
  context: Pick<ToolContext, 'api' | 'drain'>;
  /** Writes one protocol line to stdout. */
  write: (line: string) => void;
  /** Called once, right after the outcome line was written. */
  onEnd: (invocation: Invocation) => void;
}

/** One invocation from `invoke` to its `result`. */
export class Invocation {
  readonly id: string;
  readonly #limits: InvokeLimits;
  readonly #progress: boolean;
  #progressSent = 0;
  #progressBytes = 0;
  /** Whether `sdk.closeStream()` was sent: once is all it means, so once is all it costs. */
  #disconnectSent = false;
  readonly #context: Pick<ToolContext, 'api' | 'drain'>;
  readonly #write: (line: string) => void;
  readonly #onEnd: (invocation: Invocation) => void;
  readonly #pendingCalls = new Set<number>();
  /** The pending calls that ask the calling client (sdk.elicit, sdk.sample, sdk.roots). */
  readonly #pendingClientCalls = new Set<number>();
  /** Codes of the failed replies this invocation was sent: the only sdk codes its result may carry. */
  readonly #failedReplyCodes = new Set<string>();
  /** Whether `waiting` was sent for the state the invocation is in now. */
  #waitingSent = false;
  readonly #timers = new Map<number, NodeJS.Timeout>();
  #nextCallId = 0;
  #nextTimerId = 1;
  #logBytes = 0;
  #logEntries = 0;
  #logDropped = false;
  #ended = false;
  /** True while tool code runs (an entry into the context and its drain). */
  #inContext = false;
  /** The outcome line reached inside the context, written once it is left. */
  #outcomeLine: string | null = null;
  #poked = false;
  /** Where `performance.now()` counts from: this invocation's start. */
  readonly #webClock = startWebClock();

  constructor(options: InvocationOptions) {
    this.id = options.id;
    this.#limits = options.limits;
    this.#progress = options.progress;
    this.#context = options.context;
    this.#write = options.write;
    this.#onEnd = options.onEnd;
  }

  /** True once the result was written. */
  get ended(): boolean {
    return this.#ended;
  }

  /** The function the context's bridge forwards to; takes and returns primitives. */
  readonly bridge: HostBridge = (kind, a, b, c, d) => {
    if (this.#ended) return undefined;
    switch (kind) {
      case 'log':
        if (typeof b === 'string' && LogLevel.safeParse(a).success) this.#log(a as LogLevel, b);
        return undefined;
      case 'call':
        if (typeof a === 'string' && Object.hasOwn(CALL_OPERATIONS, a) && isOneLine(b)) {
          return this.#call(a as CallOperation, b);
        }
        return undefined;
      case 'ok':
        if (isOneLine(a)) {
          if (b === 'content') this.#succeedWithContent(a);
          else this.#succeed(a);
        }
        return undefined;
      case 'progress':
        this.#sendProgress(a, b, c);
        return undefined;
      case 'closeStream':
        this.#sendDisconnect();
        return undefined;
      case 'web':
        return answerWebCall(a, b, c, d, this.#webClock);
      case 'fail':
        if (typeof a === 'string' && typeof b === 'string') {
          const code = this.#failureCode(a);
          // "require is not defined" says what tool code has instead (instead-of-node.ts).
          const message = code === 'ERR_TOOL_ERROR' ? withInsteadOfGlobal(b) : b;
          this.fail({ code, message, ...position(c, d) });
        }
        return undefined;
      case 'timer':
        if (typeof a === 'number' && typeof b === 'boolean') return this.#startTimer(a, b);
        return undefined;
      case 'clear':
        if (typeof a === 'number') this.#clearTimer(a);
        return undefined;
      default:
        return undefined;
    }
  };

  /** Runs the tool function (made by the compiled wrapper) with params, env, client and caller as JSON text. */
  start(
    tool: unknown,
    paramsJson: string,
    envJson: string,
    clientJson: string,
    callerJson: string,
  ): void {
    this.#enter(
      () => this.#context.api.start(tool, paramsJson, envJson, clientJson, callerJson),
      () => this.fail({ code: 'ERR_INTERNAL', message: 'the harness could not start the tool' }),
    );
  }

  /**
   * Drains the context once more, soon: something the tool started (a refused
   * import()) settles on the host after the current drain has returned.
   */
  poke(): void {
    if (this.#ended || this.#poked) return;
    this.#poked = true;
    setImmediate(() => {
      this.#poked = false;
      this.#enter(() => undefined);
    });
  }

  /** Delivers a reply; false when no such call is pending (a protocol fault). */
  reply(message: ReplyMessage): boolean {
    if (!this.#pendingCalls.delete(message.call)) return false;
    this.#pendingClientCalls.delete(message.call);
    this.#waitingSent = false;
    const [payload, code] = message.ok
      ? [JSON.stringify(message.value ?? null), '']
      : [message.error.message, message.error.code];
    if (!message.ok) this.#failedReplyCodes.add(code);
    this.#enter(() => this.#context.api.settle(message.call, message.ok, payload, code));
    return true;
  }

  /** Ends at once with ERR_CANCELLED; the context is never entered again. */
  cancel(): void {
    if (this.#ended) return;
    this.fail({ code: 'ERR_CANCELLED', message: 'the invocation was cancelled' });
    try {
      // Stops its timers; the rejections it queues are never drained, so no tool code runs.
      this.#context.api.cancel();
    } catch {
      // Whatever the context threw is its own; it is never inspected here.
    }
  }

  /** Ends with an error (no-op once ended). */
  fail(error: WireError): void {
    if (this.#ended) return;
    const message =
      error.message.length > MAX_MESSAGE_CHARS
        ? `${error.message.slice(0, MAX_MESSAGE_CHARS - 1)}…`
        : error.message;
    this.#end(errorResultLine(this.id, { ...error, message }));
  }

  /**
   * The code an outcome the context reports may have: its own failures, or
   * the code of a failed reply this invocation really got (an uncaught sdk
   * rejection, which the bootstrap recognises by the error object itself).
   * Any other code is tool code's doing and becomes ERR_TOOL_ERROR.
   */
  #failureCode(claimed: string): ErrorCode {
    if (CONTEXT_FAILURE_CODES.has(claimed)) return claimed as ErrorCode;
    if (isCallFailureCode(claimed) && this.#failedReplyCodes.has(claimed)) return claimed;
    return 'ERR_TOOL_ERROR';
  }

  #succeed(valueJson: string): void {
    const bytes = Buffer.byteLength(valueJson);
    const limit = this.#limits.maxResultBytes;
    if (bytes > limit) {
      this.fail({
        code: 'ERR_RESULT_TOO_LARGE',
        message: `result is ${bytes} bytes of JSON, more than the limit of ${limit} bytes`,
      });
      return;
    }
    this.#end(okResultLine(this.id, valueJson));
  }

  #succeedWithContent(contentJson: string): void {
    const bytes = Buffer.byteLength(contentJson);
    const limit = this.#limits.maxResultBytes;
    if (bytes > limit) {
      this.fail({
        code: 'ERR_RESULT_TOO_LARGE',
        message: `result is ${bytes} bytes of content once encoded, more than the limit of ${limit} bytes`,
      });
      return;
    }
    let blocks: unknown;
    try {
      blocks = JSON.parse(contentJson);
    } catch {
      blocks = undefined;
    }
    const checked = ContentBlocks.safeParse(blocks);
    if (!checked.success) {
      const issue = checked.error.issues[0];
      const where = issue === undefined ? '' : ` at ${issue.path.join('.')}`;
      this.fail({
        code: 'ERR_TOOL_ERROR',
        message: `the returned content is not valid MCP content${where}: ${issue?.message ?? 'unknown problem'}`,
      });
      return;
    }
    this.#end(contentResultLine(this.id, contentJson));
  }

  /**
   * One `sdk.progress`: sent only when the caller asked for progress, and
   * within a budget of its own as large as the console's (entries and encoded
   * bytes): a flood of notifications is as costly to carry as a flood of
   * logs. Past it, the rest are dropped — progress is advisory.
   */
  #sendProgress(progress: unknown, total: unknown, message: unknown): void {
    if (!this.#progress) return;
    const { maxLogBytes, maxLogEntries } = this.#limits;
    if (this.#progressSent >= maxLogEntries) return;
    if (typeof progress !== 'number' || !Number.isFinite(progress)) return;
    const checkedTotal = typeof total === 'number' && Number.isFinite(total) ? total : undefined;
    const checkedMessage =
      typeof message === 'string' ? message.slice(0, MAX_PROGRESS_MESSAGE_CHARS) : undefined;
    const line = progressLine(this.id, progress, checkedTotal, checkedMessage);
    const bytes = Math.max(LOG_ENTRY_MIN_BYTES, Buffer.byteLength(line));
    if (this.#progressBytes + bytes > maxLogBytes) {
      this.#progressSent = maxLogEntries;
      return;
    }
    this.#progressSent += 1;
    this.#progressBytes += bytes;
    this.#write(line);
  }

  /**
   * One `sdk.closeStream()`: the response carrying the call can end only
   * once, so later calls send nothing. Sent whatever the caller: only the
   * control plane knows whether it can resume (SEP-1699) and ignores it if not.
   */
  #sendDisconnect(): void {
    if (this.#disconnectSent) return;
    this.#disconnectSent = true;
    this.#write(disconnectLine(this.id));
  }

  #end(line: string): void {
    this.#ended = true;
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    this.#pendingCalls.clear();
    this.#pendingClientCalls.clear();
    if (this.#inContext) this.#outcomeLine = line;
    else this.#send(line);
  }

  #send(line: string): void {
    this.#write(line);
    this.#onEnd(this);
  }

  /**
   * Enters the context (`entry` calls into it), then drains the microtasks it
   * queued within the time left. Nothing runs once the invocation has ended.
   */
  #enter(entry: () => void, onThrow: () => void = () => undefined): void {
    if (this.#ended) return;
    this.#inContext = true;
    try {
      try {
        entry();
      } catch {
        // Never inspect a context value.
        onThrow();
      }
      this.#context.drain();
    } finally {
      this.#inContext = false;
    }
    const line = this.#outcomeLine;
    if (line !== null) {
      this.#outcomeLine = null;
      this.#send(line);
      return;
    }
    this.#reportWaiting();
  }

  /**
   * Tells the control plane when nothing is left to run but answers from the
   * calling client: tool code runs only on an entry (a reply, a timer, a
   * poke) and the drain after it, so with no other call pending, no timer
   * set and no poke queued, nothing but one of those answers can wake it.
   */
  #reportWaiting(): void {
    if (
      this.#ended ||
      this.#waitingSent ||
      this.#poked ||
      this.#timers.size > 0 ||
      this.#pendingClientCalls.size === 0 ||
      this.#pendingClientCalls.size !== this.#pendingCalls.size
    ) {
      return;
    }
    this.#waitingSent = true;
    this.#write(waitingLine(this.id));
  }

  #log(level: LogLevel, text: string): void {
    if (this.#logDropped) return;
    const { maxLogBytes, maxLogEntries } = this.#limits;
    // An empty line still costs something to carry and keep.
    this.#logBytes += Math.max(LOG_ENTRY_MIN_BYTES, Buffer.byteLength(text));
    this.#logEntries += 1;
    if (this.#logBytes > maxLogBytes || this.#logEntries > maxLogEntries) {
      this.#logDropped = true;
      this.#write(
        logLine(
          this.id,
          'warn',
          `[mcphost] log output passed the limit of ${maxLogEntries} lines or ${maxLogBytes} bytes; the rest is dropped`,
        ),
      );
      return;
    }
    this.#write(logLine(this.id, level, text));
  }

  /**
   * Sends a brokered call; its id, or minus the line limit when the encoded
   * call would be longer than the control plane reads (the context then
   * rejects it with ERR_INVALID_ARGUMENT and the container stays).
   */
  #call(op: CallOperation, argsJson: string): number {
    const line = callLine(this.id, this.#nextCallId, op, argsJson);
    if (Buffer.byteLength(line) - 1 > MAX_LINE_BYTES) return -MAX_LINE_BYTES;
    const call = this.#nextCallId++;
    this.#pendingCalls.add(call);
    if (Object.hasOwn(CLIENT_OPERATIONS, op)) this.#pendingClientCalls.add(call);
    this.#waitingSent = false;
    this.#write(line);
    return call;
  }

  #startTimer(delayMs: number, repeat: boolean): number {
    const id = this.#nextTimerId++;
    const fire = (): void => {
      if (!repeat) this.#timers.delete(id);
      this.#waitingSent = false;
      // The context reports its own failures through the bridge.
      this.#enter(() => this.#context.api.fire(id));
    };
    this.#timers.set(id, repeat ? setInterval(fire, delayMs) : setTimeout(fire, delayMs));
    return id;
  }

  #clearTimer(id: number): void {
    const timer = this.#timers.get(id);
    if (timer === undefined) return;
    clearTimeout(timer);
    this.#timers.delete(id);
  }
}

/** JSON text from the context never holds a raw newline; checked because a line break would forge a message. */
function isOneLine(text: unknown): text is string {
  return typeof text === 'string' && !text.includes('\n');
}

function position(line: unknown, column: unknown): { line?: number; column?: number } {
  const valid = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n > 0;
  return valid(line) && valid(column) ? { line, column } : {};
}
