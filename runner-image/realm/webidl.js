// @ts-check
/**
 * What the web platform's interfaces share, after WebIDL: brand checks
 * against internal state kept in WeakMaps of this realm (never on the
 * objects, so tool code can neither read nor forge it), option dictionaries
 * read once, constants on an interface and its prototype, and the record of
 * which prototypes are platform objects (structuredClone refuses them).
 */
import {
  CtxTypeError,
  MathTrunc,
  NumberIsFinite,
  ObjectDefineProperty,
  ObjectFreeze,
  ReflectApply,
  append,
  isPrototypeOf,
  weakMapGet,
  weakMapSet,
} from './primordials.js';

/**
 * A factory run once, on first need: an interface is created when tool code
 * first reads it (contexts are made for every invocation; most never do).
 * @template T
 * @param {() => T} make
 * @returns {() => T}
 */
export function once(make) {
  /** @type {{ value: T } | null} */
  let made = null;
  return function () {
    if (made === null) made = { value: make() };
    return made.value;
  };
}

/**
 * The internal state of `object`, or a TypeError when it is not `what` (the brand check).
 * @template {object} K, V
 * @param {WeakMap<K, V>} map
 * @param {unknown} object
 * @param {string} what e.g. 'an Event'
 * @returns {V}
 */
export function stateOf(map, object, what) {
  const state = ReflectApply(weakMapGet, map, [object]);
  if (state === undefined) throw new CtxTypeError('Illegal invocation: not ' + what);
  return state;
}

/**
 * @template {object} K, V
 * @param {WeakMap<K, V>} map
 * @param {K} object
 * @param {V} state
 */
export function remember(map, object, state) {
  ReflectApply(weakMapSet, map, [object, state]);
}

/**
 * An options dictionary: undefined, null or an object; anything else is refused.
 * @param {unknown} value
 * @param {string} where e.g. 'TextDecoder'
 */
export function dictionary(value, where) {
  if (
    value !== undefined &&
    value !== null &&
    typeof value !== 'object' &&
    typeof value !== 'function'
  ) {
    throw new CtxTypeError(where + ': the options must be an object');
  }
  return value;
}

/**
 * Reads `key` of an options dictionary once; undefined when the dictionary is absent.
 * @param {any} options
 * @param {string} key
 */
export function member(options, key) {
  return options === undefined || options === null ? undefined : options[key];
}

/**
 * An [EnforceRange] unsigned long (WebIDL's ConvertToInt): a number
 * that is not finite, or whose integer part is below 0 or above 2^32 - 1, is
 * a TypeError; anything else is truncated toward zero.
 * @param {unknown} value
 * @param {string} what e.g. "crypto.subtle.importKey: length"
 */
export function enforceUnsignedLong(value, what) {
  // Unary plus is ToNumber itself: a BigInt or a Symbol throws a TypeError
  // there, where Number(value) would quietly convert a BigInt.
  const number = +(/** @type {any} */ (value));
  if (!NumberIsFinite(number)) {
    throw new CtxTypeError(what + ' must be a finite number, not ' + number);
  }
  const integer = MathTrunc(number);
  if (integer < 0 || integer > 0xffffffff) {
    throw new CtxTypeError(what + ' is outside the range of an unsigned long (0 to 4294967295)');
  }
  // `+ 0` turns -0 into +0, as ConvertToInt does.
  return integer + 0;
}

/**
 * Defines an interface's constants, on it and on its prototype.
 * @param {Function} iface
 * @param {(readonly [string, number])[]} constants
 */
export function defineConstants(iface, constants) {
  for (let i = 0; i < constants.length; i++) {
    const entry = /** @type {readonly [string, number]} */ (constants[i]);
    const constant = { value: entry[1], enumerable: true };
    ObjectDefineProperty(iface, entry[0], constant);
    ObjectDefineProperty(iface.prototype, entry[0], constant);
  }
}

/**
 * What realm code hands the constructor of an interface tool code may not
 * construct (AbortSignal, Crypto, Performance…): tool code never holds it.
 */
export const CONSTRUCTING = ObjectFreeze({});

/**
 * Refuses a construction by tool code.
 * @param {unknown} key what the constructor was given
 */
export function checkConstructing(key) {
  if (key !== CONSTRUCTING) throw new CtxTypeError('Illegal constructor');
}

// Prototypes of the platform's objects that are not cloneable: structuredClone refuses them.
/** @type {object[]} */
const platformPrototypes = [];

/**
 * Records the classes' instances as platform objects.
 * @param {...Function} classes
 */
export function platformClasses(...classes) {
  for (let i = 0; i < classes.length; i++) {
    append(platformPrototypes, /** @type {Function} */ (classes[i]).prototype);
  }
}

/** @param {object} value */
export function isPlatformObject(value) {
  for (let i = 0; i < platformPrototypes.length; i++) {
    if (ReflectApply(isPrototypeOf, platformPrototypes[i], [value])) return true;
  }
  return false;
}
