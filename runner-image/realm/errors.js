// @ts-check
/** Errors of this realm: made here, described defensively, reported to the tool's log. */
import {
  CtxError,
  CtxPromise,
  ObjectDefineProperty,
  ReflectApply,
  StringCtor,
  promiseReject,
} from './primordials.js';
import { bridge } from './bridge.js';

/**
 * An Error with a `code` (what failed replies and refused calls carry).
 * @param {string} code
 * @param {string} message
 */
export function makeError(code, message) {
  const error = new CtxError(message);
  ObjectDefineProperty(error, 'code', {
    value: code,
    writable: true,
    enumerable: true,
    configurable: true,
  });
  return error;
}

/**
 * @param {string} code
 * @param {string} message
 * @returns {Promise<never>}
 */
export function rejected(code, message) {
  return ReflectApply(promiseReject, CtxPromise, [makeError(code, message)]);
}

/** @param {any} error anything tool code threw; read defensively */
export function messageOf(error) {
  try {
    if (error !== null && typeof error === 'object' && typeof error.message === 'string') {
      return error.message;
    }
    return StringCtor(error);
  } catch {
    return 'a value that cannot be described';
  }
}

/** @param {unknown} error what a listener or an abort algorithm threw */
export function reportError(error) {
  bridge('log', 'error', 'Uncaught (in an event listener) ' + messageOf(error));
}
