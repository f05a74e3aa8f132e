// @ts-check
/**
 * Brokered calls (sdk.http, sdk.db, the client requests, fetch): each is one
 * `call` over the bridge with its arguments as JSON text, and a promise of
 * this realm settled when the host relays the reply (`settle`), or rejected
 * with ERR_CANCELLED when the invocation ends first (`closeCalls`).
 */
import {
  CtxPromise,
  CtxWeakMap,
  JSONParse,
  JSONStringify,
  ObjectCreate,
  ObjectKeys,
  ReflectApply,
  weakMapGet,
  weakMapSet,
} from './primordials.js';
import { bridge } from './bridge.js';
import { makeError, messageOf, rejected } from './errors.js';

/** @typedef {[resolve: (value: unknown) => void, reject: (error: unknown) => void]} PendingCall */

// ---------------------------------------------------------------- failed calls
/**
 * The error objects failed replies were delivered as (and fetch's errors
 * made from them), with the reply's code. Thrown uncaught, such an error
 * fails the invocation with that code; its `code` property is tool code's
 * to change and is never what decides. The host checks the code again.
 */
const callFailures = new CtxWeakMap();

/**
 * @param {object} error
 * @param {string} code
 */
function markCallFailure(error, code) {
  ReflectApply(weakMapSet, callFailures, [error, code]);
}

/**
 * The reply's code when `error` is the very object a failed call was rejected with.
 * @param {unknown} error
 * @returns {string | undefined}
 */
export function callFailureCode(error) {
  if (error === null || (typeof error !== 'object' && typeof error !== 'function')) {
    return undefined;
  }
  const code = ReflectApply(weakMapGet, callFailures, [error]);
  return typeof code === 'string' ? code : undefined;
}

/**
 * Gives `failure` (an error made from a failed call's, as fetch's TypeError
 * is) the code of `cause`, when `cause` is one.
 * @param {object} failure
 * @param {unknown} cause
 */
export function adoptCallFailure(failure, cause) {
  const code = callFailureCode(cause);
  if (code !== undefined) markCallFailure(failure, code);
}

// ---------------------------------------------------------------- brokered calls
let closed = false;
/** @type {Record<number, PendingCall>} */
const pending = ObjectCreate(null);

/** Whether the invocation has ended (cancelled): nothing more may run or be asked for. */
export function isClosed() {
  return closed;
}

/**
 * @param {string} op
 * @param {unknown} args
 * @returns {Promise<unknown>}
 */
export function callHost(op, args) {
  let argsJson;
  try {
    argsJson = JSONStringify(args);
  } catch (error) {
    return rejected(
      'ERR_INVALID_ARGUMENT',
      'arguments of ' + op + ' are not JSON-serialisable: ' + messageOf(error),
    );
  }
  if (typeof argsJson !== 'string') {
    return rejected('ERR_INVALID_ARGUMENT', 'arguments of ' + op + ' are missing');
  }
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
      reject(
        makeError(
          'ERR_INVALID_ARGUMENT',
          'arguments of ' +
            op +
            ' are too large: more than ' +
            -id +
            ' bytes once encoded as JSON; send less (a smaller body, fewer or smaller values)',
        ),
      );
      return;
    }
    pending[id] = [resolve, reject];
  });
}

/**
 * Settles a pending call with the host's reply (ContextApi.settle).
 * @param {number} id
 * @param {boolean} ok
 * @param {string} payload
 * @param {string} code
 */
export function settle(id, ok, payload, code) {
  const entry = pending[id];
  if (entry === undefined) return false;
  delete pending[id];
  if (!ok) {
    const failure = makeError(code, payload);
    markCallFailure(failure, code);
    entry[1](failure);
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

/** Ends the invocation's calls: every pending one is rejected with ERR_CANCELLED, later ones at once. */
export function closeCalls() {
  closed = true;
  const calls = ObjectKeys(pending);
  for (let i = 0; i < calls.length; i++) {
    const key = /** @type {any} */ (calls[i]);
    const entry = /** @type {PendingCall} */ (pending[key]);
    delete pending[key];
    entry[1](makeError('ERR_CANCELLED', 'the invocation was cancelled'));
  }
}
