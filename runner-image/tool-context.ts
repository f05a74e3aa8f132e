/**
 * A fresh vm context for one invocation: the bootstrap evaluated in it, its
 * API held by the host, and the slot the bridge reads to find which invocation
 * the context belongs to. Contexts are prepared while the harness is idle, so
 * creating one (~0.5 ms) stays off the invoke path. Lodash (2–7 ms to evaluate)
 * comes in only for tools that use it: evaluated ahead when the tool's code
 * names it, else on first access of `sdk.lodash`.
 */
import { readFileSync } from 'node:fs';
import vm from 'node:vm';
import { BOOTSTRAP_SOURCE } from './bootstrap-source.js';

/** What the bootstrap returns; every member lives in the context's realm. */
export interface ContextApi {
  /** Runs the tool function with params and env given as JSON text. */
  start(tool: unknown, paramsJson: string, envJson: string): void;
  /** Settles a pending sdk call: payload is JSON (ok) or the error message. */
  settle(call: number, ok: boolean, payload: string, code: string): boolean;
  /** Runs the callback of a timer the host kept. */
  fire(timer: number): void;
  /** Rejects pending sdk calls with ERR_CANCELLED and stops timers. */
  cancel(): void;
  /** Evaluates lodash into `sdk.lodash` now rather than on first use. */
  preloadLodash(): void;
}

/** The host function the bootstrap holds; takes and returns primitives only. */
export type HostBridge = (
  kind: unknown,
  a: unknown,
  b: unknown,
  c: unknown,
  d: unknown,
) => number | undefined;

/** Who receives the bridge calls of a context; set when an invocation takes it. */
export interface BridgeSlot {
  target: HostBridge | null;
}

/** One prepared context. */
export interface ToolContext {
  readonly context: vm.Context;
  readonly api: ContextApi;
  readonly slot: BridgeSlot;
  /**
   * Runs the microtasks the context has queued, until there are none. No time
   * limit here: V8's per-call watchdog (`timeout`) starts a thread each time
   * and cost 1.1 ms per invocation; an endless chain is bounded like an endless
   * loop, by the control plane's deadline, which kills the container.
   */
  drain(): void;
}

/**
 * Options of the contexts: `eval`/`new Function` are refused (strings: false),
 * which also keeps code without our import() guard out (see vm-modules-flag.ts),
 * and WebAssembly compilation is refused. Lodash's `_.template` needs `Function`
 * and so is unavailable.
 *
 * Each context has its own microtask queue (`afterEvaluate`), which runs only
 * when the host drains it (`ToolContext.drain`): the host decides when tool
 * code may run, and once an invocation has ended its queue is never drained
 * again — work a tool queued behind its `return` runs before its result is
 * sent (on its own time), never after it on the next caller's.
 */
const CONTEXT_OPTIONS: vm.CreateContextOptions = {
  name: 'mcphost tool',
  codeGeneration: { strings: false, wasm: false },
  microtaskMode: 'afterEvaluate',
};

/** Evaluating it does nothing; what matters is the microtask checkpoint `afterEvaluate` runs after it. */
const DRAIN_SCRIPT = new vm.Script('undefined', { filename: 'mcphost-drain.js' });

/** Compiles the bootstrap and lodash once; makes contexts from them. */
export class ToolContextFactory {
  readonly #bootstrap: vm.Script;
  readonly #lodashSource: string;
  #lodashScript: vm.Script | undefined;

  /** `lodashPath`: file URL or path of lodash.min.js (read now, compiled when first needed). */
  constructor(lodashPath: URL | string) {
    this.#bootstrap = new vm.Script(BOOTSTRAP_SOURCE, { filename: 'mcphost-bootstrap.js' });
    this.#lodashSource = readFileSync(lodashPath, 'utf8');
  }

  /** Compiles lodash (~17 ms) if not yet done; the harness calls it while idle, after `ready`. */
  compileLodash(): vm.Script {
    this.#lodashScript ??= new vm.Script(this.#lodashSource, { filename: 'lodash.min.js' });
    return this.#lodashScript;
  }

  /** A new context ready for one invocation; `withLodash` evaluates lodash in it now. */
  create(withLodash = false): ToolContext {
    // A null-prototype sandbox: the context's global must not inherit from the
    // host's Object.prototype (`this.constructor.constructor` would be the host's Function).
    const context = vm.createContext(Object.create(null), CONTEXT_OPTIONS);
    const slot: BridgeSlot = { target: null };
    const compileLodash = () => this.compileLodash();
    const bridge: HostBridge = (kind, a, b, c, d) => {
      // Never throw into the context: a host error is a host object.
      try {
        if (kind === 'lodash') {
          compileLodash().runInContext(context);
          return undefined;
        }
        const target = slot.target;
        return target === null ? undefined : target(kind, a, b, c, d);
      } catch {
        return undefined;
      }
    };
    const install = this.#bootstrap.runInContext(context) as (bridge: HostBridge) => ContextApi;
    const api = install(bridge);
    if (withLodash) api.preloadLodash();
    const drain = (): void => {
      try {
        DRAIN_SCRIPT.runInContext(context);
      } catch {
        // Whatever the context threw is its own; it is never inspected here.
      }
    };
    return { context, api, slot, drain };
  }
}
