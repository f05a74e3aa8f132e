/**
 * Receives the control plane's messages and runs one invocation at a time, each
 * in a fresh context prepared while idle. Anything that breaks the contract —
 * an invoke while one runs, a reply or cancel for an invocation never seen, a
 * reply for a call that is not pending — is reported through `onFault`.
 */
import type vm from 'node:vm';
import { describeToolSyntaxError, compileToolScript } from '../src/tool-code/index.js';
import { INSTEAD_OF_MODULES, withInsteadOfModuleSyntax } from '../src/tool-code/instead-of-node.js';
import type {
  CancelMessage,
  ControlMessage,
  InvokeMessage,
  ReplyMessage,
} from '../src/protocol/index.js';
import { errorResultLine } from './protocol-lines.js';
import { Invocation } from './invocation.js';
import {
  NOTHING_PRELOADED,
  RUN,
  preloadFor,
  type ContextPreload,
  type ToolContext,
  type ToolContextFactory,
} from './tool-context.js';

/** How many compiled tool codes are kept; a container serves one tool, so one is the norm. */
const COMPILED_CACHE_SIZE = 8;
/** How many ended invocation ids are remembered, to ignore their late replies and cancels. */
const ENDED_MEMORY = 32;

type Compiled =
  { script: vm.Script } | { syntax: { message: string; line: number; column: number } };

/** What the runner needs from its process. */
export interface InvocationRunnerOptions {
  contexts: ToolContextFactory;
  /** Writes one protocol line to stdout. */
  write: (line: string) => void;
  /** The peer broke the contract; the caller exits. */
  onFault: (reason: string) => void;
}

/** Dispatches control messages to invocations. */
export class InvocationRunner {
  readonly #contexts: ToolContextFactory;
  readonly #write: (line: string) => void;
  readonly #onFault: (reason: string) => void;
  readonly #compiled = new Map<string, Compiled>();
  readonly #ended: string[] = [];
  #prepared: ToolContext | null = null;
  /** What the last tool's code names (lodash, URL): its next context gets it ahead. */
  #preload: ContextPreload = NOTHING_PRELOADED;
  #preparing = false;
  #current: Invocation | null = null;

  constructor(options: InvocationRunnerOptions) {
    this.#contexts = options.contexts;
    this.#write = options.write;
    this.#onFault = options.onFault;
  }

  /** Prepares the next context soon, unless one is waiting already. */
  prepareSoon(): void {
    if (this.#prepared !== null || this.#preparing) return;
    this.#preparing = true;
    setImmediate(() => {
      this.#preparing = false;
      // Idle time after `ready` (or a result); the first context also compiles lodash's function.
      if (this.#prepared === null) this.#prepared = this.#contexts.create(this.#preload);
    });
  }

  /** Handles one message from the control plane. */
  handle(message: ControlMessage): void {
    switch (message.type) {
      case 'invoke':
        return this.#invoke(message);
      case 'reply':
        return this.#reply(message);
      case 'cancel':
        return this.#cancel(message);
    }
  }

  #invoke(message: InvokeMessage): void {
    if (this.#current !== null && !this.#current.ended) {
      return this.#onFault(
        `invoke ${message.invocation} arrived while ${this.#current.id} is running`,
      );
    }
    if (this.#ended.includes(message.invocation)) {
      return this.#onFault(`invocation id ${message.invocation} was used before`);
    }
    const compiled = this.#compile(message.code);
    if ('syntax' in compiled) {
      this.#remember(message.invocation);
      this.#write(
        errorResultLine(message.invocation, { code: 'ERR_TOOL_SYNTAX', ...compiled.syntax }),
      );
      return;
    }
    // One container serves one tool, so its code predicts the next invocation's needs.
    this.#preload = preloadFor(message.code);
    const context = this.#prepared ?? this.#contexts.create(this.#preload);
    this.#prepared = null;
    const invocation = new Invocation({
      id: message.invocation,
      limits: message.limits,
      progress: message.progress === true,
      context,
      write: this.#write,
      onEnd: (ended) => {
        this.#remember(ended.id);
        this.prepareSoon();
      },
    });
    context.slot.target = invocation.bridge;
    this.#current = invocation;
    // Evaluating the wrapper only creates the function; no tool code runs here.
    const tool: unknown = compiled.script.runInContext(context.context, RUN);
    invocation.start(
      tool,
      JSON.stringify(message.params),
      JSON.stringify(message.env),
      JSON.stringify(message.client ?? null),
      JSON.stringify(message.caller ?? null),
    );
  }

  #reply(message: ReplyMessage): void {
    const current = this.#current;
    if (current !== null && current.id === message.invocation && !current.ended) {
      if (!current.reply(message)) {
        this.#onFault(
          `reply to call ${message.call} of ${message.invocation}, which is not pending`,
        );
      }
      return;
    }
    // A call the tool did not await may be answered after the result: dropped.
    if (this.#ended.includes(message.invocation)) return;
    this.#onFault(`reply for unknown invocation ${message.invocation}`);
  }

  #cancel(message: CancelMessage): void {
    const current = this.#current;
    if (current !== null && current.id === message.invocation && !current.ended)
      return current.cancel();
    // The result and the cancel crossed on the wire.
    if (this.#ended.includes(message.invocation)) return;
    this.#onFault(`cancel for unknown invocation ${message.invocation}`);
  }

  #compile(code: string): Compiled {
    const cached = this.#compiled.get(code);
    if (cached !== undefined) return cached;
    let compiled: Compiled;
    try {
      compiled = {
        script: compileToolScript(code, {
          importModuleDynamically: (specifier) => this.#refuseImport(specifier),
        }),
      };
    } catch (error) {
      const syntax = describeToolSyntaxError(error, code);
      compiled = { syntax: { ...syntax, message: withInsteadOfModuleSyntax(syntax.message) } };
    }
    if (this.#compiled.size >= COMPILED_CACHE_SIZE) {
      const oldest = this.#compiled.keys().next().value;
      if (oldest !== undefined) this.#compiled.delete(oldest);
    }
    this.#compiled.set(code, compiled);
    return compiled;
  }

  /**
   * Rejects import() with a string: a primitive belongs to no realm. An object
   * would have to come from some context, and code from another invocation
   * calling import() would be handed the current invocation's realm. Node
   * settles the import() promise after this returns, past the running drain:
   * the current invocation drains once more so the tool sees the rejection.
   */
  #refuseImport(specifier: string): never {
    this.#current?.poke();
    throw `import() is not available in tool code (asked for ${String(specifier).slice(0, 200)}). ${INSTEAD_OF_MODULES}`;
  }

  #remember(id: string): void {
    this.#ended.push(id);
    if (this.#ended.length > ENDED_MEMORY) this.#ended.shift();
  }
}
