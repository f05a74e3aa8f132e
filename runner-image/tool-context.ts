/**
 * A fresh vm context for one invocation: the bootstrap evaluated in it, its
 * API held by the host, and the slot the bridge reads to find which invocation
 * the context belongs to. Contexts are prepared while the harness is idle, so
 * creating one (~0.5 ms) stays off the invoke path. Lodash (2–7 ms to evaluate)
 * comes in only for tools that use it: evaluated ahead when the tool's code
 * names it, else on first access of `sdk.lodash`. The web platform's globals
 * likewise (URL, whatwg-url, takes 1–4 ms; the streams, web-streams-polyfill,
 * ~0.25 ms; each other group 0.1–0.3 ms): set up ahead when the tool's code
 * names them, else on first read. The URL and streams scripts themselves
 * only define a factory in each context (~10 µs and ~4 µs; see
 * bench/realm-streams-bench.ts).
 */
import { readFileSync } from 'node:fs';
import vm from 'node:vm';
import type { ContextScripts } from './context-scripts.js';

/** What the bootstrap returns; every member lives in the context's realm. */
export interface ContextApi {
  /**
   * Runs the tool function with params, env, the calling client (`sdk.client`,
   * `null` in a test run) and the caller (`sdk.caller`) given as JSON text.
   */
  start(
    tool: unknown,
    paramsJson: string,
    envJson: string,
    clientJson: string,
    callerJson: string,
  ): void;
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
) => number | string | boolean | undefined;

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

/**
 * How every script runs in a tool context. Node's default (`displayErrors`)
 * decorates an error the script throws by reading its `stack` on the host's
 * side: V8 then builds the stack's call sites in the host's realm and hands
 * them to the tool's `Error.prepareStackTrace`, whose `constructor.constructor`
 * is the host's Function. Never.
 */
export const RUN: vm.RunningScriptOptions = Object.freeze({ displayErrors: false });

/**
 * What `vm.createContext` is given. Where Node has it (20.18+, 22.8+),
 * `DONT_CONTEXTIFY`: the context's global is an ordinary object of its own
 * realm, with no host object behind it and no interceptors, so nothing host-side
 * is reachable from it and every global the bootstrap defines and tool code
 * reads is a plain property. Node's contextified global routes each of those
 * through C++ callbacks into a host-side sandbox object: measured here, a
 * context then costs 0.97–1.01 ms of CPU to prepare instead of 0.81–0.89 ms.
 * Elsewhere, a null-prototype sandbox: the context's global must not inherit
 * from the host's Object.prototype (`this.constructor.constructor` would be
 * the host's Function).
 */
function contextGlobal(): vm.Context | typeof vm.constants.DONT_CONTEXTIFY {
  const dontContextify = (vm.constants as Partial<typeof vm.constants> | undefined)
    ?.DONT_CONTEXTIFY;
  return dontContextify ?? Object.create(null);
}

/** Evaluating it does nothing; what matters is the microtask checkpoint `afterEvaluate` runs after it. */
const DRAIN_SCRIPT = new vm.Script('undefined', { filename: 'mcphost-drain.js' });

/**
 * The web platform's globals (realm/web/platform.js installs each as an
 * accessor that sets its group up on first read), by one name per group: the
 * strings that, found in a tool's code, have its next context read that name
 * ahead. Reading one global sets up its whole group.
 */
const WEB_GROUP_TRIGGERS: readonly (readonly [trigger: string, global: string])[] = [
  ['URL', 'URL'],
  ['TextEncoder', 'TextEncoder'],
  ['TextDecoder', 'TextEncoder'],
  ['atob', 'TextEncoder'],
  ['btoa', 'TextEncoder'],
  ['structuredClone', 'structuredClone'],
  ['Abort', 'AbortController'],
  ['Event', 'AbortController'],
  ['DOMException', 'AbortController'],
  ['performance', 'performance'],
  ['crypto', 'crypto'],
  ['fetch', 'fetch'],
  ['Request', 'fetch'],
  // new Request(url) parses its URL in the realm (fetch(url) leaves that to the broker).
  ['Request', 'URL'],
  ['Response', 'fetch'],
  ['Headers', 'fetch'],
  ['Blob', 'Blob'],
  ['File', 'Blob'],
  ['FormData', 'Blob'],
  ['Stream', 'ReadableStream'],
  ['QueuingStrategy', 'ReadableStream'],
];

/** One tiny script per global to read ahead, compiled when first needed. */
const readAheadScripts = new Map<string, vm.Script>();

/**
 * Beyond setting URL up, one parse: its first in a context costs ~0.5 ms more
 * (tr46's Unicode regular expressions are compiled in each context on first use).
 */
const URL_READ_AHEAD = "void new URL('https://example.com/a?b=c#d').host";

function readAheadScript(global: string): vm.Script {
  let script = readAheadScripts.get(global);
  if (script === undefined) {
    const source = global === 'URL' ? URL_READ_AHEAD : `void ${global}`;
    script = new vm.Script(source, { filename: 'mcphost-read-ahead.js' });
    readAheadScripts.set(global, script);
  }
  return script;
}

/** What a new context gets evaluated ahead, predicted from its tool's code. */
export interface ContextPreload {
  /** `sdk.lodash`. */
  lodash: boolean;
  /** Web platform globals to read (and so set up) before the tool runs, one per group. */
  webGlobals: readonly string[];
}

/** A context with nothing evaluated ahead. */
export const NOTHING_PRELOADED: ContextPreload = Object.freeze({
  lodash: false,
  webGlobals: Object.freeze([]),
});

/**
 * What the next context of a tool should have ready, by what its code names:
 * one container serves one tool, so its last code predicts the next. A
 * wrong guess costs time only (a miss sets up on first use).
 */
export function preloadFor(code: string): ContextPreload {
  const webGlobals: string[] = [];
  for (const [trigger, global] of WEB_GROUP_TRIGGERS) {
    if (code.includes(trigger) && !webGlobals.includes(global)) webGlobals.push(global);
  }
  return { lodash: code.includes('lodash'), webGlobals };
}

/** Compiles the bootstrap, lodash, whatwg-url and the streams once; makes contexts from them. */
export class ToolContextFactory {
  readonly #bootstrap: vm.Script;
  readonly #lodashSource: string;
  #lodashScript: vm.Script | undefined;
  #urlScript: vm.Script | undefined;
  #streamsScript: vm.Script | undefined;

  readonly #whatwgUrlSource: string;
  readonly #webStreamsSource: string;

  /**
   * `lodashPath`: file URL or path of lodash.min.js (read now, compiled when
   * first needed); `scripts`: the bootstrap, whatwg-url and the streams (context-scripts.ts).
   */
  constructor(lodashPath: URL | string, scripts: ContextScripts) {
    this.#bootstrap = new vm.Script(scripts.bootstrap, { filename: 'mcphost-bootstrap.js' });
    this.#whatwgUrlSource = scripts.whatwgUrl;
    this.#webStreamsSource = scripts.webStreams;
    this.#lodashSource = readFileSync(lodashPath, 'utf8');
  }

  /**
   * Compiles lodash (~17 ms) if not yet done, wrapped in a function: each
   * context gets that function before any tool code runs, and the host calls
   * it when `sdk.lodash` is first read. Calling a function, unlike running a
   * script while tool code is on the stack, neither drains the tool's
   * microtasks mid-statement nor hands what lodash's start-up throws (through
   * a getter the tool planted on `global` or `self`) to Node, which would
   * read its `stack` in the host's realm (see RUN).
   */
  #compileLodash(): vm.Script {
    this.#lodashScript ??= new vm.Script(`(function () {\n${this.#lodashSource}\n})`, {
      filename: 'lodash.min.js',
      lineOffset: -1,
    });
    return this.#lodashScript;
  }

  /**
   * Compiles whatwg-url (~10 ms) if not yet done: on the first context, which
   * the harness prepares while idle, after `ready`.
   */
  #compileUrl(): vm.Script {
    this.#urlScript ??= new vm.Script(this.#whatwgUrlSource, { filename: 'whatwg-url.js' });
    return this.#urlScript;
  }

  /** Compiles web-streams-polyfill if not yet done, like whatwg-url. */
  #compileStreams(): vm.Script {
    this.#streamsScript ??= new vm.Script(this.#webStreamsSource, {
      filename: 'web-streams-polyfill.js',
    });
    return this.#streamsScript;
  }

  /** A new context ready for one invocation, with what `preload` names evaluated in it now. */
  create(preload: ContextPreload = NOTHING_PRELOADED): ToolContext {
    const context = vm.createContext(contextGlobal(), CONTEXT_OPTIONS);
    // Only defines URL's factory, which the bootstrap takes out of tool code's reach.
    this.#compileUrl().runInContext(context, RUN);
    // Likewise the stream classes' factory.
    this.#compileStreams().runInContext(context, RUN);
    // Defines lodash's function only; nothing of lodash runs until it is called.
    const loadLodash = this.#compileLodash().runInContext(context, RUN) as () => void;
    const slot: BridgeSlot = { target: null };
    const bridge: HostBridge = (kind, a, b, c, d) => {
      // Never throw into the context: a host error is a host object. What the
      // context throws is caught here untouched (never read, never displayed).
      try {
        if (kind === 'lodash') {
          Reflect.apply(loadLodash, undefined, []);
          return undefined;
        }
        const target = slot.target;
        return target === null ? undefined : target(kind, a, b, c, d);
      } catch {
        return undefined;
      }
    };
    const install = this.#bootstrap.runInContext(context, RUN) as (
      bridge: HostBridge,
    ) => ContextApi;
    const api = install(bridge);
    if (preload.lodash) api.preloadLodash();
    for (const global of preload.webGlobals) {
      try {
        readAheadScript(global).runInContext(context, RUN);
      } catch {
        // Not expected (no tool code has run); the tool's own first read reports it.
      }
    }
    const drain = (): void => {
      try {
        DRAIN_SCRIPT.runInContext(context, RUN);
      } catch {
        // Whatever the context threw is its own; it is never inspected here.
      }
    };
    return { context, api, slot, drain };
  }
}
