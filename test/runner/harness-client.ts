/**
 * A tiny control-plane stand-in for tests: spawns the harness bundle as a plain
 * child process, validates every line it writes against the protocol, and
 * answers `call`s with a test-side handler.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  HarnessMessage,
  LineReader,
  encodeMessage,
  type CallMessage,
  type InvokeLimits,
  type LogMessage,
  type ProgressMessage,
  type ResultMessage,
  type WireError,
} from '../../src/protocol/index.js';

/** What a call handler answers: a value, an error, or nothing (leave the call pending). */
export type CallAnswer =
  { ok: true; value: unknown } | { ok: false; error: WireError } | 'no-reply';
export type CallHandler = (call: CallMessage) => CallAnswer | Promise<CallAnswer>;

export interface InvokeOptions {
  params?: Record<string, unknown>;
  env?: Record<string, string>;
  limits?: Partial<InvokeLimits>;
  onCall?: CallHandler;
  /** The invocation's time limit, in ms; default 5 000. */
  timeoutMs?: number;
  /** How long to wait for the result, in ms; default 10 000. */
  waitMs?: number;
  /** Invocation id; default a fresh UUID. */
  id?: string;
  /** Whether the caller asked for progress (the invoke's `progress`); default absent. */
  progress?: boolean;
}

/** Everything one invocation produced, in arrival order. */
export interface InvocationOutcome {
  result: ResultMessage;
  logs: LogMessage[];
  calls: CallMessage[];
  progress: ProgressMessage[];
  /** Logs and calls interleaved as they arrived. */
  sequence: (LogMessage | CallMessage)[];
}

export const DEFAULT_LIMITS: InvokeLimits = {
  maxResultBytes: 1024 * 1024,
  maxLogBytes: 64 * 1024,
  maxLogEntries: 1000,
};

export class HarnessClient {
  readonly child: ChildProcessWithoutNullStreams;
  readonly messages: HarnessMessage[] = [];
  readonly faults: string[] = [];
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  #listeners = new Set<(message: HarnessMessage) => void>();

  private constructor(child: ChildProcessWithoutNullStreams) {
    this.child = child;
    const reader = new LineReader({
      schema: HarnessMessage,
      onMessage: (message) => {
        this.messages.push(message);
        for (const listener of [...this.#listeners]) listener(message);
      },
      onFault: (fault) => this.faults.push(fault.message),
    });
    child.stdout.on('data', (chunk: Buffer) => reader.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.exited = new Promise((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
  }

  /** Spawns `node [nodeFlags] harnessPath` and waits for `ready`. */
  static async start(harnessPath: string, nodeFlags: string[] = []): Promise<HarnessClient> {
    const child = spawn(process.execPath, [...nodeFlags, harnessPath], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const client = new HarnessClient(child);
    await client.next((message) => message.type === 'ready', 10_000);
    return client;
  }

  /** Resolves with the next message matching `predicate` (or one already received). */
  next(
    predicate: (message: HarnessMessage) => boolean,
    timeoutMs = 10_000,
  ): Promise<HarnessMessage> {
    const seen = this.messages.find(predicate);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#listeners.delete(listener);
        reject(new Error(`no matching message within ${timeoutMs} ms; stderr: ${this.stderr}`));
      }, timeoutMs);
      const listener = (message: HarnessMessage): void => {
        if (!predicate(message)) return;
        clearTimeout(timer);
        this.#listeners.delete(listener);
        resolve(message);
      };
      this.#listeners.add(listener);
    });
  }

  /** Writes one control message (or raw text, for fault tests). */
  send(message: object | string): void {
    this.child.stdin.write(typeof message === 'string' ? message : encodeMessage(message));
  }

  /** Runs tool code to its result, answering calls with `onCall`. */
  async invoke(code: string, options: InvokeOptions = {}): Promise<InvocationOutcome> {
    const id = options.id ?? randomUUID();
    const outcome: Omit<InvocationOutcome, 'result'> = {
      logs: [],
      calls: [],
      progress: [],
      sequence: [],
    };
    const listener = (message: HarnessMessage): void => {
      if (!('invocation' in message) || message.invocation !== id) return;
      if (message.type === 'log') {
        outcome.logs.push(message);
        outcome.sequence.push(message);
      } else if (message.type === 'progress') {
        outcome.progress.push(message);
      } else if (message.type === 'call') {
        outcome.calls.push(message);
        outcome.sequence.push(message);
        void this.#answer(message, options.onCall);
      }
    };
    this.#listeners.add(listener);
    try {
      const result = this.next(
        (message) => message.type === 'result' && message.invocation === id,
        options.waitMs,
      );
      this.send({
        type: 'invoke',
        invocation: id,
        code,
        params: options.params ?? {},
        env: options.env ?? {},
        timeoutMs: options.timeoutMs ?? 5_000,
        limits: { ...DEFAULT_LIMITS, ...options.limits },
        ...(options.progress === undefined ? {} : { progress: options.progress }),
      });
      return { ...outcome, result: (await result) as ResultMessage };
    } finally {
      this.#listeners.delete(listener);
    }
  }

  async #answer(call: CallMessage, onCall: CallHandler | undefined): Promise<void> {
    const answer: CallAnswer = onCall
      ? await onCall(call)
      : { ok: false, error: { code: 'ERR_INTERNAL', message: 'no call handler in this test' } };
    if (answer === 'no-reply' || this.child.exitCode !== null) return;
    this.send({ type: 'reply', invocation: call.invocation, call: call.call, ...answer });
  }

  /** Closes stdin (the harness exits 0) and waits for the exit. */
  async close(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await this.exited;
    clearTimeout(timer);
  }
}

/** The value of an ok result, or a thrown Error describing the failure. */
export function valueOf(outcome: InvocationOutcome): unknown {
  if (!outcome.result.ok)
    throw new Error(`invocation failed: ${JSON.stringify(outcome.result.error)}`);
  return outcome.result.value;
}

/** The error of a failed result, or a thrown Error when it succeeded. */
export function errorOf(outcome: InvocationOutcome): WireError {
  if (outcome.result.ok)
    throw new Error(`invocation succeeded with ${JSON.stringify(outcome.result.value)}`);
  return outcome.result.error;
}
