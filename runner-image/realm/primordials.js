// @ts-check
/* eslint-disable no-restricted-globals -- the one module that reads the globals, before any tool code runs */
/**
 * The language's built-ins the realm code uses, captured once per realm: this
 * module is the first the bootstrap evaluates (tool-context.ts evaluates the
 * bundle in each new context before any tool code exists), so a tool that
 * later replaces `JSON.stringify`, `Promise.prototype.then` or
 * `String.prototype.charCodeAt` only confuses itself. Every other module of
 * the realm takes its built-ins from here and reads none off a global or a
 * prototype when it runs.
 *
 * Methods are kept bare and called with `ReflectApply(method, receiver, args)`;
 * the few called in hot loops are bound to `call` once instead (as fast as a
 * direct call). Accessors of the typed-array, DataView, ArrayBuffer, Map, Set
 * and RegExp prototypes are kept as their getters: calling one is the
 * engine's own brand check, which no property of the object can forge.
 */

/** The context's global object itself (a tool may replace its `globalThis` property). */
export const contextGlobal = globalThis;
/** Atomics where the engine has it, else undefined. */
export const CtxAtomics = typeof Atomics === 'object' ? Atomics : undefined;

export const ReflectApply = Reflect.apply;
export const ReflectOwnKeys = Reflect.ownKeys;

export const CtxObject = Object;
export const CtxFunction = Function;
export const CtxMath = Math;
export const CtxSymbol = Symbol;
export const CtxArrayBuffer = ArrayBuffer;
/** The global `isFinite` (converts its argument, unlike Number.isFinite). */
export const GlobalIsFinite = isFinite;
export const ObjectCreate = Object.create;
export const ObjectFreeze = Object.freeze;
export const ObjectKeys = Object.keys;
export const ObjectDefineProperty = Object.defineProperty;
export const ObjectSetPrototypeOf = Object.setPrototypeOf;
export const ReflectDefineProperty = Reflect.defineProperty;
export const ObjectGetOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
export const ObjectGetPrototypeOf = Object.getPrototypeOf;
export const ObjectPrototypeToString = Object.prototype.toString;
export const hasOwn = Object.prototype.hasOwnProperty;
export const isPrototypeOf = Object.prototype.isPrototypeOf;

export const CtxArray = Array;
export const ArrayIsArray = Array.isArray;
export const arrayJoin = Array.prototype.join;

export const JSONStringify = JSON.stringify;
export const JSONParse = JSON.parse;

export const CtxPromise = Promise;
export const promiseThen = Promise.prototype.then;
export const promiseResolve = Promise.resolve;
export const promiseReject = Promise.reject;

export const CtxError = Error;
export const CtxTypeError = TypeError;
export const CtxRangeError = RangeError;
export const CtxEvalError = EvalError;
export const CtxReferenceError = ReferenceError;
export const CtxSyntaxError = SyntaxError;
export const CtxURIError = URIError;

export const StringCtor = String;
export const StringFromCharCode = String.fromCharCode;
export const stringValueOf = String.prototype.valueOf;
export const charCodeAt = Function.prototype.call.bind(String.prototype.charCodeAt);
export const toLowerCase = Function.prototype.call.bind(String.prototype.toLowerCase);
export const toUpperCase = Function.prototype.call.bind(String.prototype.toUpperCase);
export const stringSlice = Function.prototype.call.bind(String.prototype.slice);

export const NumberCtor = Number;
export const NumberIsFinite = Number.isFinite;
/** The same functions as the globals `parseInt` and `parseFloat`. */
export const NumberParseInt = Number.parseInt;
export const NumberParseFloat = Number.parseFloat;
export const MathTrunc = Math.trunc;
export const numberValueOf = Number.prototype.valueOf;
export const booleanValueOf = Boolean.prototype.valueOf;
export const bigintValueOf = BigInt.prototype.valueOf;
export const SymbolIterator = Symbol.iterator;
export const SymbolToStringTag = Symbol.toStringTag;
export const symbolToString = Symbol.prototype.toString;
export const symbolValueOf = Symbol.prototype.valueOf;
export const functionToString = Function.prototype.toString;

export const CtxRegExp = RegExp;
export const regexpExec = RegExp.prototype.exec;
export const regexpToString = RegExp.prototype.toString;

export const CtxDate = Date;
export const dateGetTime = Date.prototype.getTime;
export const dateToISOString = Date.prototype.toISOString;
export const DateNow = Date.now;

export const CtxMap = Map;
export const mapGet = Map.prototype.get;
export const mapSet = Map.prototype.set;
export const mapHas = Map.prototype.has;
export const mapEntries = Map.prototype.entries;
export const mapIteratorNext = ObjectGetPrototypeOf(new Map().entries()).next;

export const CtxSet = Set;
export const setAdd = Set.prototype.add;
export const setValues = Set.prototype.values;
export const setIteratorNext = ObjectGetPrototypeOf(new Set().values()).next;

export const CtxWeakMap = WeakMap;
export const weakMapGet = WeakMap.prototype.get;
export const weakMapSet = WeakMap.prototype.set;
export const weakMapHas = WeakMap.prototype.has;
export const CtxWeakSet = WeakSet;
export const weakSetAdd = WeakSet.prototype.add;
export const weakSetHas = WeakSet.prototype.has;
export const weakRefDeref = typeof WeakRef === 'function' ? WeakRef.prototype.deref : undefined;

export const CtxInt8Array = Int8Array;
export const CtxUint8Array = Uint8Array;
export const CtxUint8ClampedArray = Uint8ClampedArray;
export const CtxInt16Array = Int16Array;
export const CtxUint16Array = Uint16Array;
export const CtxInt32Array = Int32Array;
export const CtxUint32Array = Uint32Array;
export const CtxFloat32Array = Float32Array;
export const CtxFloat64Array = Float64Array;
export const CtxBigInt64Array = BigInt64Array;
export const CtxBigUint64Array = BigUint64Array;
/** Float16Array where the engine has it (recent V8 only), else undefined. */
export const CtxFloat16Array = /** @type {Function | undefined} */ (
  typeof (/** @type {any} */ (globalThis).Float16Array) === 'function'
    ? /** @type {any} */ (globalThis).Float16Array
    : undefined
);
export const CtxDataView = DataView;
export const ArrayBufferIsView = ArrayBuffer.isView;

/**
 * A getter of an intrinsic prototype; every one asked for here exists in the language.
 * @param {object} prototype
 * @param {PropertyKey} key
 * @returns {Function}
 */
function getterOf(prototype, key) {
  const descriptor = /** @type {PropertyDescriptor} */ (
    ObjectGetOwnPropertyDescriptor(prototype, key)
  );
  return /** @type {Function} */ (descriptor.get);
}

const TypedArrayPrototype = ObjectGetPrototypeOf(Uint8Array.prototype);
/** The typed array's tag (`'Uint8Array'`…), undefined for anything else; never throws. */
export const typedArrayTag = getterOf(TypedArrayPrototype, SymbolToStringTag);
export const typedArrayBuffer = getterOf(TypedArrayPrototype, 'buffer');
export const typedArrayOffset = getterOf(TypedArrayPrototype, 'byteOffset');
export const typedArrayByteLength = getterOf(TypedArrayPrototype, 'byteLength');
export const typedArrayLength = getterOf(TypedArrayPrototype, 'length');
/** %TypedArray%.prototype.set: copies with the engine's own memmove. */
export const typedArraySet = TypedArrayPrototype.set;
export const dataViewBuffer = getterOf(DataView.prototype, 'buffer');
export const dataViewOffset = getterOf(DataView.prototype, 'byteOffset');
export const dataViewLength = getterOf(DataView.prototype, 'byteLength');
export const arrayBufferLength = getterOf(ArrayBuffer.prototype, 'byteLength');
export const sharedArrayBufferLength =
  typeof SharedArrayBuffer === 'function'
    ? getterOf(SharedArrayBuffer.prototype, 'byteLength')
    : undefined;
export const regexpSource = getterOf(RegExp.prototype, 'source');
export const regexpFlags = getterOf(RegExp.prototype, 'flags');
export const mapSize = getterOf(Map.prototype, 'size');
export const setSize = getterOf(Set.prototype, 'size');

/**
 * `promise.then(...)` through the captured `then`.
 * @param {unknown} promise
 * @param {((value: any) => unknown) | undefined} onFulfilled
 * @param {(error: unknown) => unknown} [onRejected]
 * @returns {Promise<any>}
 */
export function then(promise, onFulfilled, onRejected) {
  return ReflectApply(promiseThen, promise, [onFulfilled, onRejected]);
}

/**
 * Whether `pattern` matches `text`, through the captured `exec`.
 * @param {RegExp} pattern
 * @param {string} text
 */
export function matches(pattern, text) {
  return ReflectApply(regexpExec, pattern, [text]) !== null;
}

/**
 * Appends `value` to an array of the realm's own by defining the element,
 * never by assigning it: an assignment to an index the array does not have
 * yet runs a setter tool code put on that index of Array.prototype, handing
 * it the array (a Headers list, a Blob's parts) to rewrite after its checks.
 * The descriptor has no prototype, so no `get` or `set` planted on
 * Object.prototype becomes part of it.
 * @template T
 * @param {T[]} list
 * @param {T} value
 */
export function append(list, value) {
  ReflectDefineProperty(
    list,
    list.length,
    /** @type {PropertyDescriptor} */ ({
      __proto__: null,
      value: value,
      writable: true,
      enumerable: true,
      configurable: true,
    }),
  );
}

/**
 * An array for the realm's own hot loops (code units, bytes): no prototype,
 * so assigning an index it lacks, or reading a hole, meets nothing tool code
 * planted. It has no methods and is not iterable: index it, read its length,
 * give it to ReflectApply as an argument list.
 * @param {number} [length]
 * @returns {any[]}
 */
export function bareArray(length) {
  const list = length === undefined ? [] : new CtxArray(length);
  ObjectSetPrototypeOf(list, null);
  return list;
}
