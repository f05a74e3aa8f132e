// @ts-check
/**
 * Event, CustomEvent and EventTarget for tool code: the small part of the DOM
 * that cancellation needs (abort.js), written here rather than bundled
 * because it is a few hundred lines of well-specified behaviour with no tree,
 * no bubbling and no capturing path to walk: every target stands alone, so
 * dispatch is "call this target's listeners in order". Internal state lives
 * in WeakMaps of this module (webidl.js), never on the objects.
 */
import {
  CtxTypeError,
  CtxWeakMap,
  ReflectApply,
  StringCtor,
  append,
  weakMapGet,
  weakMapHas,
} from '../primordials.js';
import { now } from '../bridge.js';
import { reportError } from '../errors.js';
import {
  defineConstants,
  dictionary,
  member,
  once,
  platformClasses,
  remember,
  stateOf,
} from '../webidl.js';
import { isAbortSignal, isAborted, onAbort } from './abort.js';
import { newDOMException } from './dom-exception.js';

/**
 * @typedef {{
 *   type: string, bubbles: boolean, cancelable: boolean, composed: boolean,
 *   target: object | null, current: object | null, phase: number,
 *   canceled: boolean, stop: boolean, stopNow: boolean, dispatching: boolean,
 *   trusted: boolean, passive: boolean, timeStamp: number,
 * }} EventState
 * @typedef {{
 *   type: string, callback: unknown, capture: boolean, once: boolean,
 *   passive: boolean, removed: boolean,
 * }} Listener
 */

/** @type {WeakMap<object, EventState>} */
const events = new CtxWeakMap();
/** @param {unknown} event */
function eventState(event) {
  return stateOf(events, event, 'an Event');
}

/** @type {WeakMap<object, Listener[]>} */
const targets = new CtxWeakMap();

/** @param {unknown} target */
export function listenersOf(target) {
  return stateOf(targets, target, 'an EventTarget');
}

/**
 * @param {Listener[]} list
 * @param {Listener} listener
 */
export function removeListener(list, listener) {
  listener.removed = true;
  for (let i = 0; i < list.length; i++) {
    if (list[i] === listener) {
      for (let j = i; j < list.length - 1; j++) list[j] = /** @type {Listener} */ (list[j + 1]);
      list.length = list.length - 1;
      return;
    }
  }
}

/**
 * The listener registered for this type, callback and capture flag, if any (DOM's "flatten" key).
 * @param {Listener[]} list
 * @param {string} type
 * @param {unknown} callback
 * @param {boolean} capture
 * @returns {Listener | null}
 */
function findListener(list, type, callback, capture) {
  for (let i = 0; i < list.length; i++) {
    const existing = /** @type {Listener} */ (list[i]);
    if (existing.type === type && existing.callback === callback && existing.capture === capture) {
      return existing;
    }
  }
  return null;
}

/**
 * Calls one listener; what it throws is reported, never passed to the dispatcher.
 * @param {Listener} listener
 * @param {object} target
 * @param {object} event
 */
function invoke(listener, target, event) {
  try {
    const callback = /** @type {any} */ (listener.callback);
    if (typeof callback === 'function') {
      ReflectApply(callback, target, [event]);
    } else {
      const handleEvent = callback.handleEvent;
      if (typeof handleEvent !== 'function') {
        throw new CtxTypeError("the listener's handleEvent is not a function");
      }
      ReflectApply(handleEvent, callback, [event]);
    }
  } catch (error) {
    reportError(error);
  }
}

/**
 * Dispatches `event` at `target` (no tree: the target is the whole path).
 * @param {object} target
 * @param {object} event
 */
function dispatch(target, event) {
  const state = eventState(event);
  const list = listenersOf(target);
  state.dispatching = true;
  state.target = target;
  state.current = target;
  state.phase = 2;
  // Capturing listeners of the target run first, then the others (DOM §2.9).
  const snapshot = [];
  for (let i = 0; i < list.length; i++) snapshot[i] = /** @type {Listener} */ (list[i]);
  for (let pass = 0; pass < 2 && !state.stop; pass++) {
    const capture = pass === 0;
    for (let i = 0; i < snapshot.length; i++) {
      const listener = /** @type {Listener} */ (snapshot[i]);
      if (listener.removed || listener.type !== state.type || listener.capture !== capture) {
        continue;
      }
      if (listener.once) removeListener(list, listener);
      state.passive = listener.passive;
      invoke(listener, target, event);
      state.passive = false;
      if (state.stopNow) break;
    }
  }
  state.dispatching = false;
  state.current = null;
  state.phase = 0;
  state.stop = false;
  state.stopNow = false;
  return !state.canceled;
}

/**
 * The capture flag of add/removeEventListener's options.
 * @param {unknown} options
 */
function captureOf(options) {
  if (typeof options === 'boolean') return options;
  if (options !== null && typeof options === 'object')
    return !!(/** @type {any} */ (options).capture);
  return false;
}

/**
 * Fires a trusted event of `type` at `target` (an abort, say).
 * @param {object} target
 * @param {string} type
 */
export function fireTrusted(target, type) {
  const { Event } = eventClasses();
  const event = new Event(type);
  eventState(event).trusted = true;
  dispatch(target, event);
}

/** This realm's Event, CustomEvent and EventTarget, created on first need. */
export const eventClasses = once(function () {
  /** @type {(readonly [string, number])[]} */
  const PHASES = [
    ['NONE', 0],
    ['CAPTURING_PHASE', 1],
    ['AT_TARGET', 2],
    ['BUBBLING_PHASE', 3],
  ];

  class Event {
    /**
     * @param {unknown} type
     * @param {unknown} [eventInitDict] {bubbles, cancelable, composed}
     */
    constructor(type, eventInitDict) {
      if (arguments.length === 0) throw new CtxTypeError("Event: the 'type' argument is required");
      const init = dictionary(eventInitDict, 'Event');
      remember(events, this, {
        type: StringCtor(type),
        bubbles: !!member(init, 'bubbles'),
        cancelable: !!member(init, 'cancelable'),
        composed: !!member(init, 'composed'),
        target: null,
        current: null,
        phase: 0,
        canceled: false,
        stop: false,
        stopNow: false,
        dispatching: false,
        trusted: false,
        passive: false,
        timeStamp: now(),
      });
    }

    get type() {
      return eventState(this).type;
    }
    get target() {
      return eventState(this).target;
    }
    get srcElement() {
      return eventState(this).target;
    }
    get currentTarget() {
      return eventState(this).current;
    }
    get eventPhase() {
      return eventState(this).phase;
    }
    get bubbles() {
      return eventState(this).bubbles;
    }
    get cancelable() {
      return eventState(this).cancelable;
    }
    get composed() {
      return eventState(this).composed;
    }
    get defaultPrevented() {
      return eventState(this).canceled;
    }
    get isTrusted() {
      return eventState(this).trusted;
    }
    get timeStamp() {
      return eventState(this).timeStamp;
    }
    get returnValue() {
      return !eventState(this).canceled;
    }
    set returnValue(value) {
      if (!value) this.preventDefault();
    }
    get cancelBubble() {
      return eventState(this).stop;
    }
    set cancelBubble(value) {
      if (value) eventState(this).stop = true;
    }
    composedPath() {
      const state = eventState(this);
      return state.current === null ? [] : [state.current];
    }
    stopPropagation() {
      eventState(this).stop = true;
    }
    stopImmediatePropagation() {
      const state = eventState(this);
      state.stop = true;
      state.stopNow = true;
    }
    preventDefault() {
      const state = eventState(this);
      if (state.cancelable && !state.passive) state.canceled = true;
    }
  }
  defineConstants(Event, PHASES);

  /** @type {WeakMap<object, unknown>} */
  const details = new CtxWeakMap();

  class CustomEvent extends Event {
    /**
     * @param {unknown} type
     * @param {unknown} [eventInitDict] {bubbles, cancelable, composed, detail}
     */
    constructor(type, eventInitDict) {
      if (arguments.length === 0) {
        throw new CtxTypeError("CustomEvent: the 'type' argument is required");
      }
      const init = dictionary(eventInitDict, 'CustomEvent');
      super(type, init);
      const detail = member(init, 'detail');
      remember(details, this, detail === undefined ? null : detail);
    }
    get detail() {
      eventState(this);
      const detail = ReflectApply(weakMapGet, details, [this]);
      return detail === undefined ? null : detail;
    }
  }

  class EventTarget {
    constructor() {
      remember(targets, this, []);
    }

    /**
     * @param {unknown} type
     * @param {unknown} callback a function or an object with handleEvent
     * @param {unknown} [options] capture, or {capture, once, passive, signal}
     */
    addEventListener(type, callback, options) {
      const list = listenersOf(this);
      const name = StringCtor(type);
      if (callback === null || callback === undefined) return;
      if (typeof callback !== 'function' && typeof callback !== 'object') {
        throw new CtxTypeError('addEventListener: the listener must be a function or an object');
      }
      const isObject = options !== null && typeof options === 'object';
      const capture = captureOf(options);
      const once = isObject ? !!(/** @type {any} */ (options).once) : false;
      const passive = isObject ? !!(/** @type {any} */ (options).passive) : false;
      const signal = isObject ? /** @type {any} */ (options).signal : undefined;
      if (signal !== undefined && !isAbortSignal(signal)) {
        throw new CtxTypeError("addEventListener: the 'signal' option must be an AbortSignal");
      }
      if (signal !== undefined && isAborted(signal)) return;
      if (findListener(list, name, callback, capture) === null) {
        append(list, {
          type: name,
          callback: callback,
          capture: capture,
          once: once,
          passive: passive,
          removed: false,
        });
      }
      // The signal's abort steps are added even when the listener was already
      // there, and remove whichever listener then has this type, callback and
      // capture (DOM "add an event listener", as Node does): a listener is
      // known by that key, not by the call that registered it.
      if (signal !== undefined) {
        onAbort(signal, function () {
          const current = findListener(list, name, callback, capture);
          if (current !== null) removeListener(list, current);
        });
      }
    }

    /**
     * @param {unknown} type
     * @param {unknown} callback
     * @param {unknown} [options] capture, or {capture}
     */
    removeEventListener(type, callback, options) {
      const list = listenersOf(this);
      const name = StringCtor(type);
      const capture = captureOf(options);
      const existing = findListener(list, name, callback, capture);
      if (existing !== null) removeListener(list, existing);
    }

    /** @param {unknown} event */
    dispatchEvent(event) {
      listenersOf(this);
      if (!ReflectApply(weakMapHas, events, [event])) {
        throw new CtxTypeError('dispatchEvent: the argument must be an Event');
      }
      const state = eventState(event);
      if (state.dispatching) {
        throw newDOMException('the event is already being dispatched', 'InvalidStateError');
      }
      state.trusted = false;
      return dispatch(this, /** @type {object} */ (event));
    }
  }

  platformClasses(Event, EventTarget);
  return { Event: Event, CustomEvent: CustomEvent, EventTarget: EventTarget };
});
