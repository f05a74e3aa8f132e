// @ts-check
/**
 * The context's timers and `queueMicrotask`. The host keeps the clock: a
 * timer is one `timer` call over the bridge, and the host calls `fire` when it
 * is due (ContextApi.fire), within the invocation only; `clearTimers` forgets
 * them all when it ends.
 */
import {
  CtxPromise,
  CtxTypeError,
  ObjectCreate,
  ObjectKeys,
  ReflectApply,
  append,
  promiseResolve,
  then,
} from './primordials.js';
import { bridge } from './bridge.js';
import { isClosed } from './calls.js';
import { fail } from './result.js';

/** @typedef {[callback: Function, args: unknown[], repeat: boolean]} Timer */

/** @type {Record<number, Timer>} */
const timers = ObjectCreate(null);

/**
 * @param {unknown} callback
 * @param {any} delay milliseconds, converted as `+delay` converts them
 * @param {unknown[]} args
 * @param {boolean} repeat
 */
function startTimer(callback, delay, args, repeat) {
  if (typeof callback !== 'function') {
    throw new CtxTypeError('The "callback" argument must be of type function');
  }
  let ms = +delay;
  if (!(ms >= 1 && ms <= 2147483647)) ms = 1;
  const id = bridge('timer', ms, repeat);
  if (typeof id !== 'number') return 0;
  timers[id] = [callback, args, repeat];
  return id;
}

/** @param {unknown} id */
function stopTimer(id) {
  if (typeof id !== 'number' || timers[id] === undefined) return;
  delete timers[id];
  bridge('clear', id);
}

/**
 * @param {IArguments} args
 * @param {number} from
 */
function restArguments(args, from) {
  /** @type {unknown[]} */
  const rest = [];
  for (let i = from; i < args.length; i++) append(rest, args[i]);
  return rest;
}

/**
 * A one-shot timer for the realm's own use (AbortSignal.timeout), as the
 * context's `setTimeout(callback, ms)` makes it.
 * @param {() => void} callback
 * @param {number} ms
 */
export function setTimer(callback, ms) {
  return startTimer(callback, ms, [], false);
}

/**
 * Defines `setTimeout`, `setInterval`, their `clear…` and `queueMicrotask` on the context's global.
 * @param {Record<string, unknown>} G
 */
export function installTimers(G) {
  /**
   * @param {unknown} callback
   * @param {unknown} delay
   */
  G.setTimeout = function setTimeout(callback, delay) {
    return startTimer(callback, delay, restArguments(arguments, 2), false);
  };
  /**
   * @param {unknown} callback
   * @param {unknown} delay
   */
  G.setInterval = function setInterval(callback, delay) {
    return startTimer(callback, delay, restArguments(arguments, 2), true);
  };
  /** @param {unknown} id */
  G.clearTimeout = function clearTimeout(id) {
    stopTimer(id);
  };
  /** @param {unknown} id */
  G.clearInterval = function clearInterval(id) {
    stopTimer(id);
  };
  /** @param {unknown} callback */
  G.queueMicrotask = function queueMicrotask(callback) {
    if (typeof callback !== 'function') {
      throw new CtxTypeError('The "callback" argument must be of type function');
    }
    then(ReflectApply(promiseResolve, CtxPromise, []), function () {
      callback();
    });
  };
}

/** @param {number} id */
export function fire(id) {
  const timer = timers[id];
  if (timer === undefined || isClosed()) return;
  if (!timer[2]) delete timers[id];
  try {
    ReflectApply(timer[0], undefined, timer[1]);
  } catch (error) {
    fail(error);
  }
}

/** Forgets every timer (the invocation has ended). */
export function clearTimers() {
  const ids = ObjectKeys(timers);
  for (let i = 0; i < ids.length; i++) delete timers[/** @type {any} */ (ids[i])];
}
