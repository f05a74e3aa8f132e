// @ts-check
/**
 * AbortController and AbortSignal for tool code (DOM §3): what
 * `AbortSignal.timeout(ms)` and `fetch(url, {signal})` need. A signal is an
 * EventTarget (event-target.js) that only realm code constructs; its state
 * lives in a WeakMap of this module, and fetch (fetch.js) reads it through
 * the functions below, never through a property tool code could replace.
 */
import {
  CtxTypeError,
  CtxWeakMap,
  NumberCtor,
  NumberIsFinite,
  ReflectApply,
  append,
  weakMapHas,
} from '../primordials.js';
import { reportError } from '../errors.js';
import { setTimer } from '../timers.js';
import {
  CONSTRUCTING,
  checkConstructing,
  once,
  platformClasses,
  remember,
  stateOf,
} from '../webidl.js';
import { newDOMException } from './dom-exception.js';
import { eventClasses, fireTrusted, listenersOf, removeListener } from './event-target.js';

/**
 * @typedef {{
 *   aborted: boolean, reason: unknown, algorithms: (() => void)[],
 *   handler: unknown, handlerListener: import('./event-target.js').Listener | null,
 *   dependents: object[], dependent: boolean,
 * }} SignalState
 */

/** The longest delay a timer takes (a signed 32-bit count of ms). */
const MAX_TIMER_DELAY = 2147483647;
/** @type {WeakMap<object, SignalState>} */
const signals = new CtxWeakMap();

/** @param {unknown} value */
export function isAbortSignal(value) {
  return ReflectApply(weakMapHas, signals, [value]);
}

/** @param {unknown} signal */
function signalState(signal) {
  return stateOf(signals, signal, 'an AbortSignal');
}

/**
 * Runs `algorithm` when `signal` aborts; returns a function that forgets it.
 * @param {object} signal
 * @param {() => void} algorithm
 */
export function onAbort(signal, algorithm) {
  const state = signalState(signal);
  const algorithms = state.algorithms;
  append(algorithms, algorithm);
  return function forget() {
    for (let i = 0; i < algorithms.length; i++) {
      if (algorithms[i] === algorithm) {
        for (let j = i; j < algorithms.length - 1; j++) {
          algorithms[j] = /** @type {() => void} */ (algorithms[j + 1]);
        }
        algorithms.length = algorithms.length - 1;
        return;
      }
    }
  };
}

function newSignal() {
  const { AbortSignal } = abortClasses();
  return new AbortSignal(CONSTRUCTING);
}

/**
 * A new signal that aborts when any of `sources` does, with its reason (DOM's
 * "create a dependent abort signal"): AbortSignal.any, and a Request's signal.
 * @param {object[]} sources AbortSignals
 */
export function dependentSignal(sources) {
  const signal = newSignal();
  for (let i = 0; i < sources.length; i++) {
    const state = signalState(sources[i]);
    if (state.aborted) {
      signalAbort(signal, state.reason);
      return signal;
    }
  }
  signalState(signal).dependent = true;
  for (let i = 0; i < sources.length; i++) {
    const dependents = signalState(sources[i]).dependents;
    append(dependents, signal);
  }
  return signal;
}

/**
 * Signals abort (DOM §3.2): the signal and its dependents take the reason
 * first, then each runs its algorithms and fires `abort`.
 * @param {object} signal
 * @param {unknown} reason
 */
function signalAbort(signal, reason) {
  const state = signalState(signal);
  if (state.aborted) return;
  state.aborted = true;
  state.reason =
    reason === undefined ? newDOMException('This operation was aborted', 'AbortError') : reason;
  /** @type {object[]} */
  const toRun = [signal];
  // Dependents of dependents too (AbortSignal.any of an AbortSignal.any).
  for (let k = 0; k < toRun.length; k++) {
    const dependents = signalState(toRun[k]).dependents;
    for (let i = 0; i < dependents.length; i++) {
      const dependent = /** @type {object} */ (dependents[i]);
      const dependentState = signalState(dependent);
      if (dependentState.aborted) continue;
      dependentState.aborted = true;
      dependentState.reason = state.reason;
      append(toRun, dependent);
    }
  }
  for (let i = 0; i < toRun.length; i++) {
    const target = /** @type {object} */ (toRun[i]);
    const targetState = signalState(target);
    const algorithms = targetState.algorithms;
    targetState.algorithms = [];
    for (let j = 0; j < algorithms.length; j++) {
      try {
        /** @type {() => void} */ (algorithms[j])();
      } catch (error) {
        reportError(error);
      }
    }
    fireTrusted(target, 'abort');
  }
}

/**
 * The reason `signal` aborted with (undefined while it has not).
 * @param {object} signal
 */
export function abortReason(signal) {
  return signalState(signal).reason;
}

/** @param {object} signal */
export function isAborted(signal) {
  return signalState(signal).aborted;
}

/** This realm's AbortSignal and AbortController, created on first need. */
export const abortClasses = once(function () {
  const { EventTarget } = eventClasses();

  class AbortSignal extends EventTarget {
    /** @param {unknown} [key] */
    constructor(key) {
      checkConstructing(key);
      super();
      remember(signals, this, {
        aborted: false,
        reason: undefined,
        algorithms: [],
        handler: null,
        handlerListener: null,
        dependents: [],
        dependent: false,
      });
    }

    /**
     * A signal already aborted with `reason` (default an AbortError).
     * @param {unknown} [reason]
     */
    static abort(reason) {
      const signal = newSignal();
      signalAbort(signal, reason);
      return signal;
    }

    /**
     * A signal that aborts with a TimeoutError after `milliseconds`.
     * @param {unknown} milliseconds
     */
    static timeout(milliseconds) {
      const ms = NumberCtor(milliseconds);
      if (!NumberIsFinite(ms) || ms < 0) {
        throw new CtxTypeError('AbortSignal.timeout: milliseconds must be a finite number ≥ 0');
      }
      const signal = newSignal();
      // Past the longest timer delay (2^31 - 1 ms, ~24.8 days) the timers fire at
      // once; no invocation lives that long, so the longest delay never fires in it.
      setTimer(
        function () {
          signalAbort(
            signal,
            newDOMException('The operation was aborted due to timeout', 'TimeoutError'),
          );
        },
        ms > MAX_TIMER_DELAY ? MAX_TIMER_DELAY : ms,
      );
      return signal;
    }

    /**
     * A signal that aborts when any of `signals` does, with its reason.
     * @param {Iterable<unknown>} signalList
     */
    static any(signalList) {
      /** @type {AbortSignal[]} */
      const sources = [];
      for (const source of signalList) {
        if (!isAbortSignal(source))
          throw new CtxTypeError('AbortSignal.any: every member must be an AbortSignal');
        append(sources, /** @type {AbortSignal} */ (source));
      }
      return dependentSignal(sources);
    }

    get aborted() {
      return signalState(this).aborted;
    }

    get reason() {
      return signalState(this).reason;
    }

    throwIfAborted() {
      const state = signalState(this);
      if (state.aborted) throw state.reason;
    }

    get onabort() {
      return signalState(this).handler;
    }

    set onabort(value) {
      const state = signalState(this);
      const handler = typeof value === 'function' ? value : null;
      state.handler = handler;
      const list = listenersOf(this);
      if (handler === null) {
        if (state.handlerListener !== null) removeListener(list, state.handlerListener);
        state.handlerListener = null;
        return;
      }
      if (state.handlerListener !== null) return;
      // The handler keeps the place of its first registration (HTML's event handler attributes).
      /** @type {import('./event-target.js').Listener} */
      const listener = {
        type: 'abort',
        callback: function (/** @type {object} */ event) {
          const current = state.handler;
          if (typeof current === 'function') ReflectApply(current, this, [event]);
        },
        capture: false,
        once: false,
        passive: false,
        removed: false,
      };
      state.handlerListener = listener;
      append(list, listener);
    }
  }

  // ---------------------------------------------------------------- AbortController
  /** @type {WeakMap<object, AbortSignal>} */
  const controllers = new CtxWeakMap();

  class AbortController {
    constructor() {
      remember(controllers, this, newSignal());
    }

    get signal() {
      return stateOf(controllers, this, 'an AbortController');
    }

    /** @param {unknown} [reason] */
    abort(reason) {
      signalAbort(stateOf(controllers, this, 'an AbortController'), reason);
    }
  }

  platformClasses(AbortController);
  return { AbortSignal: AbortSignal, AbortController: AbortController };
});
