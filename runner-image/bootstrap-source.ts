/**
 * The code that runs inside every tool context before tool code does. It is a
 * string, not a function of this module, because it must be compiled in the
 * context's realm: every object and function tool code can reach is created
 * here, in that realm.
 *
 * It receives ONE host function (the bridge) and keeps it in a closure; it
 * calls it directly (never through a property tool code could replace) and
 * only with primitives. The bridge returns primitives only. Intrinsics are
 * captured before tool code runs, so tool code that replaces JSON.stringify or
 * Promise.prototype.then only confuses itself.
 *
 * Evaluating it yields `install(bridge)`, which returns the context API the
 * host drives (see `ContextApi` in tool-context.ts).
 */
export const BOOTSTRAP_SOURCE = String.raw`(function install(hostBridge) {
'use strict';
const G = globalThis;
const ObjectCreate = Object.create;
const ObjectFreeze = Object.freeze;
const ObjectKeys = Object.keys;
const ObjectDefineProperty = Object.defineProperty;
const ObjectGetPrototypeOf = Object.getPrototypeOf;
const ObjectToString = Object.prototype.toString;
const ReflectApply = Reflect.apply;
const ArrayIsArray = Array.isArray;
const JSONStringify = JSON.stringify;
const JSONParse = JSON.parse;
const CtxPromise = Promise;
const promiseThen = Promise.prototype.then;
const promiseResolve = Promise.resolve;
const promiseReject = Promise.reject;
const CtxError = Error;
const CtxTypeError = TypeError;
const CtxRangeError = RangeError;
const StringCtor = String;
const symbolToString = Symbol.prototype.toString;
const functionToString = Function.prototype.toString;
const regexpExec = RegExp.prototype.exec;
const regexpToString = RegExp.prototype.toString;
const dateToISOString = Date.prototype.toISOString;
const mapEntries = Map.prototype.entries;
const setValues = Set.prototype.values;
const iteratorNext = ObjectGetPrototypeOf([][Symbol.iterator]()).next;
const mapIteratorNext = ObjectGetPrototypeOf(new Map().entries()).next;
const setIteratorNext = ObjectGetPrototypeOf(new Set().values()).next;
const CtxMap = Map;
const CtxSet = Set;
const CtxDate = Date;
const CtxRegExp = RegExp;
const TOOL_FRAME = /tool\.js:(\d+):(\d+)/;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const FORMAT_DIRECTIVE = /%[sdifjoOc%]/;
const MAX_INSPECT_DEPTH = 3;
const MAX_INSPECT_ITEMS = 100;

// The one way to the host. What the host threw (only a stack overflow can
// reach here) is never shown: it is a host object.
function bridge(kind, a, b, c, d) {
  try {
    return hostBridge(kind, a, b, c, d);
  } catch {
    throw new CtxRangeError('Maximum call stack size exceeded');
  }
}

function then(promise, onFulfilled, onRejected) {
  return ReflectApply(promiseThen, promise, [onFulfilled, onRejected]);
}

function makeError(code, message) {
  const error = new CtxError(message);
  ObjectDefineProperty(error, 'code', { value: code, writable: true, enumerable: true, configurable: true });
  return error;
}

function rejected(code, message) {
  return ReflectApply(promiseReject, CtxPromise, [makeError(code, message)]);
}

function messageOf(error) {
  try {
    if (error !== null && typeof error === 'object' && typeof error.message === 'string') return error.message;
    return StringCtor(error);
  } catch {
    return 'a value that cannot be described';
  }
}

// ---------------------------------------------------------------- brokered calls
let closed = false;
const pending = ObjectCreate(null);

function callHost(op, args) {
  let argsJson;
  try {
    argsJson = JSONStringify(args);
  } catch (error) {
    return rejected('ERR_INVALID_ARGUMENT', 'arguments of ' + op + ' are not JSON-serialisable: ' + messageOf(error));
  }
  if (typeof argsJson !== 'string') return rejected('ERR_INVALID_ARGUMENT', 'arguments of ' + op + ' are missing');
  return new CtxPromise(function (resolve, reject) {
    if (closed) {
      reject(makeError('ERR_CANCELLED', 'the invocation has ended'));
      return;
    }
    const id = bridge('call', op, argsJson);
    if (typeof id !== 'number') {
      reject(makeError('ERR_CANCELLED', 'the invocation has ended'));
      return;
    }
    // A negative id is minus the largest line the host may send: these arguments are over it.
    if (id < 0) {
      reject(makeError('ERR_INVALID_ARGUMENT', 'arguments of ' + op + ' are too large: more than ' + (-id) + ' bytes once encoded as JSON; send less (a smaller body, fewer or smaller values)'));
      return;
    }
    pending[id] = [resolve, reject];
  });
}

function settle(id, ok, payload, code) {
  const entry = pending[id];
  if (entry === undefined) return false;
  delete pending[id];
  if (!ok) {
    entry[1](makeError(code, payload));
    return true;
  }
  let value;
  try {
    value = JSONParse(payload);
  } catch (error) {
    entry[1](makeError('ERR_INTERNAL', 'the reply could not be read: ' + messageOf(error)));
    return true;
  }
  entry[0](value);
  return true;
}

function toResponse(value) {
  const status = value.status;
  const body = value.body;
  const headers = value.headers;
  return ObjectFreeze({
    status: function status_() { return status; },
    body: function body_() { return body; },
    headers: function headers_() { return JSONParse(JSONStringify(headers)); },
    json: function json() { return JSONParse(body); },
  });
}

function http(request) {
  if (request === null || typeof request !== 'object') {
    return rejected('ERR_INVALID_ARGUMENT', 'sdk.http expects an object {method, url, headers?, body?}');
  }
  const args = { method: request.method, url: request.url, headers: request.headers, body: request.body };
  return then(callHost('http', args), toResponse);
}

function db(target) {
  if (target === null || typeof target !== 'object') {
    throw makeError('ERR_INVALID_ARGUMENT', 'sdk.db expects an object {type, connection}');
  }
  const type = target.type;
  const connection = target.connection;
  return ObjectFreeze({
    select: function select(table, where) {
      return callHost('db.select', { type: type, connection: connection, table: table, where: where === undefined ? {} : where });
    },
    insert: function insert(table, row) {
      return callHost('db.insert', { type: type, connection: connection, table: table, row: row });
    },
    query: function query(sql, values) {
      return callHost('db.query', { type: type, connection: connection, sql: sql, values: values === undefined ? [] : values });
    },
  });
}

// lodash is evaluated in this context on first use (2–7 ms of CPU): most tools
// never touch it, and those that do get it evaluated ahead, while idle (see
// ToolContextFactory.create).
let lodashValue;
function lodash() {
  if (lodashValue === undefined) {
    G.self = G; // lodash looks for a global 'self' to attach to
    bridge('lodash');
    lodashValue = G._;
    delete G._;
    delete G.self;
  }
  return lodashValue;
}
const sdk = { http: http, db: db };
ObjectDefineProperty(sdk, 'lodash', { enumerable: true, configurable: false, get: lodash });

// ---------------------------------------------------------------- console
function quote(text) {
  return "'" + text + "'";
}

function keyText(key) {
  return ReflectApply(regexpExec, IDENTIFIER, [key]) !== null ? key : quote(key);
}

function inspectFunction(value) {
  let source = '';
  try { source = ReflectApply(functionToString, value, []); } catch {}
  const name = typeof value.name === 'string' && value.name !== '' ? value.name : '';
  if (source.slice(0, 5) === 'class') return '[class ' + (name || '(anonymous)') + ']';
  return '[Function: ' + (name || '(anonymous)') + ']';
}

function isError(value) {
  return value instanceof CtxError || ReflectApply(ObjectToString, value, []) === '[object Error]';
}

function inspect(value, depth, seen, nested) {
  switch (typeof value) {
    case 'string': return nested ? quote(value) : value;
    case 'number': return value === 0 && 1 / value < 0 ? '-0' : StringCtor(value);
    case 'bigint': return StringCtor(value) + 'n';
    case 'symbol': return ReflectApply(symbolToString, value, []);
    case 'undefined': return 'undefined';
    case 'boolean': return value ? 'true' : 'false';
    case 'function': return inspectFunction(value);
  }
  if (value === null) return 'null';
  if (isError(value)) {
    const stack = value.stack;
    if (typeof stack === 'string' && stack !== '') return nested ? '[' + stack + ']' : stack;
    return StringCtor(value.name) + ': ' + StringCtor(value.message);
  }
  if (value instanceof CtxDate) {
    try { return ReflectApply(dateToISOString, value, []); } catch { return 'Invalid Date'; }
  }
  if (value instanceof CtxRegExp) return ReflectApply(regexpToString, value, []);
  for (let i = 0; i < seen.length; i++) if (seen[i] === value) return '[Circular]';
  if (ArrayIsArray(value)) {
    if (value.length === 0) return '[]';
    if (depth > MAX_INSPECT_DEPTH) return '[Array]';
    seen[seen.length] = value;
    const parts = [];
    const shown = value.length < MAX_INSPECT_ITEMS ? value.length : MAX_INSPECT_ITEMS;
    for (let i = 0; i < shown; i++) parts[parts.length] = inspect(value[i], depth + 1, seen, true);
    if (value.length > shown) parts[parts.length] = '... ' + (value.length - shown) + ' more items';
    seen.length = seen.length - 1;
    return '[ ' + parts.join(', ') + ' ]';
  }
  if (value instanceof CtxMap || value instanceof CtxSet) {
    const isMap = value instanceof CtxMap;
    if (depth > MAX_INSPECT_DEPTH) return isMap ? '[Map]' : '[Set]';
    seen[seen.length] = value;
    const parts = [];
    const iterator = isMap ? ReflectApply(mapEntries, value, []) : ReflectApply(setValues, value, []);
    const next = isMap ? mapIteratorNext : setIteratorNext;
    let size = 0;
    for (let step = ReflectApply(next, iterator, []); !step.done; step = ReflectApply(next, iterator, [])) {
      size++;
      if (parts.length >= MAX_INSPECT_ITEMS) continue;
      parts[parts.length] = isMap
        ? inspect(step.value[0], depth + 1, seen, true) + ' => ' + inspect(step.value[1], depth + 1, seen, true)
        : inspect(step.value, depth + 1, seen, true);
    }
    seen.length = seen.length - 1;
    const head = (isMap ? 'Map(' : 'Set(') + size + ') ';
    return parts.length === 0 ? head + '{}' : head + '{ ' + parts.join(', ') + ' }';
  }
  const keys = ObjectKeys(value);
  if (keys.length === 0) return '{}';
  if (depth > MAX_INSPECT_DEPTH) return '[Object]';
  seen[seen.length] = value;
  const parts = [];
  const shown = keys.length < MAX_INSPECT_ITEMS ? keys.length : MAX_INSPECT_ITEMS;
  for (let i = 0; i < shown; i++) {
    const key = keys[i];
    let text;
    try { text = inspect(value[key], depth + 1, seen, true); } catch { text = '[unreadable]'; }
    parts[parts.length] = keyText(key) + ': ' + text;
  }
  if (keys.length > shown) parts[parts.length] = '... ' + (keys.length - shown) + ' more properties';
  seen.length = seen.length - 1;
  return '{ ' + parts.join(', ') + ' }';
}

function inspectSafely(value, nested) {
  try {
    return inspect(value, 0, [], nested);
  } catch (error) {
    return '[uninspectable: ' + messageOf(error) + ']';
  }
}

// Like console: a first string argument may hold %s %d %i %f %j %o %O %c %%.
function formatArguments(args) {
  let text = '';
  let next = 0;
  if (typeof args[0] === 'string' && ReflectApply(regexpExec, FORMAT_DIRECTIVE, [args[0]]) !== null) {
    const template = args[0];
    next = 1;
    for (let i = 0; i < template.length; i++) {
      const char = template[i];
      if (char !== '%' || i + 1 >= template.length) { text += char; continue; }
      const directive = template[i + 1];
      if (directive === '%') { text += '%'; i++; continue; }
      if ('sdifjoOc'.indexOf(directive) === -1) { text += char; continue; }
      i++;
      if (next >= args.length) { text += '%' + directive; continue; }
      const arg = args[next++];
      if (directive === 's') text += typeof arg === 'string' ? arg : inspectSafely(arg, true);
      else if (directive === 'd' || directive === 'i') text += typeof arg === 'bigint' ? StringCtor(arg) + 'n' : StringCtor(directive === 'i' ? parseInt(arg) : +arg);
      else if (directive === 'f') text += StringCtor(parseFloat(arg));
      else if (directive === 'j') { try { text += JSONStringify(arg); } catch { text += '[Circular]'; } }
      else if (directive === 'c') { /* CSS: ignored, as in Node */ }
      else text += inspectSafely(arg, true);
    }
  }
  for (let i = next; i < args.length; i++) {
    if (i > 0) text += ' ';
    text += inspectSafely(args[i], false);
  }
  return text;
}

function logger(level) {
  return function () {
    const args = [];
    for (let i = 0; i < arguments.length; i++) args[i] = arguments[i];
    bridge('log', level, formatArguments(args));
  };
}

const toolConsole = ObjectFreeze({
  log: logger('log'),
  info: logger('info'),
  warn: logger('warn'),
  error: logger('error'),
  debug: logger('debug'),
  trace: logger('debug'),
  dir: logger('log'),
});

// ---------------------------------------------------------------- timers
const timers = ObjectCreate(null);

function startTimer(callback, delay, args, repeat) {
  if (typeof callback !== 'function') throw new CtxTypeError('The "callback" argument must be of type function');
  let ms = +delay;
  if (!(ms >= 1 && ms <= 2147483647)) ms = 1;
  const id = bridge('timer', ms, repeat);
  if (typeof id !== 'number') return 0;
  timers[id] = [callback, args, repeat];
  return id;
}

function stopTimer(id) {
  if (typeof id !== 'number' || timers[id] === undefined) return;
  delete timers[id];
  bridge('clear', id);
}

function restArguments(args, from) {
  const rest = [];
  for (let i = from; i < args.length; i++) rest[rest.length] = args[i];
  return rest;
}

G.setTimeout = function setTimeout(callback, delay) { return startTimer(callback, delay, restArguments(arguments, 2), false); };
G.setInterval = function setInterval(callback, delay) { return startTimer(callback, delay, restArguments(arguments, 2), true); };
G.clearTimeout = function clearTimeout(id) { stopTimer(id); };
G.clearInterval = function clearInterval(id) { stopTimer(id); };
G.queueMicrotask = function queueMicrotask(callback) {
  if (typeof callback !== 'function') throw new CtxTypeError('The "callback" argument must be of type function');
  then(ReflectApply(promiseResolve, CtxPromise, []), function () { callback(); });
};

function fire(id) {
  const timer = timers[id];
  if (timer === undefined || closed) return;
  if (!timer[2]) delete timers[id];
  try {
    ReflectApply(timer[0], undefined, timer[1]);
  } catch (error) {
    fail(error);
  }
}

// ---------------------------------------------------------------- the result
function pathKey(key) {
  return ReflectApply(regexpExec, IDENTIFIER, [key]) !== null ? '.' + key : '[' + JSONStringify(key) + ']';
}

// Finds why JSON.stringify refused a value, with the path to the culprit.
function findUnserialisable(value, path, stack) {
  if (value !== null && (typeof value === 'object' || typeof value === 'bigint') && typeof value.toJSON === 'function') {
    value = value.toJSON();
  }
  if (typeof value === 'bigint') return 'a BigInt at ' + (path || 'the top level');
  if (value === null || typeof value !== 'object') return null;
  for (let i = 0; i < stack.length; i++) if (stack[i] === value) return 'a circular reference at ' + (path || 'the top level');
  stack[stack.length] = value;
  let found = null;
  if (ArrayIsArray(value)) {
    for (let i = 0; i < value.length && found === null; i++) found = findUnserialisable(value[i], path + '[' + i + ']', stack);
  } else {
    const keys = ObjectKeys(value);
    for (let i = 0; i < keys.length && found === null; i++) found = findUnserialisable(value[keys[i]], path + pathKey(keys[i]), stack);
  }
  stack.length = stack.length - 1;
  return found;
}

function describeUnserialisable(value, error) {
  let culprit = null;
  try { culprit = findUnserialisable(value, '', []); } catch {}
  if (culprit !== null) return 'result contains ' + culprit + '; return JSON data instead';
  return 'result cannot be serialised to JSON: ' + messageOf(error);
}

function succeed(value) {
  if (value === undefined) {
    bridge('ok', 'null');
    return;
  }
  const kind = typeof value;
  if (kind === 'function' || kind === 'symbol' || kind === 'bigint') {
    const what = kind === 'bigint' ? 'a BigInt' : 'a ' + kind;
    bridge('fail', 'ERR_RESULT_NOT_SERIALISABLE', 'result is ' + what + '; return JSON data (object, array, string, number, boolean or null)');
    return;
  }
  let json;
  try {
    json = JSONStringify(value);
  } catch (error) {
    bridge('fail', 'ERR_RESULT_NOT_SERIALISABLE', describeUnserialisable(value, error));
    return;
  }
  bridge('ok', typeof json === 'string' ? json : 'null');
}

function fail(thrown) {
  let message;
  let line;
  let column;
  try {
    if (thrown !== null && (typeof thrown === 'object' || typeof thrown === 'function') && typeof thrown.message === 'string') {
      message = thrown.message;
      const stack = thrown.stack;
      const frame = typeof stack === 'string' ? ReflectApply(regexpExec, TOOL_FRAME, [stack]) : null;
      if (frame !== null) {
        line = +frame[1];
        column = +frame[2];
      }
    } else {
      message = StringCtor(thrown);
    }
  } catch {
    message = 'tool code threw a value that cannot be described';
  }
  bridge('fail', 'ERR_TOOL_ERROR', typeof message === 'string' ? message : 'tool code threw', line, column);
}

// ---------------------------------------------------------------- the API the host drives
function start(tool, paramsJson, envJson) {
  const params = JSONParse(paramsJson);
  const env = ObjectFreeze(JSONParse(envJson));
  let promise;
  try {
    promise = ReflectApply(tool, undefined, [params, env, toolConsole, sdk]);
  } catch (error) {
    fail(error);
    return;
  }
  then(promise, succeed, fail);
}

function cancel() {
  closed = true;
  const ids = ObjectKeys(timers);
  for (let i = 0; i < ids.length; i++) delete timers[ids[i]];
  const calls = ObjectKeys(pending);
  for (let i = 0; i < calls.length; i++) {
    const entry = pending[calls[i]];
    delete pending[calls[i]];
    entry[1](makeError('ERR_CANCELLED', 'the invocation was cancelled'));
  }
}

ObjectFreeze(sdk);

// What the engine settles on its own schedule, outside the drains the host
// controls (see tool-context.ts): a FinalizationRegistry callback would run
// tool code after its invocation ended; a timed-out Atomics.waitAsync, or the
// refusal of WebAssembly.compile (code generation is off), would settle after
// the drain and leave the tool waiting for one that never comes.
delete G.FinalizationRegistry;
delete G.WebAssembly;
if (typeof Atomics === 'object') delete Atomics.waitAsync;

/** Evaluates lodash now (while idle), so the tool's first sdk.lodash costs nothing. */
function preloadLodash() {
  lodash();
}

return ObjectFreeze({ start: start, settle: settle, fire: fire, cancel: cancel, preloadLodash: preloadLodash });
})`;
