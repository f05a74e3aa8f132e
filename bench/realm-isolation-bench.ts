/**
 * Realm isolation benchmark (issue 31): what a fresh invocation costs today —
 * a new vm context per invocation with the bootstrap evaluated in it
 * (ToolContextFactory, as the harness does) — against one hardened realm per
 * container (SES `lockdown()` in a vm context, the web platform evaluated and
 * hardened once) with a fresh global per invocation, made three ways:
 *  - `ses`: a `new Compartment({ globals })` evaluates the tool. SES evaluates
 *    with the realm's `eval`, so this realm allows code generation from
 *    strings (today's contexts refuse it), and tool code becomes strict.
 *  - `scope`: lockdown with `evalTaming: 'no-eval'`, code generation still
 *    refused; the host compiles the tool (as today) inside `with (this)` and
 *    runs it with a fresh Compartment's `globalThis` as `this`.
 *  - `bindings`: the same, but the names an invocation owns (the web
 *    platform, the timers, `globalThis`) are closure parameters; every other
 *    free name is the realm's hardened global, read as a global.
 * One process, rounds alternated, bounded loops; CPU from process.cpuUsage,
 * wall p50 per invocation, heap per live invocation, once-per-container costs
 * (each in a fresh child process), an isolation probe, the in-process part of
 * the hostile corpus, and what tool code notices. The per-invocation
 * endowments of the hardened variants (console, sdk.http, timers, the result)
 * are this file's stand-in (REALM_HOST below), not the bootstrap's: splitting
 * install.js is the adoption's work. Needs `ses` (`npm install --no-save ses`);
 * without it only today's figures are printed. Runnable alone:
 * `npx tsx bench/realm-isolation-bench.ts`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import vm from 'node:vm';
import { buildHarness } from '../scripts/build-harness.js';
import { readContextScripts, type ContextScripts } from '../runner-image/context-scripts.js';
import {
  RUN,
  ToolContextFactory,
  preloadFor,
  type ContextApi,
  type HostBridge,
} from '../runner-image/tool-context.js';
import { answerWebCall, startWebClock, type WebClock } from '../runner-image/web-host.js';
import { TOOL_FILENAME, TOOL_LINE_OFFSET, compileToolScript } from '../src/tool-code/index.js';
import { percentile } from './stats.js';

/** Rounds; each runs every variant (order rotated) on every tool. */
const ROUNDS = 30;
/** Invocations per variant and tool in one round; CPU is read around the batch. */
const BATCH = 20;
/** Live invocations held at once to weigh one in the heap. */
const HELD = 200;
/** The script build of ses, evaluated as is in the realm (it defines lockdown, harden, Compartment). */
const SES_PATH = fileURLToPath(new URL('../node_modules/ses/dist/ses.umd.js', import.meta.url));

const TOOLS = {
  trivial: 'return params.n + 1;',
  web: `const bytes = new TextEncoder().encode('héllo ' + params.n);
const url = new URL('https://example.com/a?b=' + params.n);
const headers = new Headers({ 'x-n': String(params.n) });
return [bytes.length, url.searchParams.get('b'), headers.get('x-n')];`,
  // Tool code's own speed: globals read in a hot loop (a with-scope makes each a dynamic lookup).
  loop: `let sum = 0;
for (let i = 0; i < 20000; i++) sum += Math.floor(i / 3) + JSON.stringify(i).length;
return sum;`,
} as const;
type ToolName = keyof typeof TOOLS;

/** A benchmark tool by name, or other code (the probes) as is. */
function codeOf(tool: string): string {
  return Object.hasOwn(TOOLS, tool) ? TOOLS[tool as ToolName] : tool;
}

/** What the host saw of one invocation. */
interface Outcome {
  ok: boolean;
  /** The result's JSON, or `code: message` of a failure. */
  value: string;
  code?: string;
  message?: string;
  logs: string[];
  calls: string[];
}

/** The host side of one invocation: answers the bridge as the harness would, records the end. */
function hostOf(): { bridge: HostBridge; outcome: () => Outcome } {
  const clock: WebClock = startWebClock();
  const seen: Outcome = { ok: false, value: '(no result)', logs: [], calls: [] };
  let ids = 0;
  const bridge: HostBridge = (kind, a, b, c, d) => {
    switch (kind) {
      case 'ok':
        seen.ok = true;
        seen.value = String(a);
        return undefined;
      case 'fail':
        seen.code = String(a);
        seen.message = String(b);
        seen.value = `${seen.code}: ${seen.message}`;
        return undefined;
      case 'log':
        seen.logs.push(String(b));
        return undefined;
      case 'web':
        return answerWebCall(a, b, c, d, clock);
      case 'call':
        seen.calls.push(`${String(a)} ${String(b)}`);
        return ++ids;
      case 'timer':
        return ++ids;
      default:
        return undefined;
    }
  };
  return { bridge, outcome: () => seen };
}

/** One way of running tool code; `prepare` is what the harness does while idle. */
interface Variant {
  readonly name: string;
  /**
   * Makes what one invocation of `tool` (a name in TOOLS, or code) runs in;
   * returns the invocation, to run on the invoke path.
   */
  prepare(tool: string, env?: Record<string, string>): () => Outcome;
}

// ------------------------------------------------------------------ today
function todayVariant(lodashPath: string, scripts: ContextScripts): Variant {
  const factory = new ToolContextFactory(lodashPath, scripts);
  const compiled = new Map<string, vm.Script>();
  return {
    name: 'today (vm context)',
    prepare(tool, env = {}) {
      const code = codeOf(tool);
      const context = factory.create(preloadFor(code));
      return () => {
        let script = compiled.get(code);
        if (script === undefined) compiled.set(code, (script = compileToolScript(code)));
        const host = hostOf();
        context.slot.target = host.bridge;
        const fn: unknown = script.runInContext(context.context, RUN);
        context.api.start(fn, JSON.stringify({ n: 41 }), JSON.stringify(env), 'null', 'null');
        context.drain();
        return host.outcome();
      };
    },
  };
}

// ------------------------------------------------------------------ one hardened realm
/**
 * Evaluated in the container's realm after lockdown and the bootstrap: takes
 * the web platform off the realm's global (reading each name sets its group
 * up), hardens it, drops the shared install's timers, hardens the realm's own
 * global, and returns the per-invocation factory. Its `invocation` is the
 * stand-in for install.js's per-invocation half.
 */
const REALM_HOST = `(function (platformNames) {
  'use strict';
  const platform = {};
  for (const name of platformNames) platform[name] = globalThis[name];
  harden(platform);
  for (const name of ['setTimeout', 'setInterval', 'clearTimeout', 'clearInterval', 'queueMicrotask', 'console']) {
    delete globalThis[name];
  }
  for (const name of platformNames) delete globalThis[name];
  const StartDate = Date;
  const StartMath = Math;
  // The start compartment's Error sets prepareStackTrace and stackTraceLimit for
  // the whole realm; the realm's global gets the compartments' powerless one.
  globalThis.Error = new Compartment({ __options__: true }).globalThis.Error;
  function invocation(bridge) {
    let closed = false;
    const pending = new Map();
    const timers = new Map();
    const logger = (level) => (...args) => { if (!closed) bridge('log', level, args.map(String).join(' ')); };
    const console = { log: logger('log'), info: logger('info'), warn: logger('warn'), error: logger('error'), debug: logger('debug') };
    const callHost = (op, args) => new Promise((resolve, reject) => {
      const id = closed ? undefined : bridge('call', op, JSON.stringify(args));
      if (typeof id !== 'number') reject(new Error('the invocation has ended'));
      else pending.set(id, [resolve, reject]);
    });
    const sdk = {
      http: (request) => callHost('http', request),
      progress: (progress, total, message) => { bridge('progress', progress, total, message); },
    };
    const startTimer = (callback, delay, repeat) => {
      const id = closed ? undefined : bridge('timer', +delay >= 1 ? +delay : 1, repeat);
      if (typeof id !== 'number') return 0;
      timers.set(id, callback);
      return id;
    };
    const stopTimer = (id) => { if (timers.delete(id)) bridge('clear', id); };
    const globals = {
      console,
      setTimeout: (callback, delay) => startTimer(callback, delay, false),
      setInterval: (callback, delay) => startTimer(callback, delay, true),
      clearTimeout: stopTimer,
      clearInterval: stopTimer,
      queueMicrotask: (callback) => { Promise.resolve().then(() => callback()); },
      Date: StartDate,
      Math: StartMath,
    };
    const fail = (error) => {
      let message = 'tool code threw';
      let frame = '';
      try {
        message = String(error !== null && typeof error === 'object' ? error.message : error);
        const found = /tool\\.js:(\\d+):(\\d+)/.exec(String(error.stack));
        if (found !== null) frame = ' (tool.js:' + found[1] + ':' + found[2] + ')';
      } catch {}
      bridge('fail', 'ERR_TOOL_ERROR', message + frame);
    };
    const start = (tool, paramsJson, envJson) => {
      let promise;
      try {
        promise = tool(JSON.parse(paramsJson), Object.freeze(JSON.parse(envJson)), console, sdk);
      } catch (error) {
        fail(error);
        return;
      }
      promise.then((value) => {
        let json;
        try { json = JSON.stringify(value); } catch (error) { fail(error); return; }
        bridge('ok', json === undefined ? 'null' : json);
      }, fail);
    };
    // Ends the invocation without settling anything: nothing of it is queued for the next.
    const end = () => { closed = true; pending.clear(); timers.clear(); };
    return harden({ globals, start, end });
  }
  const compartment = (endowed) => new Compartment({ globals: { ...platform, ...endowed.globals }, __options__: true });
  harden(globalThis);
  return harden({ invocation, compartment });
})`;

/** The web platform's globals, as web-platform.js installs them. */
const PLATFORM_NAMES = [
  'URL',
  'URLSearchParams',
  'TextEncoder',
  'TextDecoder',
  'atob',
  'btoa',
  'structuredClone',
  'DOMException',
  'Event',
  'CustomEvent',
  'EventTarget',
  'AbortController',
  'AbortSignal',
  'crypto',
  'Crypto',
  'SubtleCrypto',
  'CryptoKey',
  'performance',
  'Performance',
  'fetch',
  'Response',
  'Headers',
];

interface RealmInvocation {
  start(tool: unknown, paramsJson: string, envJson: string): void;
  end(): void;
}
interface RealmHost {
  invocation(bridge: HostBridge): RealmInvocation;
  compartment(invocation: RealmInvocation): {
    evaluate(source: string): unknown;
    globalThis: object;
  };
}

/** CPU ms spent by `step`. */
function cpuMs(step: () => void): number {
  const before = process.cpuUsage();
  step();
  const spent = process.cpuUsage(before);
  return (spent.user + spent.system) / 1000;
}

/**
 * How tool code becomes a function in a hardened realm: SES evaluates it in a
 * Compartment (`compartment`), or the host compiles it (as today) and gives it
 * a fresh Compartment's global either as a `with` scope (`scope`) or as
 * closure bindings of the names an invocation owns (`bindings`: the web
 * platform, the timers and `globalThis`; every other free name is the realm's
 * hardened global).
 */
type Evaluation = 'compartment' | 'scope' | 'bindings';

const VARIANT_NAMES: Record<Evaluation, string> = {
  compartment: 'ses (Compartment.evaluate)',
  scope: 'scope (lockdown + with)',
  bindings: 'bindings (lockdown + closure)',
};

/** What an invocation owns in `bindings`: the names a fresh global must shadow. */
const BOUND_NAMES = [
  'globalThis',
  ...PLATFORM_NAMES,
  'setTimeout',
  'setInterval',
  'clearTimeout',
  'clearInterval',
  'queueMicrotask',
];

/**
 * The host-compiled wrappers. Tool code stays sloppy, as today: its `this` in
 * a plain call and an undeclared assignment reach the realm's global, which
 * is hardened and holds only hardened intrinsics (so the write is dropped,
 * as today's writes to frozen objects are).
 */
const WRAPPERS: Record<'scope' | 'bindings', (code: string) => string> = {
  scope: (code) =>
    `(function () { with (this) { return (async function (params, env, console, sdk) {\n${code}\n}); } })`,
  bindings: (code) =>
    `(function (${BOUND_NAMES.join(', ')}) { return (async function (params, env, console, sdk) {\n${code}\n}); })`,
};

/**
 * SES evaluates strict code and needs the realm's eval; the host-compiled
 * variants keep code generation refused and tool code sloppy, where 'min'
 * override taming leaves fewer intrinsics as accessors that throw on
 * assignment (a write to a frozen data property is dropped, as sloppy code's
 * writes to frozen objects are today).
 */
const HOST_COMPILED = { evalTaming: 'no-eval', overrideTaming: 'min' };
const LOCKDOWN_OPTIONS: Record<Evaluation, Record<string, string>> = {
  compartment: { evalTaming: 'safe-eval', overrideTaming: 'moderate' },
  scope: HOST_COMPILED,
  bindings: HOST_COMPILED,
};
/** The host keeps its own console and error handling: SES must not trap or wrap them. */
const LOCKDOWN_COMMON = {
  consoleTaming: 'unsafe',
  errorTrapping: 'none',
  unhandledRejectionTrapping: 'none',
};

/** Builds a hardened realm; `setup` receives the CPU ms of each first-invocation step. */
function hardenedVariant(
  evaluation: Evaluation,
  scripts: ContextScripts,
  sesSource: string,
  setup: Record<string, number>,
): Variant {
  const realm = vm.createContext(vm.constants.DONT_CONTEXTIFY, {
    name: `mcphost realm (${evaluation})`,
    codeGeneration: { strings: evaluation === 'compartment', wasm: false },
    microtaskMode: 'afterEvaluate',
  });
  const run = (source: string, filename: string): unknown =>
    new vm.Script(source, { filename }).runInContext(realm, RUN);
  setup['evaluate ses'] = cpuMs(() => run(sesSource, 'ses.umd.js'));
  setup['lockdown'] = cpuMs(() =>
    run(
      // install.js deletes Atomics.waitAsync, which lockdown freezes: gone before, as the adoption would do it.
      `delete Atomics.waitAsync; lockdown(${JSON.stringify({ ...LOCKDOWN_OPTIONS[evaluation], ...LOCKDOWN_COMMON })})`,
      'lockdown.js',
    ),
  );
  const slot: { target: HostBridge | null } = { target: null };
  const shared: HostBridge = (kind, a, b, c, d) => {
    try {
      return slot.target === null ? undefined : slot.target(kind, a, b, c, d);
    } catch {
      return undefined;
    }
  };
  let host: RealmHost | undefined;
  setup['web platform, hardened'] = cpuMs(() => {
    run(scripts.whatwgUrl, 'whatwg-url.js');
    const install = run(scripts.bootstrap, 'mcphost-bootstrap.js') as (b: HostBridge) => ContextApi;
    install(shared);
    const makeHost = run(REALM_HOST, 'realm-host.js') as (names: string[]) => RealmHost;
    host = makeHost([...PLATFORM_NAMES]);
  });
  const realmHost = host!;
  const scoped = new Map<string, (...values: unknown[]) => unknown>();
  /** The tool's function for this invocation's global. */
  const toolFor = (code: string, invocation: RealmInvocation): unknown => {
    const compartment = realmHost.compartment(invocation);
    if (evaluation === 'compartment') {
      // The same wrapper as today's, evaluated by SES in the compartment's scope.
      return compartment.evaluate(`(async function (params, env, console, sdk) {\n${code}\n})`);
    }
    let outer = scoped.get(code);
    if (outer === undefined) {
      const script = new vm.Script(WRAPPERS[evaluation](code), {
        filename: TOOL_FILENAME,
        lineOffset: TOOL_LINE_OFFSET,
      });
      outer = script.runInContext(realm, RUN) as (...values: unknown[]) => unknown;
      scoped.set(code, outer);
    }
    const global = compartment.globalThis as Record<string, unknown>;
    return evaluation === 'scope'
      ? Reflect.apply(outer, global, [])
      : Reflect.apply(
          outer,
          undefined,
          BOUND_NAMES.map((name) => global[name]),
        );
  };
  const drain = new vm.Script('undefined', { filename: 'mcphost-drain.js' });
  return {
    name: VARIANT_NAMES[evaluation],
    prepare(tool, env = {}) {
      const code = codeOf(tool);
      const host = hostOf();
      const invocation = realmHost.invocation(host.bridge);
      const fn = toolFor(code, invocation);
      return () => {
        slot.target = host.bridge;
        invocation.start(fn, JSON.stringify({ n: 41 }), JSON.stringify(env));
        drain.runInContext(realm, RUN);
        invocation.end();
        slot.target = null;
        return host.outcome();
      };
    },
  };
}

// ------------------------------------------------------------------ measuring
interface Figures {
  cpuUs: number[];
  wallMs: number[];
  invokeMs: number[];
}

/** Rounds alternated across variants (order rotated), each a batch per tool. */
function measure(variants: Variant[]): Map<string, Figures> {
  const figures = new Map<string, Figures>();
  for (const variant of variants) {
    for (const tool of Object.keys(TOOLS) as ToolName[]) {
      figures.set(`${variant.name}/${tool}`, { cpuUs: [], wallMs: [], invokeMs: [] });
    }
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < variants.length; i++) {
      const variant = variants[(round + i) % variants.length]!;
      for (const tool of Object.keys(TOOLS) as ToolName[]) {
        const entry = figures.get(`${variant.name}/${tool}`)!;
        const before = process.cpuUsage();
        for (let n = 0; n < BATCH; n++) {
          const started = performance.now();
          const invoke = variant.prepare(tool);
          const prepared = performance.now();
          const outcome = invoke();
          const ended = performance.now();
          if (!outcome.ok) throw new Error(`${variant.name}/${tool}: ${outcome.value}`);
          entry.wallMs.push(ended - started);
          entry.invokeMs.push(ended - prepared);
        }
        const spent = process.cpuUsage(before);
        entry.cpuUs.push((spent.user + spent.system) / BATCH);
      }
    }
  }
  return figures;
}

/** Heap bytes per live invocation (its context or compartment, prepared and run once). */
function heapPerInvocation(variant: Variant, gc: () => void): number {
  gc();
  const before = process.memoryUsage().heapUsed;
  const held: unknown[] = [];
  for (let i = 0; i < HELD; i++) {
    const invoke = variant.prepare('web');
    invoke();
    held.push(invoke);
  }
  gc();
  const after = process.memoryUsage().heapUsed;
  if (held.length !== HELD) throw new Error('unreachable');
  return (after - before) / HELD;
}

// ------------------------------------------------------------------ isolation and what tool code notices
/** Plants what tool A can; `planted` means it reads back, `dropped` that a sloppy write was ignored. */
const PLANT = `const tried = {};
const attempt = (name, plant, check) => {
  try { plant(); tried[name] = check() ? 'planted' : 'dropped'; } catch (e) { tried[name] = e.name + ': ' + e.message; }
};
const realm = function () { return this; };
attempt('globalThis', () => { globalThis.leftover = env.SECRET; }, () => globalThis.leftover === env.SECRET);
attempt('Object.prototype', () => { Object.prototype.polluted = env.SECRET; }, () => ({}).polluted === env.SECRET);
attempt('Array.prototype', () => { Array.prototype.polluted = env.SECRET; }, () => [].polluted === env.SECRET);
attempt('TextEncoder.prototype', () => { TextEncoder.prototype.x = env.SECRET; }, () => new TextEncoder().x === env.SECRET);
attempt('URL.prototype.toString', () => { URL.prototype.toString = () => env.SECRET; }, () => String(new URL('http://a/')) === env.SECRET);
attempt('Error.prepareStackTrace', () => { Error.prepareStackTrace = () => env.SECRET; }, () => new Error('x').stack === env.SECRET);
attempt('realm global via this', () => { realm().leftover = env.SECRET; realm().Error.stackTraceLimit = 0; }, () => realm().leftover === env.SECRET);
attempt('shared closure (un-awaited fetch)', () => { fetch('https://example.com/?' + env.SECRET).then(() => console.log('late ' + env.SECRET), () => console.log('late ' + env.SECRET)); }, () => true);
return tried;`;

const LOOK = `return {
  globalThis: typeof leftover === 'undefined' ? null : leftover,
  'Object.prototype': ({}).polluted ?? null,
  'Array.prototype': [].polluted ?? null,
  'TextEncoder.prototype': new TextEncoder().x ?? null,
  'URL.prototype.toString': String(new URL('http://a/b')) === 'http://a/b' ? null : String(new URL('http://a/b')),
  'Error.prepareStackTrace': String(new Error('x').stack).includes('s3cret') ? 's3cret' : null,
  'realm global via this': (function () { return this; })()?.leftover ?? null,
};`;

const NOTICE = `const probe = (f) => { try { return f(); } catch (e) { return e.name + ': ' + e.message; } };
class Named extends Error { constructor() { super('m'); this.name = 'Named'; } }
return {
  'Date.now': probe(() => typeof Date.now()),
  'Math.random': probe(() => typeof Math.random()),
  'error.stack': probe(() => { const s = new Error('x').stack; return s === '' ? '(empty)' : /tool\\.js:\\d+/.test(s) ? 'has tool.js:line' : s.slice(0, 40); }),
  require: probe(() => require('fs')),
  'x = 1 (undeclared)': probe(() => { undeclaredName = 1; return typeof undeclaredName === 'number' ? 'creates a global' : 'dropped silently'; }),
  'Object.prototype.x = 1': probe(() => { Object.prototype.x = 1; const written = ({}).x === 1; delete Object.prototype.x; return written ? 'written' : 'dropped silently'; }),
  'e.message = (none of its own)': probe(() => { const e = new Error(); e.message = 'set'; return e.message; }),
  'o.toString = f': probe(() => { const o = {}; o.toString = () => 'mine'; return String(o); }),
  'error.name = (subclass)': probe(() => new Named().name),
  'RegExp.$1': probe(() => { /(a)/.exec('a'); return typeof RegExp.$1; }),
  'new Function': probe(() => typeof new Function('return 1')),
  'this in a plain call': probe(() => { function f() { return this; } return f() === undefined ? 'undefined' : 'a global'; }),
  'typeof Float64Array': typeof Float64Array,
  'typeof Intl': typeof Intl,
  'typeof SharedArrayBuffer': typeof SharedArrayBuffer,
  'typeof harden': typeof harden,
  'Object.isFrozen(Array.prototype)': Object.isFrozen(Array.prototype),
};`;

/** Source texts SES censors by pattern, wherever they stand (strings and comments too). */
const SOURCE_TEXTS = {
  "'<!-- -->' in a string": "return '<p><!-- note --></p>'.length;",
  "'import(' in a comment": "// import('fs') is not available here\nreturn 1;",
};

function probeIsolation(variant: Variant, report: (line: string) => void): void {
  const plant = outcomeOf(variant, PLANT, { SECRET: 's3cret' });
  const look = outcomeOf(variant, LOOK);
  report(`${variant.name}: planting (tool A, env.SECRET) → ${plant.value}`);
  const found = look.ok ? (JSON.parse(look.value) as Record<string, unknown>) : {};
  const seen = Object.entries(found).filter(([, value]) => value !== null);
  const leaked = [look.value, ...look.logs, ...look.calls].some((text) => text.includes('s3cret'));
  report(
    `${variant.name}: next invocation (tool B) → ${look.ok ? (seen.length === 0 ? 'finds none' : `FINDS ${JSON.stringify(seen)}`) : look.value}; A's secret in B's result, logs or calls: ${leaked ? 'YES' : 'no'}; A's calls: ${plant.calls.length}`,
  );
}

function gcFunction(): () => void {
  setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

/** Runs the invocation; an error thrown while preparing it (SES refusing the source) is its outcome. */
function outcomeOf(variant: Variant, code: string, env?: Record<string, string>): Outcome {
  try {
    return variant.prepare(code, env)();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      ok: false,
      value: `refused: ${message}`,
      code: '(refused)',
      message,
      logs: [],
      calls: [],
    };
  }
}

// ------------------------------------------------------------------ the hostile corpus, in-process
const HOSTILE_DIR = new URL('../test/fixtures/hostile/', import.meta.url);
/**
 * The fixtures that end by themselves and fit in this process: the others
 * (endless loops, memory and stdout floods, Atomics.wait) need a container and
 * its deadline. child-process-import needs --experimental-vm-modules, which
 * this process lacks (Node would reject import() with a host-realm error).
 */
const IN_PROCESS_FIXTURES = [
  'child-process-require.js',
  'constructor-escape.js',
  'forged-protocol-lines.js',
  'leftover-wait-async.js',
  'network-access.js',
  'process-binding.js',
  'process-exit.js',
  'tamper-builtins.js',
  'timer-leak.js',
  'web-abort-timers.js',
  'web-constructor-escape.js',
  'web-huge-inputs.js',
  'web-thenable-fetch.js',
  'write-root-filesystem.js',
];

/** Whether the outcome is what the fixture's header expects (test/sandbox/hostile-corpus.test.ts). */
function holds(code: string, outcome: Outcome): boolean {
  const header = (key: string) => new RegExp(`^// ${key}: (.+)$`, 'm').exec(code)?.[1]?.trim();
  const expected = header('expect');
  const message = header('message');
  const messageNot = header('message-not');
  if (/ESCAPED/.test(outcome.message ?? '')) return false;
  if (expected === 'ok') return outcome.ok;
  return (
    !outcome.ok &&
    outcome.code === expected &&
    (message === undefined || new RegExp(message).test(outcome.message ?? '')) &&
    (messageNot === undefined || !new RegExp(messageNot).test(outcome.message ?? ''))
  );
}

/**
 * The two pollution cases of hostile-corpus.test.ts: the polluter must
 * return 1 and the probe find nothing, as written there.
 */
const POLLUTION_CASES = [
  {
    name: 'pollution',
    polluter: 'Object.prototype.polluted = "yes"; globalThis.leftover = env.SECRET; return 1;',
    probe: 'return [({}).polluted ?? null, typeof leftover];',
    expected: '[null,"undefined"]',
  },
  {
    name: 'web-pollution',
    polluter: `URL.prototype.toString = () => 'polluted'; URLSearchParams.prototype.polluted = true;
      TextDecoder.prototype.decode = () => 'polluted'; Headers.prototype.polluted = true;
      Response.prototype.polluted = true; AbortSignal.prototype.polluted = true;
      Object.getPrototypeOf(crypto).randomUUID = () => 'polluted'; globalThis.btoa = () => 'polluted';
      return 1;`,
    probe: `return [String(new URL('http://a/b')), 'polluted' in URLSearchParams.prototype,
      new TextDecoder().decode(new Uint8Array([104, 105])), 'polluted' in Headers.prototype,
      'polluted' in Response.prototype, 'polluted' in AbortSignal.prototype,
      crypto.randomUUID().length, btoa('hi')];`,
    expected: '["http://a/b",false,"hi",false,false,false,36,"aGk="]',
  },
];

function runCorpus(variants: Variant[], report: (line: string) => void): void {
  const today = variants[0]!;
  const fixtures = IN_PROCESS_FIXTURES.map((name) => ({
    name,
    code: readFileSync(new URL(name, HOSTILE_DIR), 'utf8'),
  }));
  // A fixture that awaits a reply or an import() gets no result without the harness's host: not counted.
  const comparable = fixtures.filter((fixture) =>
    holds(fixture.code, outcomeOf(today, fixture.code)),
  );
  const left = fixtures.filter((fixture) => !comparable.includes(fixture));
  for (const variant of variants) {
    const differs: string[] = [];
    for (const fixture of comparable) {
      const outcome = outcomeOf(variant, fixture.code);
      if (!holds(fixture.code, outcome))
        differs.push(`${fixture.name} → ${outcome.value.slice(0, 120)}`);
      const next = outcomeOf(variant, 'return params.n + 1;');
      if (next.value !== '42' || next.logs.length > 0)
        differs.push(`${fixture.name}, next call → ${next.value}`);
    }
    for (const pollution of POLLUTION_CASES) {
      const first = outcomeOf(variant, pollution.polluter, { SECRET: 's3cret' });
      const probe = outcomeOf(variant, pollution.probe);
      if (first.value !== '1')
        differs.push(`${pollution.name} polluter → ${first.value.slice(0, 120)}`);
      if (probe.value !== pollution.expected)
        differs.push(`${pollution.name} probe → ${probe.value}`);
    }
    const refused = left
      .map((fixture) => ({ name: fixture.name, outcome: outcomeOf(variant, fixture.code) }))
      .filter(({ outcome }) => outcome.code === '(refused)')
      .map(({ name, outcome }) => `${name} (${outcome.message?.slice(0, 60)})`);
    const total = comparable.length + 2 * POLLUTION_CASES.length;
    report(
      `hostile corpus in-process, ${variant.name}: ${total - differs.length}/${total} checks hold as the tests write them${differs.length === 0 ? '' : `; differ: ${differs.join(' | ')}`}${refused.length === 0 ? '' : `; refused before running: ${refused.join(', ')}`}`,
    );
  }
  report(
    `(not counted: ${left.map((fixture) => fixture.name).join(', ')} — they await replies or import(), which only the harness answers)`,
  );
}

/** harness-leftovers.test.ts's first case, shortened: work queued behind return runs in its own drain. */
function runLeftovers(variant: Variant, report: (line: string) => void): void {
  const burn = `Promise.resolve().then(() => null).then(() => {
  const end = Date.now() + 30; while (Date.now() < end);
});
return 'x';`;
  const started = performance.now();
  const first = outcomeOf(variant, burn);
  const took = performance.now() - started;
  const next = outcomeOf(variant, 'return params.n + 1;');
  report(
    `leftovers, ${variant.name}: burn queued behind return → ${first.value} after ${took.toFixed(0)} ms (≥ 30: ran before the result); next → ${next.value}, logs ${JSON.stringify(next.logs)}`,
  );
}

// ------------------------------------------------------------------ once per container, in a fresh process
type Kind = 'today' | Evaluation;

/** What a container pays before its first result, in a process of its own (nothing compiled yet). */
async function coldSetup(kind: Kind): Promise<Record<string, number>> {
  const gc = gcFunction();
  const { lodashPath, contextScriptsPath } = await buildHarness();
  const scripts = readContextScripts(contextScriptsPath);
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const setup: Record<string, number> = {};
  let variant: Variant | undefined;
  if (kind === 'today') {
    setup['factory'] = cpuMs(() => {
      variant = todayVariant(lodashPath, scripts);
    });
  } else {
    const sesSource = readFileSync(SES_PATH, 'utf8');
    variant = hardenedVariant(kind, scripts, sesSource, setup);
  }
  setup['first invocation (web tool)'] = cpuMs(() => variant!.prepare('web')());
  setup['second invocation (web tool)'] = cpuMs(() => variant!.prepare('web')());
  gc();
  setup['heap held (MiB)'] = (process.memoryUsage().heapUsed - heapBefore) / 1024 / 1024;
  return setup;
}

/** The argument that makes this file measure one variant's coldSetup and print it as JSON. */
const COLD_FLAG = '--cold-setup';

function coldSetupInChild(kind: Kind): Record<string, number> {
  const args = [...process.execArgv, fileURLToPath(import.meta.url), COLD_FLAG, kind];
  const output = execFileSync(process.execPath, args, { encoding: 'utf8' });
  return JSON.parse(output.trim().split('\n').at(-1)!) as Record<string, number>;
}

/** Runs the benchmark, reporting lines of figures with ratios against today's. */
export async function runRealmIsolationBench(report: (line: string) => void): Promise<void> {
  const { lodashPath, contextScriptsPath } = await buildHarness();
  const scripts = readContextScripts(contextScriptsPath);
  const variants: Variant[] = [todayVariant(lodashPath, scripts)];
  const kinds: Kind[] = ['today'];
  if (existsSync(SES_PATH)) {
    const sesSource = readFileSync(SES_PATH, 'utf8');
    for (const evaluation of ['compartment', 'scope', 'bindings'] as const) {
      variants.push(hardenedVariant(evaluation, scripts, sesSource, {}));
      kinds.push(evaluation);
    }
  } else {
    report(`ses is not installed (${SES_PATH}): only today's figures; npm install --no-save ses`);
  }
  for (const [index, kind] of kinds.entries()) {
    const steps = Object.entries(coldSetupInChild(kind)).map(
      ([step, value]) => `${step} ${value.toFixed(1)}`,
    );
    report(
      `once per container (fresh process, CPU ms), ${variants[index]!.name}: ${steps.join(', ')}`,
    );
  }
  const figures = measure(variants);
  const today = variants[0]!;
  const base = (tool: ToolName) => figures.get(`${today.name}/${tool}`)!;
  for (const tool of Object.keys(TOOLS) as ToolName[]) {
    for (const variant of variants) {
      const entry = figures.get(`${variant.name}/${tool}`)!;
      const cpu = percentile(entry.cpuUs, 50);
      const wall = percentile(entry.wallMs, 50);
      const invoke = percentile(entry.invokeMs, 50);
      const ratio = (value: number, baseline: number) => (value / baseline).toFixed(2);
      report(
        `${tool} tool, ${variant.name}: CPU ${cpu.toFixed(0)} µs/invocation (${ratio(cpu, percentile(base(tool).cpuUs, 50))}×), wall p50 ${wall.toFixed(3)} ms (${ratio(wall, percentile(base(tool).wallMs, 50))}×), p90 ${percentile(entry.wallMs, 90).toFixed(3)} ms; invoke path p50 ${invoke.toFixed(3)} ms`,
      );
    }
  }
  report(
    `(${ROUNDS} rounds × ${BATCH} invocations per variant and tool, alternated; CPU: median of the rounds' means, preparing included; "invoke path" leaves out what the harness prepares while idle)`,
  );
  const gc = gcFunction();
  for (const variant of variants) {
    report(
      `heap per live invocation (web tool run once), ${variant.name}: ${(heapPerInvocation(variant, gc) / 1024).toFixed(1)} KiB (${HELD} held)`,
    );
  }
  for (const variant of variants) probeIsolation(variant, report);
  runCorpus(variants, report);
  for (const variant of variants) runLeftovers(variant, report);
  for (const variant of variants) {
    report(`what tool code notices, ${variant.name}: ${outcomeOf(variant, NOTICE).value}`);
    const sources = Object.entries(SOURCE_TEXTS).map(
      ([what, code]) => `${what} → ${outcomeOf(variant, code).value.slice(0, 80)}`,
    );
    report(`source text, ${variant.name}: ${sources.join('; ')}`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv[2] === COLD_FLAG) {
    console.log(JSON.stringify(await coldSetup(process.argv[3] as Kind)));
  } else {
    console.log(`realm isolation bench — node ${process.version}, ${new Date().toISOString()}`);
    await runRealmIsolationBench((line) => console.log(`  ${line}`));
  }
}
