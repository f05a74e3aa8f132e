/**
 * An in-memory SandboxDriver for unit tests of the pool's pure logic: each
 * instance plays a tiny scripted harness. The tool `code` picks the script:
 *   "value:<json>"  → result ok with that value
 *   "throw:<msg>"   → result ERR_TOOL_ERROR
 *   "hang"          → never answers
 *   "crash"         → exits with code 1
 *   "oom"           → exits, OOM-killed
 *   "garbage"       → writes a line that is not JSON
 *   "call"          → one brokered http call, returns its reply
 *   "log:<n>"       → n log lines of 100 bytes, then ok
 *   "forge"         → a result for another invocation id
 *   "slow:<ms>"     → answers after ms
 */
import { encodeMessage, type InvokeMessage } from '../../src/protocol/index.js';
import type {
  SandboxDriver,
  SandboxExit,
  SandboxInstance,
  SandboxSpec,
} from '../../control-plane/sandbox/driver.js';

let nextId = 0;

export class FakeInstance implements SandboxInstance {
  readonly id = `fake:${++nextId}`;
  readonly exited: Promise<SandboxExit>;
  readonly spec: SandboxSpec;
  readonly received: Array<Record<string, unknown>> = [];
  killed = false;
  #listeners: Array<(chunk: Buffer) => void> = [];
  #exit!: (exit: SandboxExit) => void;
  #buffer = '';
  #replies = new Map<number, (value: unknown) => void>();

  constructor(spec: SandboxSpec, readyDelayMs: number) {
    this.spec = spec;
    this.exited = new Promise((resolve) => (this.#exit = resolve));
    setTimeout(() => this.emit({ type: 'ready', protocol: 1, node: 'v20-fake' }), readyDelayMs);
  }

  onStdout(listener: (chunk: Buffer) => void): void {
    this.#listeners.push(listener);
  }

  emit(message: object): void {
    this.emitRaw(encodeMessage(message));
  }

  emitRaw(text: string): void {
    if (this.killed) return;
    for (const listener of this.#listeners) listener(Buffer.from(text));
  }

  exit(exit: Partial<SandboxExit> = {}): void {
    this.killed = true;
    this.#exit({ exitCode: 1, oomKilled: false, stderrTail: '', ...exit });
  }

  write(data: string): void {
    if (this.killed) throw new Error('stdin closed');
    this.#buffer += data;
    let newline: number;
    while ((newline = this.#buffer.indexOf('\n')) !== -1) {
      const line = this.#buffer.slice(0, newline);
      this.#buffer = this.#buffer.slice(newline + 1);
      const message = JSON.parse(line) as Record<string, unknown>;
      this.received.push(message);
      if (message.type === 'invoke') void this.#run(message as unknown as InvokeMessage);
      if (message.type === 'reply') this.#replies.get(message.call as number)?.(message);
    }
  }

  async kill(): Promise<void> {
    if (!this.killed) this.exit({ exitCode: 137, signal: 'SIGKILL' });
  }

  async #run(message: InvokeMessage): Promise<void> {
    const invocation = message.invocation;
    const [script, argument = ''] = splitOnce(message.code, ':');
    const ok = (value: unknown): void => this.emit({ type: 'result', invocation, ok: true, value });
    switch (script) {
      case 'value':
        return ok(JSON.parse(argument));
      case 'throw':
        return this.emit({
          type: 'result',
          invocation,
          ok: false,
          error: { code: 'ERR_TOOL_ERROR', message: argument },
        });
      case 'hang':
        return;
      case 'crash':
        return this.exit({ exitCode: 1 });
      case 'oom':
        return this.exit({ exitCode: 137, oomKilled: true });
      case 'garbage':
        return this.emitRaw('this is not json\n');
      case 'forge':
        return this.emit({ type: 'result', invocation: 'someone-else', ok: true, value: 1 });
      case 'slow':
        await new Promise((resolve) => setTimeout(resolve, Number(argument)));
        return ok('slow');
      case 'log':
        for (let index = 0; index < Number(argument); index += 1) {
          this.emit({ type: 'log', invocation, level: 'log', text: 'x'.repeat(100) });
        }
        return ok('logged');
      case 'call': {
        const reply = new Promise((resolve) => this.#replies.set(0, resolve));
        this.emit({
          type: 'call',
          invocation,
          call: 0,
          op: 'http',
          args: { url: 'http://example.test' },
        });
        return ok(await reply);
      }
      default:
        return ok(null);
    }
  }
}

function splitOnce(text: string, separator: string): [string, string?] {
  const index = text.indexOf(separator);
  return index === -1 ? [text] : [text.slice(0, index), text.slice(index + 1)];
}

/** A driver whose instances are FakeInstance; `failing` makes start/ping reject. */
export class FakeDriver implements SandboxDriver {
  readonly kind = 'process' as const;
  readonly instances: FakeInstance[] = [];
  failing = false;
  readyDelayMs = 1;
  reaped = 0;
  /** Calls of `start`, failed ones included. */
  startAttempts = 0;

  async start(spec: SandboxSpec): Promise<FakeInstance> {
    this.startAttempts += 1;
    await new Promise((resolve) => setTimeout(resolve, 1));
    if (this.failing) throw new Error('engine is down');
    const instance = new FakeInstance(spec, this.readyDelayMs);
    this.instances.push(instance);
    return instance;
  }

  async reapLeftovers(): Promise<number> {
    this.reaped += 1;
    return 0;
  }

  /** Fake instances leave nothing on an engine. */
  async reapStopped(): Promise<number> {
    return 0;
  }

  async ping(): Promise<void> {
    if (this.failing) throw new Error('engine is down');
  }

  async runtimes(): Promise<string[]> {
    return ['runc', 'runsc'];
  }

  async close(): Promise<void> {
    await Promise.all(this.instances.map((instance) => instance.kill()));
  }

  live(): FakeInstance[] {
    return this.instances.filter((instance) => !instance.killed);
  }
}
