// @ts-check
/**
 * The Fetch standard's Headers for tool code (§5.2): a list of name/value
 * pairs with case-insensitive names, values checked and trimmed as the
 * standard says, iteration sorted and combined, and a guard that makes a
 * fetched response's headers read-only. Written here because it is a small,
 * exactly specified class and fetch itself (fetch.js) must be.
 */
import {
  CtxTypeError,
  CtxWeakMap,
  ObjectCreate,
  ObjectGetOwnPropertyDescriptor,
  ObjectKeys,
  ReflectApply,
  ReflectOwnKeys,
  StringCtor,
  SymbolIterator,
  append,
  charCodeAt,
  hasOwn,
  regexpExec,
  stringSlice,
  toLowerCase,
  weakMapGet,
  weakMapSet,
} from '../primordials.js';
import { once, platformClasses, stateOf } from '../webidl.js';

/**
 * @typedef {{ list: [string, string][], immutable: boolean }} HeadersState
 * @typedef {{
 *   Headers: Function,
 *   headersFrom: (init: unknown) => any,
 *   readOnlyHeaders: (record: Record<string, unknown>) => any,
 *   copyHeaders: (headers: any, immutable: boolean) => any,
 *   headerRecord: (headers: any) => Record<string, string>,
 *   setDefaultHeader: (headers: any, name: string, value: string) => void,
 * }} WebHeaders
 */

/** Headers with the helpers fetch needs, created on first need. */
export const webHeaders = once(function () {
  const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
  // NUL, CR and LF are what the Fetch standard forbids in a value; above U+00FF is not a byte.
  const FORBIDDEN_IN_VALUE = /[\0\r\n\u0100-\uffff]/;

  /** @type {WeakMap<object, HeadersState>} */
  const states = new CtxWeakMap();

  /** @param {unknown} headers */
  function headersState(headers) {
    return stateOf(states, headers, 'a Headers');
  }

  /**
   * A header name, checked and lower-cased.
   * @param {unknown} name
   */
  function nameOf(name) {
    const text = StringCtor(name);
    if (ReflectApply(regexpExec, TOKEN, [text]) === null) {
      throw new CtxTypeError("Headers: '" + text + "' is not a valid header name");
    }
    return toLowerCase(text);
  }

  /** @param {number} code */
  function isHttpWhitespace(code) {
    return code === 0x09 || code === 0x0a || code === 0x0d || code === 0x20;
  }

  /**
   * A header value, trimmed of HTTP whitespace and checked.
   * @param {unknown} value
   * @param {string} name
   */
  function valueOf(value, name) {
    const text = StringCtor(value);
    let start = 0;
    let end = text.length;
    while (start < end && isHttpWhitespace(charCodeAt(text, start))) start++;
    while (end > start && isHttpWhitespace(charCodeAt(text, end - 1))) end--;
    const trimmed = start === 0 && end === text.length ? text : stringSlice(text, start, end);
    if (ReflectApply(regexpExec, FORBIDDEN_IN_VALUE, [trimmed]) !== null) {
      throw new CtxTypeError(
        "Headers: the value of '" + name + "' has a character a header cannot carry",
      );
    }
    return trimmed;
  }

  /** @param {HeadersState} state */
  function requireMutable(state) {
    if (state.immutable) throw new CtxTypeError('Headers: these headers are immutable');
  }

  /**
   * @param {HeadersState} state
   * @param {string} name lower case
   * @param {string} value
   */
  function appendPair(state, name, value) {
    const list = state.list;
    append(list, [name, value]);
  }

  /**
   * @param {HeadersState} state
   * @param {string} name lower case
   */
  function removeAll(state, name) {
    const list = state.list;
    let kept = 0;
    for (let i = 0; i < list.length; i++) {
      const pair = /** @type {[string, string]} */ (list[i]);
      if (pair[0] !== name) list[kept++] = pair;
    }
    list.length = kept;
  }

  /**
   * The combined value of `name` (", "-joined), or null.
   * @param {HeadersState} state
   * @param {string} name lower case
   */
  function combined(state, name) {
    let value = null;
    const list = state.list;
    for (let i = 0; i < list.length; i++) {
      const pair = /** @type {[string, string]} */ (list[i]);
      if (pair[0] === name) value = value === null ? pair[1] : value + ', ' + pair[1];
    }
    return value;
  }

  /**
   * The pairs iteration yields (Fetch §5.2 "sort and combine"): names sorted,
   * values combined, except set-cookie, whose values stay apart.
   * @param {HeadersState} state
   * @returns {[string, string][]}
   */
  function sortedPairs(state) {
    /** @type {string[]} */
    const names = [];
    const list = state.list;
    for (let i = 0; i < list.length; i++) {
      const name = /** @type {[string, string]} */ (list[i])[0];
      let seen = false;
      for (let j = 0; j < names.length && !seen; j++) seen = names[j] === name;
      if (!seen) append(names, name);
    }
    // Insertion sort by code units: header lists are short, and Array.prototype.sort is replaceable.
    for (let i = 1; i < names.length; i++) {
      const name = /** @type {string} */ (names[i]);
      let j = i - 1;
      while (j >= 0 && /** @type {string} */ (names[j]) > name) {
        names[j + 1] = /** @type {string} */ (names[j]);
        j--;
      }
      names[j + 1] = name;
    }
    /** @type {[string, string][]} */
    const pairs = [];
    for (let i = 0; i < names.length; i++) {
      const name = /** @type {string} */ (names[i]);
      if (name === 'set-cookie') {
        for (let j = 0; j < list.length; j++) {
          const pair = /** @type {[string, string]} */ (list[j]);
          if (pair[0] === name) append(pairs, [name, pair[1]]);
        }
      } else append(pairs, [name, /** @type {string} */ (combined(state, name))]);
    }
    return pairs;
  }

  /**
   * Fills from a HeadersInit: Headers, a sequence of [name, value] pairs, or a record.
   * @param {HeadersState} state
   * @param {unknown} init
   */
  function fill(state, init) {
    if (init === null || (typeof init !== 'object' && typeof init !== 'function')) {
      throw new CtxTypeError(
        'Headers: the init must be a Headers, an array of [name, value] pairs or an object',
      );
    }
    const other = ReflectApply(weakMapGet, states, [init]);
    if (other !== undefined) {
      const list = other.list;
      for (let i = 0; i < list.length; i++) {
        const pair = /** @type {[string, string]} */ (list[i]);
        appendPair(state, pair[0], pair[1]);
      }
      return;
    }
    const object = /** @type {any} */ (init);
    const iterate = object[SymbolIterator];
    if (iterate !== undefined && iterate !== null) {
      if (typeof iterate !== 'function')
        throw new CtxTypeError('Headers: the init is not iterable');
      /** @type {unknown[][]} */
      const pairs = [];
      const iterable = /** @type {Iterable<unknown>} */ (
        /** @type {unknown} */ ({ [SymbolIterator]: () => ReflectApply(iterate, object, []) })
      );
      for (const entry of iterable) {
        if (entry === null || typeof entry !== 'object') {
          throw new CtxTypeError('Headers: each member of the init must be a [name, value] pair');
        }
        /** @type {unknown[]} */
        const items = [];
        for (const item of /** @type {Iterable<unknown>} */ (entry)) append(items, item);
        if (items.length !== 2)
          throw new CtxTypeError('Headers: each member of the init must be a [name, value] pair');
        append(pairs, items);
      }
      for (let i = 0; i < pairs.length; i++) {
        const pair = /** @type {unknown[]} */ (pairs[i]);
        const name = nameOf(pair[0]);
        appendPair(state, name, valueOf(pair[1], name));
      }
      return;
    }
    const keys = ReflectOwnKeys(object);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      if (typeof key !== 'string') continue;
      const descriptor = ObjectGetOwnPropertyDescriptor(object, key);
      if (descriptor === undefined || !descriptor.enumerable) continue;
      const name = nameOf(key);
      appendPair(state, name, valueOf(object[key], name));
    }
  }

  class Headers {
    /** @param {unknown} [init] a Headers, an array of [name, value] pairs, or an object */
    constructor(init) {
      /** @type {HeadersState} */
      const state = { list: [], immutable: false };
      ReflectApply(weakMapSet, states, [this, state]);
      if (init !== undefined) fill(state, init);
    }

    /**
     * @param {unknown} name
     * @param {unknown} value
     */
    append(name, value) {
      const state = headersState(this);
      const lower = nameOf(name);
      const checked = valueOf(value, lower);
      requireMutable(state);
      appendPair(state, lower, checked);
    }

    /** @param {unknown} name */
    delete(name) {
      const state = headersState(this);
      const lower = nameOf(name);
      requireMutable(state);
      removeAll(state, lower);
    }

    /** @param {unknown} name */
    get(name) {
      return combined(headersState(this), nameOf(name));
    }

    getSetCookie() {
      const list = headersState(this).list;
      /** @type {string[]} */
      const values = [];
      for (let i = 0; i < list.length; i++) {
        const pair = /** @type {[string, string]} */ (list[i]);
        if (pair[0] === 'set-cookie') append(values, pair[1]);
      }
      return values;
    }

    /** @param {unknown} name */
    has(name) {
      return combined(headersState(this), nameOf(name)) !== null;
    }

    /**
     * @param {unknown} name
     * @param {unknown} value
     */
    set(name, value) {
      const state = headersState(this);
      const lower = nameOf(name);
      const checked = valueOf(value, lower);
      requireMutable(state);
      const list = state.list;
      let replaced = false;
      let kept = 0;
      for (let i = 0; i < list.length; i++) {
        const pair = /** @type {[string, string]} */ (list[i]);
        if (pair[0] !== lower) list[kept++] = pair;
        else if (!replaced) {
          list[kept++] = [lower, checked];
          replaced = true;
        }
      }
      list.length = kept;
      if (!replaced) appendPair(state, lower, checked);
    }

    /**
     * @param {unknown} callback (value, name, headers) => void
     * @param {unknown} [thisArg]
     */
    forEach(callback, thisArg) {
      const state = headersState(this);
      if (typeof callback !== 'function')
        throw new CtxTypeError('Headers.forEach: the callback must be a function');
      const pairs = sortedPairs(state);
      for (let i = 0; i < pairs.length; i++) {
        const pair = /** @type {[string, string]} */ (pairs[i]);
        ReflectApply(callback, thisArg, [pair[1], pair[0], this]);
      }
    }

    *entries() {
      const pairs = sortedPairs(headersState(this));
      for (let i = 0; i < pairs.length; i++) {
        const pair = /** @type {[string, string]} */ (pairs[i]);
        yield [pair[0], pair[1]];
      }
    }

    *keys() {
      const pairs = sortedPairs(headersState(this));
      for (let i = 0; i < pairs.length; i++) yield /** @type {[string, string]} */ (pairs[i])[0];
    }

    *values() {
      const pairs = sortedPairs(headersState(this));
      for (let i = 0; i < pairs.length; i++) yield /** @type {[string, string]} */ (pairs[i])[1];
    }

    [SymbolIterator]() {
      return this.entries();
    }
  }

  /** @param {unknown} init */
  function headersFrom(init) {
    return init === undefined || init === null ? new Headers() : new Headers(init);
  }

  /**
   * Read-only headers from what the broker answered (names already lower case).
   * @param {Record<string, unknown>} record
   */
  function readOnlyHeaders(record) {
    const headers = new Headers();
    const state = headersState(headers);
    const names = ObjectKeys(record);
    for (let i = 0; i < names.length; i++) {
      const name = /** @type {string} */ (names[i]);
      const value = record[name];
      if (typeof value === 'string') appendPair(state, toLowerCase(name), value);
    }
    state.immutable = true;
    return headers;
  }

  /**
   * @param {Headers} headers
   * @param {boolean} immutable
   */
  function copyHeaders(headers, immutable) {
    const copy = new Headers(headers);
    headersState(copy).immutable = immutable;
    return copy;
  }

  /**
   * The headers as one record (what the broker takes): a null-prototype
   * object, so a header named `__proto__` is an ordinary key.
   * @param {Headers} headers
   * @returns {Record<string, string>}
   */
  function headerRecord(headers) {
    const state = headersState(headers);
    /** @type {Record<string, string>} */
    const record = ObjectCreate(null);
    const list = state.list;
    for (let i = 0; i < list.length; i++) {
      const name = /** @type {[string, string]} */ (list[i])[0];
      if (!ReflectApply(hasOwn, record, [name]))
        record[name] = /** @type {string} */ (combined(state, name));
    }
    return record;
  }

  /**
   * Sets `name` unless the headers have it already (a body's default content-type).
   * @param {Headers} headers
   * @param {string} name lower case
   * @param {string} value
   */
  function setDefaultHeader(headers, name, value) {
    const state = headersState(headers);
    if (combined(state, name) === null) appendPair(state, name, value);
  }

  platformClasses(Headers);
  return {
    Headers: Headers,
    headersFrom: headersFrom,
    readOnlyHeaders: readOnlyHeaders,
    copyHeaders: copyHeaders,
    headerRecord: headerRecord,
    setDefaultHeader: setDefaultHeader,
  };
});
