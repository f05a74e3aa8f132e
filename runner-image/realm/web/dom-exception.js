// @ts-check
/**
 * DOMException (WebIDL §2.8.1), created in the tool's realm on first need:
 * the errors the web platform's interfaces throw, and a global of its own.
 * Its name is internal state, so a DOMException can be told from an Error
 * that merely says it is one (structuredClone relies on it).
 */
import { CtxError, CtxWeakMap, ObjectDefineProperty, StringCtor } from '../primordials.js';
import { defineConstants, once, remember, stateOf } from '../webidl.js';

/** @typedef {new (message?: unknown, options?: unknown) => Error} DOMExceptionClass */

/** This realm's DOMException class. */
export const domExceptionClass = once(function () {
  /** Legacy numeric codes of the names that have one (WebIDL §2.8.1). */
  const LEGACY_CODES = {
    IndexSizeError: 1,
    HierarchyRequestError: 3,
    WrongDocumentError: 4,
    InvalidCharacterError: 5,
    NoModificationAllowedError: 7,
    NotFoundError: 8,
    NotSupportedError: 9,
    InUseAttributeError: 10,
    InvalidStateError: 11,
    SyntaxError: 12,
    InvalidModificationError: 13,
    NamespaceError: 14,
    InvalidAccessError: 15,
    TypeMismatchError: 17,
    SecurityError: 18,
    NetworkError: 19,
    AbortError: 20,
    URLMismatchError: 21,
    QuotaExceededError: 22,
    TimeoutError: 23,
    InvalidNodeTypeError: 24,
    DataCloneError: 25,
  };
  /** @type {(readonly [string, number])[]} */
  const CONSTANTS = [
    ['INDEX_SIZE_ERR', 1],
    ['DOMSTRING_SIZE_ERR', 2],
    ['HIERARCHY_REQUEST_ERR', 3],
    ['WRONG_DOCUMENT_ERR', 4],
    ['INVALID_CHARACTER_ERR', 5],
    ['NO_DATA_ALLOWED_ERR', 6],
    ['NO_MODIFICATION_ALLOWED_ERR', 7],
    ['NOT_FOUND_ERR', 8],
    ['NOT_SUPPORTED_ERR', 9],
    ['INUSE_ATTRIBUTE_ERR', 10],
    ['INVALID_STATE_ERR', 11],
    ['SYNTAX_ERR', 12],
    ['INVALID_MODIFICATION_ERR', 13],
    ['NAMESPACE_ERR', 14],
    ['INVALID_ACCESS_ERR', 15],
    ['VALIDATION_ERR', 16],
    ['TYPE_MISMATCH_ERR', 17],
    ['SECURITY_ERR', 18],
    ['NETWORK_ERR', 19],
    ['ABORT_ERR', 20],
    ['URL_MISMATCH_ERR', 21],
    ['QUOTA_EXCEEDED_ERR', 22],
    ['TIMEOUT_ERR', 23],
    ['INVALID_NODE_TYPE_ERR', 24],
    ['DATA_CLONE_ERR', 25],
  ];
  /** @type {WeakMap<object, string>} */
  const exceptionNames = new CtxWeakMap();

  class DOMException extends CtxError {
    /**
     * @param {unknown} [message]
     * @param {unknown} [options] a name, or {name, cause}
     */
    constructor(message, options) {
      const text = message === undefined ? '' : StringCtor(message);
      let name = 'Error';
      let cause;
      let hasCause = false;
      if (options !== null && typeof options === 'object') {
        const given = /** @type {any} */ (options).name;
        if (given !== undefined) name = StringCtor(given);
        if ('cause' in options) {
          hasCause = true;
          cause = /** @type {any} */ (options).cause;
        }
      } else if (options !== undefined) {
        name = StringCtor(options);
      }
      super(text);
      remember(exceptionNames, this, name);
      if (hasCause) {
        ObjectDefineProperty(this, 'cause', { value: cause, writable: true, configurable: true });
      }
    }

    /** @override */
    get name() {
      return stateOf(exceptionNames, this, 'a DOMException');
    }

    get code() {
      const name = stateOf(exceptionNames, this, 'a DOMException');
      const code = LEGACY_CODES[/** @type {keyof typeof LEGACY_CODES} */ (name)];
      return code === undefined ? 0 : code;
    }
  }
  defineConstants(DOMException, CONSTANTS);
  return DOMException;
});

/**
 * A new DOMException of this realm.
 * @param {string} message
 * @param {string} name e.g. 'AbortError'
 */
export function newDOMException(message, name) {
  const DOMException = /** @type {DOMExceptionClass} */ (domExceptionClass());
  return new DOMException(message, name);
}
