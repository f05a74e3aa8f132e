/**
 * A fresh vm context for one invocation: the bootstrap evaluated in it, its
 * API held by the host, and the slot the bridge reads to find which invocation
 * the context belongs to. Contexts are prepared while the harness is idle, so
 * creating one (~0.5 ms) stays off the invoke path. Lodash (2–7 ms to evaluate)
 * comes in only for tools that use it: evaluated ahead when the tool's code
 * names it, else on first access of `sdk.lodash`.
 */
import { readFileSync } from 'node:fs';
import { types } from 'node:util';
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
   * Runs the microtasks the context has queued, for at most `timeoutMs`;
   * 'timeout' when they were stopped at the limit (what was left never runs).
   */
  drain(timeoutMs: number): 'done' | 'timeout';
}

/**
 * Options of the contexts: `eval`/`new Function` are refused (strings: false),
 * which also keeps code without our import() guard out (see vm-modules-flag.ts),
 * and WebAssembly compilation is refused. Lodash's `_.template` needs `Function`
 * and so is unavailable.
 *
 * Each context has its own microtask queue (`afterEvaluate`), which runs only
 * when the host drains it (`ToolContext.drain`): the host decides when tool
 * code may run, with a time limit, and once an invocation has ended its queue
 * is never drained again — `(async () => { for (;;) await null })()` left
 * behind by a finished tool stops with it instead of starving the next one.
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
    const drain = (timeoutMs: number): 'done' | 'timeout' => {
      try {
        DRAIN_SCRIPT.runInContext(context, { timeout: Math.max(1, Math.ceil(timeoutMs)) });
        return 'done';
      } catch (error) {
        // Read without running anything: a value from the context could carry getters or traps.
        return types.isNativeError(error) &&
          Object.getOwnPropertyDescriptor(error, 'code')?.value === 'ERR_SCRIPT_EXECUTION_TIMEOUT'
          ? 'timeout'
          : 'done';
      }
    };
    return { context, api, slot, drain };
  }
}
