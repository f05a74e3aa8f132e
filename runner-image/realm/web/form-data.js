// @ts-check
/**
 * FormData (XHR standard §5) for tool code: an ordered list of entries whose
 * values are strings or Files. A Blob appended becomes a File named "blob"
 * (or the filename given); a File appended without a filename is kept as
 * the same object. There is no HTML form to construct one from.
 */
import {
  CtxTypeError,
  CtxWeakMap,
  DateNow,
  ObjectDefineProperty,
  ReflectApply,
  SymbolIterator,
  SymbolToStringTag,
  append,
  weakMapGet,
} from '../primordials.js';
import { once, platformClasses, remember, stateOf } from '../webidl.js';
import { blobClasses, blobStateOf, domString } from './blob.js';
import { toUsvString } from './infra.js';

/** @typedef {import('./multipart.js').FormEntry} FormEntry */
/** @typedef {{ list: FormEntry[] }} FormState */

/** The FormDatas' states, once the class exists. */
/** @type {WeakMap<object, FormState> | null} */
let formStates = null;

/**
 * The entries of a FormData of this realm (live), or null for anything else;
 * never creates the class.
 * @param {unknown} value
 * @returns {FormEntry[] | null}
 */
export function formDataEntries(value) {
  if (formStates === null || value === null || typeof value !== 'object') return null;
  const state = ReflectApply(weakMapGet, formStates, [value]);
  return state === undefined ? null : state.list;
}

/** FormData, created on first need. */
export const formDataClass = once(function () {
  const files = blobClasses();
  /** @type {WeakMap<object, FormState>} */
  const states = new CtxWeakMap();

  /** @param {unknown} formData */
  function formState(formData) {
    return stateOf(states, formData, 'a FormData');
  }

  /**
   * @param {number} given arguments.length
   * @param {number} needed
   * @param {string} where
   */
  function requireArguments(given, needed, where) {
    if (given < needed) {
      throw new CtxTypeError(
        where + ': ' + needed + ' argument' + (needed === 1 ? '' : 's') + ' required',
      );
    }
  }

  /** @param {unknown} name */
  function usv(name) {
    return toUsvString(domString(name));
  }

  /**
   * The entry append() and set() make (XHR "create an entry"), after
   * WebIDL's overload resolution: with three arguments the value must be a
   * Blob; with two, anything not a Blob is converted to a string.
   * @param {unknown} name
   * @param {unknown} value
   * @param {unknown} filename
   * @param {number} count arguments.length
   * @param {string} where
   * @returns {FormEntry}
   */
  function entryOf(name, value, filename, count, where) {
    const entryName = usv(name);
    const blob = blobStateOf(value);
    if (blob === null) {
      if (count > 2) {
        throw new CtxTypeError(where + ': with a filename, the value must be a Blob or a File');
      }
      return { name: entryName, value: usv(value) };
    }
    const fileName = filename === undefined ? null : usv(filename);
    if (fileName === null && blob.file !== null) return { name: entryName, value: value };
    // A new File over the same bytes (never copied: a Blob's bytes are never written).
    const lastModified = blob.file === null ? DateNow() : blob.file.lastModified;
    const file = files.makeFile(
      blob.bytes,
      blob.type,
      fileName === null ? 'blob' : fileName,
      lastModified,
    );
    return { name: entryName, value: file };
  }

  /**
   * Iterates the entries live (an entry added during the walk is seen), as WebIDL's pair iterators do.
   * @param {FormState} state
   * @param {0 | 1 | 2} kind 0 entries, 1 keys, 2 values
   */
  function* walk(state, kind) {
    for (let i = 0; i < state.list.length; i++) {
      const entry = /** @type {FormEntry} */ (state.list[i]);
      yield kind === 0 ? [entry.name, entry.value] : kind === 1 ? entry.name : entry.value;
    }
  }

  class FormData {
    /**
     * @param {unknown} [form] must be undefined: tool code has no HTML form
     */
    constructor(form) {
      if (form !== undefined) {
        throw new CtxTypeError(
          'FormData: tool code has no HTML form to read; construct it empty and append entries',
        );
      }
      remember(states, this, { list: [] });
    }

    /**
     * @param {unknown} name
     * @param {unknown} value a string, or a Blob
     * @param {unknown} [filename] with a Blob
     */
    append(name, value, filename) {
      const state = formState(this);
      requireArguments(arguments.length, 2, 'FormData.append');
      const list = state.list;
      const entry = entryOf(name, value, filename, arguments.length, 'FormData.append');
      append(list, entry);
    }

    /** @param {unknown} name */
    delete(name) {
      const state = formState(this);
      requireArguments(arguments.length, 1, 'FormData.delete');
      const key = usv(name);
      const list = state.list;
      let kept = 0;
      for (let i = 0; i < list.length; i++) {
        const entry = /** @type {FormEntry} */ (list[i]);
        if (entry.name !== key) list[kept++] = entry;
      }
      list.length = kept;
    }

    /** @param {unknown} name */
    get(name) {
      const state = formState(this);
      requireArguments(arguments.length, 1, 'FormData.get');
      const key = usv(name);
      const list = state.list;
      for (let i = 0; i < list.length; i++) {
        const entry = /** @type {FormEntry} */ (list[i]);
        if (entry.name === key) return entry.value;
      }
      return null;
    }

    /** @param {unknown} name */
    getAll(name) {
      const state = formState(this);
      requireArguments(arguments.length, 1, 'FormData.getAll');
      const key = usv(name);
      const list = state.list;
      /** @type {unknown[]} */
      const values = [];
      for (let i = 0; i < list.length; i++) {
        const entry = /** @type {FormEntry} */ (list[i]);
        if (entry.name === key) append(values, entry.value);
      }
      return values;
    }

    /** @param {unknown} name */
    has(name) {
      const state = formState(this);
      requireArguments(arguments.length, 1, 'FormData.has');
      const key = usv(name);
      const list = state.list;
      for (let i = 0; i < list.length; i++) {
        if (/** @type {FormEntry} */ (list[i]).name === key) return true;
      }
      return false;
    }

    /**
     * Replaces the first entry of `name` and removes the others, or appends.
     * @param {unknown} name
     * @param {unknown} value a string, or a Blob
     * @param {unknown} [filename] with a Blob
     */
    set(name, value, filename) {
      const state = formState(this);
      requireArguments(arguments.length, 2, 'FormData.set');
      const entry = entryOf(name, value, filename, arguments.length, 'FormData.set');
      const list = state.list;
      let replaced = false;
      let kept = 0;
      for (let i = 0; i < list.length; i++) {
        const current = /** @type {FormEntry} */ (list[i]);
        if (current.name !== entry.name) list[kept++] = current;
        else if (!replaced) {
          list[kept++] = entry;
          replaced = true;
        }
      }
      list.length = kept;
      if (!replaced) append(list, entry);
    }

    /**
     * @param {unknown} callback (value, name, formData) => void
     * @param {unknown} [thisArg]
     */
    forEach(callback, thisArg) {
      const state = formState(this);
      requireArguments(arguments.length, 1, 'FormData.forEach');
      if (typeof callback !== 'function') {
        throw new CtxTypeError('FormData.forEach: the callback must be a function');
      }
      for (let i = 0; i < state.list.length; i++) {
        const entry = /** @type {FormEntry} */ (state.list[i]);
        ReflectApply(callback, thisArg, [entry.value, entry.name, this]);
      }
    }

    entries() {
      return walk(formState(this), 0);
    }

    keys() {
      return walk(formState(this), 1);
    }

    values() {
      return walk(formState(this), 2);
    }
  }
  // The form argument is optional: the interface's length is 0.
  ObjectDefineProperty(FormData, 'length', { value: 0, configurable: true });
  // As WebIDL defines it, @@iterator is the very function entries is.
  ObjectDefineProperty(FormData.prototype, SymbolIterator, {
    value: FormData.prototype.entries,
    writable: true,
    configurable: true,
  });
  ObjectDefineProperty(FormData.prototype, SymbolToStringTag, {
    value: 'FormData',
    configurable: true,
  });

  /**
   * A FormData holding `entries` (parsed by Response.formData()).
   * @param {FormEntry[]} entries
   */
  function formDataFrom(entries) {
    const formData = new FormData();
    formState(formData).list = entries;
    return formData;
  }

  formStates = states;
  platformClasses(FormData);
  return { FormData: FormData, formDataFrom: formDataFrom };
});
