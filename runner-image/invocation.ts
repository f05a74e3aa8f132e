/**
 * The host side of one running invocation: answers the context's bridge calls
 * (logs, sdk calls, timers, the outcome), enforces the log and result limits,
 * and ends exactly once — by result, error or cancel. After the end every bridge
 * call is ignored, so late output of the tool is dropped and no timer fires.
 */
import { Buffer } from 'node:buffer';
import {
  CALL_OPERATIONS,
  LogLevel,
  type CallOperation,
  type ErrorCode,
  type InvokeLimits,
  type ReplyMessage,
  type WireError,
} from '../src/protocol/index.js';
import { callLine, errorResultLine, logLine, okResultLine } from './protocol-lines.js';
import type { ContextApi, HostBridge } from './tool-context.js';

/** Largest error message on the wire, in characters (WireError's limit). */
const MAX_MESSAGE_CHARS = 64 * 1024;
/** Codes the context may end an invocation with. */
const CONTEXT_FAILURE_CODES: ReadonlySet<string> = new Set<ErrorCode>([
  'ERR_TOOL_ERROR',
  'ERR_RESULT_NOT_SERIALISABLE',
]);

/** What an invocation needs from the harness. */
export interface InvocationOptions {
  id: string;
  limits: InvokeLimits;
  api: ContextApi;
  /** Writes one protocol line to stdout. */
  write: (line: string) => void;
  /** Called once, right after the outcome line was written. */
  onEnd: (invocation: Invocation) => void;
}

/** One invocation from `invoke` to its `result`. */
export class Invocation {
  readonly id: string;
  readonly #limits: InvokeLimits;
  readonly #api: ContextApi;
  readonly #write: (line: string) => void;
  readonly #onEnd: (invocation: Invocation) => void;
  readonly #pendingCalls = new Set<number>();
  readonly #timers = new Map<number, NodeJS.Timeout>();
  #nextCallId = 0;
  #nextTimerId = 1;
  #logBytes = 0;
  #logDropped = false;
  #ended = false;

  constructor(options: InvocationOptions) {
    this.id = options.id;
    this.#limits = options.limits;
    this.#api = options.api;
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
        if (isOneLine(a)) this.#succeed(a);
        return undefined;
      case 'fail':
        if (typeof a === 'string' && CONTEXT_FAILURE_CODES.has(a) && typeof b === 'string') {
          this.fail({ code: a as ErrorCode, message: b, ...position(c, d) });
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

  /** Delivers a reply; false when no such call is pending (a protocol fault). */
  reply(message: ReplyMessage): boolean {
    if (!this.#pendingCalls.delete(message.call)) return false;
    const [payload, code] = message.ok
      ? [JSON.stringify(message.value ?? null), '']
      : [message.error.message, message.error.code];
    try {
      this.#api.settle(message.call, message.ok, payload, code);
    } catch {
      // Whatever the context threw is its own; it is never inspected here.
    }
    return true;
  }

  /** Ends at once with ERR_CANCELLED; pending sdk calls reject in the context. */
  cancel(): void {
    if (this.#ended) return;
    this.fail({ code: 'ERR_CANCELLED', message: 'the invocation was cancelled' });
    try {
      this.#api.cancel();
    } catch {
      // As above: never inspect a context value.
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

  #end(line: string): void {
    this.#ended = true;
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    this.#pendingCalls.clear();
    this.#write(line);
    this.#onEnd(this);
  }

  #log(level: LogLevel, text: string): void {
    if (this.#logDropped) return;
    const limit = this.#limits.maxLogBytes;
    this.#logBytes += Buffer.byteLength(text);
    if (this.#logBytes > limit) {
      this.#logDropped = true;
      this.#write(
        logLine(
          this.id,
          'warn',
          `[mcphost] log output passed the limit of ${limit} bytes; the rest is dropped`,
        ),
      );
      return;
    }
    this.#write(logLine(this.id, level, text));
  }

  #call(op: CallOperation, argsJson: string): number {
    const call = this.#nextCallId++;
    this.#pendingCalls.add(call);
    this.#write(callLine(this.id, call, op, argsJson));
    return call;
  }

  #startTimer(delayMs: number, repeat: boolean): number {
    const id = this.#nextTimerId++;
    const fire = (): void => {
      if (!repeat) this.#timers.delete(id);
      try {
        this.#api.fire(id);
      } catch {
        // The context reports its own failures through the bridge.
      }
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
