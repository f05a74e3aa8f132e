// @ts-check
/**
 * structuredClone for tool code: the HTML standard's StructuredSerialize and
 * StructuredDeserialize (§2.7) done in one pass, since both ends are this
 * realm. Written here because the algorithm is short and exact, and a copy
 * through the host (v8.serialize) would hand back host objects. Every kind of
 * value is recognised by the engine's internal slots (a brand-checking
 * intrinsic that throws on anything else), never by `instanceof`, and the
 * copy is built with defineProperty, so a key such as `__proto__` is data.
 */
import {
  ArrayIsArray,
  CtxArray,
  CtxBigInt64Array,
  CtxBigUint64Array,
  CtxDataView,
  CtxDate,
  CtxError,
  CtxEvalError,
  CtxFloat16Array,
  CtxFloat32Array,
  CtxFloat64Array,
  CtxInt16Array,
  CtxInt32Array,
  CtxInt8Array,
  CtxMap,
  CtxObject,
  CtxRangeError,
  CtxReferenceError,
  CtxRegExp,
  CtxSet,
  CtxSyntaxError,
  CtxTypeError,
  CtxUint16Array,
  CtxUint32Array,
  CtxUint8Array,
  CtxUint8ClampedArray,
  CtxURIError,
  ObjectDefineProperty,
  ObjectGetOwnPropertyDescriptor,
  ObjectKeys,
  ObjectPrototypeToString,
  ReflectApply,
  StringCtor,
  append,
  arrayBufferLength,
  bigintValueOf,
  booleanValueOf,
  dataViewBuffer,
  dataViewLength,
  dataViewOffset,
  dateGetTime,
  hasOwn,
  mapEntries,
  mapGet,
  mapHas,
  mapIteratorNext,
  mapSet,
  mapSize,
  numberValueOf,
  promiseThen,
  regexpFlags,
  regexpSource,
  setAdd,
  setIteratorNext,
  setSize,
  setValues,
  sharedArrayBufferLength,
  stringValueOf,
  symbolValueOf,
  typedArrayBuffer,
  typedArrayLength,
  typedArrayOffset,
  typedArrayTag,
  weakMapHas,
  weakRefDeref,
  weakSetHas,
} from '../primordials.js';
import { isPlatformObject, once } from '../webidl.js';
import { domExceptionClass, newDOMException } from './dom-exception.js';

/** structuredClone, created on first need. */
export const structuredCloneFunction = once(function () {
  const exceptionName = /** @type {Function} */ (
    /** @type {PropertyDescriptor} */ (
      ObjectGetOwnPropertyDescriptor(domExceptionClass().prototype, 'name')
    ).get
  );
  /** @type {Record<string, any>} */
  const TYPED_ARRAYS = {
    Int8Array: CtxInt8Array,
    Uint8Array: CtxUint8Array,
    Uint8ClampedArray: CtxUint8ClampedArray,
    Int16Array: CtxInt16Array,
    Uint16Array: CtxUint16Array,
    Int32Array: CtxInt32Array,
    Uint32Array: CtxUint32Array,
    Float32Array: CtxFloat32Array,
    Float64Array: CtxFloat64Array,
    BigInt64Array: CtxBigInt64Array,
    BigUint64Array: CtxBigUint64Array,
  };
  if (CtxFloat16Array !== undefined) TYPED_ARRAYS.Float16Array = CtxFloat16Array;
  /** @type {Record<string, ErrorConstructor>} */
  const ERRORS = {
    Error: CtxError,
    EvalError: CtxEvalError,
    RangeError: CtxRangeError,
    ReferenceError: CtxReferenceError,
    SyntaxError: CtxSyntaxError,
    TypeError: CtxTypeError,
    URIError: CtxURIError,
  };

  /**
   * Whether the intrinsic accepts `value` as its receiver (its brand check).
   * @param {Function | undefined} intrinsic
   * @param {unknown} value
   * @param {unknown[]} [args]
   */
  function branded(intrinsic, value, args) {
    if (intrinsic === undefined) return false;
    try {
      ReflectApply(intrinsic, value, args === undefined ? [] : args);
      return true;
    } catch {
      return false;
    }
  }

  /** @param {string} what */
  function uncloneable(what) {
    return newDOMException(what + ' could not be cloned', 'DataCloneError');
  }

  /**
   * @param {object} target
   * @param {string} key
   * @param {unknown} value
   */
  function defineData(target, key, value) {
    ObjectDefineProperty(target, key, {
      value: value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }

  /**
   * Copies `source`'s own enumerable string-keyed properties, each cloned, onto `target`.
   * @param {any} source
   * @param {object} target
   * @param {Map<unknown, unknown>} memory
   */
  function copyProperties(source, target, memory) {
    const keys = ObjectKeys(source);
    for (let i = 0; i < keys.length; i++) {
      const key = /** @type {string} */ (keys[i]);
      // A getter met earlier may have deleted it (HTML's "if ! HasOwnProperty").
      if (!ReflectApply(hasOwn, source, [key])) continue;
      defineData(target, key, clone(source[key], memory));
    }
  }

  /**
   * @param {unknown} buffer
   * @param {Map<unknown, unknown>} memory
   * @returns {ArrayBuffer}
   */
  function cloneBuffer(buffer, memory) {
    if (ReflectApply(mapHas, memory, [buffer])) return ReflectApply(mapGet, memory, [buffer]);
    if (!branded(arrayBufferLength, buffer)) throw uncloneable('A SharedArrayBuffer');
    const copy = new CtxUint8Array(new CtxUint8Array(/** @type {ArrayBuffer} */ (buffer)));
    const result = ReflectApply(typedArrayBuffer, copy, []);
    ReflectApply(mapSet, memory, [buffer, result]);
    return result;
  }

  /**
   * @param {unknown} value
   * @param {Map<unknown, unknown>} memory values already cloned, to their clones
   * @returns {unknown}
   */
  function clone(value, memory) {
    const type = typeof value;
    if (type === 'symbol') throw uncloneable('A symbol');
    if (value === null || (type !== 'object' && type !== 'function')) return value;
    if (ReflectApply(mapHas, memory, [value])) return ReflectApply(mapGet, memory, [value]);
    if (type === 'function') throw uncloneable('A function');
    const object = /** @type {any} */ (value);
    /** @type {any} */
    let result;
    if (branded(booleanValueOf, object))
      result = CtxObject(ReflectApply(booleanValueOf, object, []));
    else if (branded(numberValueOf, object))
      result = CtxObject(ReflectApply(numberValueOf, object, []));
    else if (branded(stringValueOf, object))
      result = CtxObject(ReflectApply(stringValueOf, object, []));
    else if (branded(bigintValueOf, object))
      result = CtxObject(ReflectApply(bigintValueOf, object, []));
    else if (branded(symbolValueOf, object)) throw uncloneable('A Symbol object');
    else if (branded(dateGetTime, object))
      result = new CtxDate(ReflectApply(dateGetTime, object, []));
    else if (branded(regexpSource, object) && object !== CtxRegExp.prototype) {
      result = new CtxRegExp(
        ReflectApply(regexpSource, object, []),
        ReflectApply(regexpFlags, object, []),
      );
    } else if (branded(arrayBufferLength, object) || branded(sharedArrayBufferLength, object)) {
      return cloneBuffer(object, memory);
    } else if (ReflectApply(typedArrayTag, object, []) !== undefined) {
      const Ctor = TYPED_ARRAYS[ReflectApply(typedArrayTag, object, [])];
      if (Ctor === undefined) throw uncloneable('This typed array');
      const buffer = cloneBuffer(ReflectApply(typedArrayBuffer, object, []), memory);
      result = new Ctor(
        buffer,
        ReflectApply(typedArrayOffset, object, []),
        ReflectApply(typedArrayLength, object, []),
      );
    } else if (branded(dataViewLength, object)) {
      const buffer = cloneBuffer(ReflectApply(dataViewBuffer, object, []), memory);
      result = new CtxDataView(
        buffer,
        ReflectApply(dataViewOffset, object, []),
        ReflectApply(dataViewLength, object, []),
      );
    } else if (branded(mapSize, object)) {
      result = new CtxMap();
      ReflectApply(mapSet, memory, [value, result]);
      /** @type {unknown[]} */
      const entries = [];
      const iterator = ReflectApply(mapEntries, object, []);
      for (
        let step = ReflectApply(mapIteratorNext, iterator, []);
        !step.done;
        step = ReflectApply(mapIteratorNext, iterator, [])
      ) {
        append(entries, step.value);
      }
      for (let i = 0; i < entries.length; i++) {
        const entry = /** @type {[unknown, unknown]} */ (entries[i]);
        ReflectApply(mapSet, result, [clone(entry[0], memory), clone(entry[1], memory)]);
      }
      return result;
    } else if (branded(setSize, object)) {
      result = new CtxSet();
      ReflectApply(mapSet, memory, [value, result]);
      /** @type {unknown[]} */
      const members = [];
      const iterator = ReflectApply(setValues, object, []);
      for (
        let step = ReflectApply(setIteratorNext, iterator, []);
        !step.done;
        step = ReflectApply(setIteratorNext, iterator, [])
      ) {
        append(members, step.value);
      }
      for (let i = 0; i < members.length; i++)
        ReflectApply(setAdd, result, [clone(members[i], memory)]);
      return result;
    } else if (branded(exceptionName, object)) {
      result = newDOMException(object.message, ReflectApply(exceptionName, object, []));
    } else if (ReflectApply(ObjectPrototypeToString, object, []) === '[object Error]') {
      const name = object.name;
      const Ctor =
        typeof name === 'string' && ReflectApply(hasOwn, ERRORS, [name]) ? ERRORS[name] : CtxError;
      const message = ObjectGetOwnPropertyDescriptor(object, 'message');
      result = new /** @type {ErrorConstructor} */ (Ctor)();
      if (message !== undefined && 'value' in message) {
        ObjectDefineProperty(result, 'message', {
          value: StringCtor(message.value),
          writable: true,
          configurable: true,
        });
      }
      const stack = ObjectGetOwnPropertyDescriptor(object, 'stack');
      if (stack !== undefined && typeof stack.value === 'string') {
        ObjectDefineProperty(result, 'stack', {
          value: stack.value,
          writable: true,
          configurable: true,
        });
      }
    } else if (ArrayIsArray(object)) {
      result = new CtxArray(object.length);
      ReflectApply(mapSet, memory, [value, result]);
      copyProperties(object, result, memory);
      return result;
    } else if (
      branded(weakMapHas, object, [{}]) ||
      branded(weakSetHas, object, [{}]) ||
      branded(weakRefDeref, object) ||
      branded(promiseThen, object) ||
      isPlatformObject(object)
    ) {
      throw uncloneable('#<' + describe(object) + '>');
    } else {
      result = {};
      ReflectApply(mapSet, memory, [value, result]);
      copyProperties(object, result, memory);
      return result;
    }
    ReflectApply(mapSet, memory, [value, result]);
    return result;
  }

  /** @param {object} object */
  function describe(object) {
    const tag = ReflectApply(ObjectPrototypeToString, object, []);
    return tag.length > 9 ? tag.slice(8, -1) : 'Object';
  }

  /**
   * @param {unknown} value
   * @param {unknown} [options] {transfer}: transferring is not supported
   */
  function structuredClone(value, options) {
    if (arguments.length === 0)
      throw new CtxTypeError("structuredClone: the 'value' argument is required");
    if (options !== undefined && options !== null) {
      if (typeof options !== 'object')
        throw new CtxTypeError('structuredClone: the options must be an object');
      const transfer = /** @type {any} */ (options).transfer;
      if (transfer !== undefined && !(ArrayIsArray(transfer) && transfer.length === 0)) {
        throw newDOMException(
          'structuredClone: transferring objects is not supported in tool code',
          'DataCloneError',
        );
      }
    }
    return clone(value, new CtxMap());
  }

  return structuredClone;
});
