// @ts-check
/**
 * DOMException, Event, CustomEvent, EventTarget, AbortController and
 * AbortSignal for tool code: the small part of the DOM that cancellation
 * needs (`AbortSignal.timeout(ms)`, `fetch(url, {signal})`), written here
 * rather than bundled because it is a few hundred lines of well-specified
 * behaviour with no tree, no bubbling and no capturing path to walk: every
 * target stands alone, so dispatch is "call this target's listeners in order".
 * Internal state lives in WeakMaps of this closure, not on the objects, so
 * tool code can neither read nor forge it.
 *
 * Part of the bootstrap (see install.js): compiled in the tool's realm, naming
 * no Node or host global; the intrinsics it uses are captured when it is called.
 */
/* exported createWebEvents */

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
 * @typedef {{
 *   aborted: boolean, reason: unknown, algorithms: (() => void)[],
 *   handler: unknown, handlerListener: Listener | null,
 *   dependents: object[], dependent: boolean,
 * }} SignalState
 * @typedef {new (message?: unknown, options?: unknown) => Error} DOMExceptionClass
 * @typedef {{
 *   DOMException: DOMExceptionClass,
 *   Event: Function,
 *   CustomEvent: Function,
 *   EventTarget: Function,
 *   AbortController: Function,
 *   AbortSignal: Function,
 *   isAbortSignal: (value: unknown) => boolean,
 *   onAbort: (signal: object, algorithm: () => void) => () => void,
 *   abortReason: (signal: object) => unknown,
 *   isAborted: (signal: object) => boolean,
 * }} WebEvents
 */

/**
 * Captures the intrinsics and returns the classes.
 * @param {{
 *   setTimeout: (callback: () => void, ms: number) => unknown,
 *   clearTimeout: (id: unknown) => void,
 *   reportError: (error: unknown) => void,
 *   now: () => number,
 * }} platform the context's timers, where a listener's exception goes, and the clock
 * @returns {WebEvents}
 */
function createWebEvents(platform) {
  'use strict';
  const ReflectApply = Reflect.apply;
  const ObjectDefineProperty = Object.defineProperty;
  const ObjectFreeze = Object.freeze;
  const CtxError = Error;
  const CtxTypeError = TypeError;
  const CtxWeakMap = WeakMap;
  const StringCtor = String;
  /** The longest delay a timer takes (a signed 32-bit count of ms). */
  const MAX_TIMER_DELAY = 2147483647;
  const NumberCtor = Number;
  const NumberIsFinite = Number.isFinite;
  const weakMapGet = WeakMap.prototype.get;
  const weakMapSet = WeakMap.prototype.set;
  const weakMapHas = WeakMap.prototype.has;
  const setTimer = platform.setTimeout;
  const reportError = platform.reportError;
  const now = platform.now;

  /**
   * @template {object} K, V
   * @param {WeakMap<K, V>} map
   * @param {unknown} key
   * @param {string} what
   * @returns {V}
   */
  function stateOf(map, key, what) {
    const state = ReflectApply(weakMapGet, map, [key]);
    if (state === undefined) throw new CtxTypeError('Illegal invocation: not ' + what);
    return state;
  }

  /**
   * @template {object} K, V
   * @param {WeakMap<K, V>} map
   * @param {K} key
   * @param {V} value
   */
  function remember(map, key, value) {
    ReflectApply(weakMapSet, map, [key, value]);
  }

  /**
   * Reads `key` of an options dictionary once; undefined when the dictionary is absent.
   * @param {any} dictionary
   * @param {string} key
   */
  function member(dictionary, key) {
    return dictionary === undefined || dictionary === null ? undefined : dictionary[key];
  }

  /**
   * @param {unknown} value
   * @param {string} where
   */
  function dictionary(value, where) {
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

  // ---------------------------------------------------------------- DOMException
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
  for (let i = 0; i < CONSTANTS.length; i++) {
    const entry = /** @type {[string, number]} */ (CONSTANTS[i]);
    const constant = { value: entry[1], enumerable: true };
    ObjectDefineProperty(DOMException, entry[0], constant);
    ObjectDefineProperty(DOMException.prototype, entry[0], constant);
  }

  // ---------------------------------------------------------------- Event
  /** @type {WeakMap<object, EventState>} */
  const events = new CtxWeakMap();
  const PHASES = [
    ['NONE', 0],
    ['CAPTURING_PHASE', 1],
    ['AT_TARGET', 2],
    ['BUBBLING_PHASE', 3],
  ];

  /** @param {unknown} event */
  function eventState(event) {
    return stateOf(events, event, 'an Event');
  }

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
  for (let i = 0; i < PHASES.length; i++) {
    const entry = /** @type {[string, number]} */ (PHASES[i]);
    const constant = { value: entry[1], enumerable: true };
    ObjectDefineProperty(Event, entry[0], constant);
    ObjectDefineProperty(Event.prototype, entry[0], constant);
  }

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

  // ---------------------------------------------------------------- EventTarget
  /** @type {WeakMap<object, Listener[]>} */
  const targets = new CtxWeakMap();

  /** @param {unknown} target */
  function listenersOf(target) {
    return stateOf(targets, target, 'an EventTarget');
  }

  /**
   * @param {Listener[]} list
   * @param {Listener} listener
   */
  function removeListener(list, listener) {
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
   * Calls one listener; what it throws is reported, never passed to the dispatcher.
   * @param {Listener} listener
   * @param {EventTarget} target
   * @param {Event} event
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
   * @param {EventTarget} target
   * @param {Event} event
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
      if (signal !== undefined && signalState(signal).aborted) return;
      for (let i = 0; i < list.length; i++) {
        const existing = /** @type {Listener} */ (list[i]);
        if (
          existing.type === name &&
          existing.callback === callback &&
          existing.capture === capture
        ) {
          return;
        }
      }
      /** @type {Listener} */
      const listener = {
        type: name,
        callback: callback,
        capture: capture,
        once: once,
        passive: passive,
        removed: false,
      };
      list[list.length] = listener;
      if (signal !== undefined) {
        onAbort(signal, function () {
          removeListener(list, listener);
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
      for (let i = 0; i < list.length; i++) {
        const existing = /** @type {Listener} */ (list[i]);
        if (
          existing.type === name &&
          existing.callback === callback &&
          existing.capture === capture
        ) {
          removeListener(list, existing);
          return;
        }
      }
    }

    /** @param {unknown} event */
    dispatchEvent(event) {
      listenersOf(this);
      if (!ReflectApply(weakMapHas, events, [event])) {
        throw new CtxTypeError('dispatchEvent: the argument must be an Event');
      }
      const state = eventState(event);
      if (state.dispatching) {
        throw new DOMException('the event is already being dispatched', 'InvalidStateError');
      }
      state.trusted = false;
      return dispatch(this, /** @type {Event} */ (event));
    }
  }

  // ---------------------------------------------------------------- AbortSignal
  /** Only this closure may construct an AbortSignal. */
  const CONSTRUCTING = ObjectFreeze({});
  /** @type {WeakMap<object, SignalState>} */
  const signals = new CtxWeakMap();

  /** @param {unknown} value */
  function isAbortSignal(value) {
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
  function onAbort(signal, algorithm) {
    const state = signalState(signal);
    const algorithms = state.algorithms;
    algorithms[algorithms.length] = algorithm;
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
    return new AbortSignal(CONSTRUCTING);
  }

  /**
   * Signals abort (DOM §3.2): the signal and its dependents take the reason
   * first, then each runs its algorithms and fires `abort`.
   * @param {AbortSignal} signal
   * @param {unknown} reason
   */
  function signalAbort(signal, reason) {
    const state = signalState(signal);
    if (state.aborted) return;
    state.aborted = true;
    state.reason =
      reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
    /** @type {AbortSignal[]} */
    const toRun = [signal];
    // Dependents of dependents too (AbortSignal.any of an AbortSignal.any).
    for (let k = 0; k < toRun.length; k++) {
      const dependents = signalState(toRun[k]).dependents;
      for (let i = 0; i < dependents.length; i++) {
        const dependent = /** @type {AbortSignal} */ (dependents[i]);
        const dependentState = signalState(dependent);
        if (dependentState.aborted) continue;
        dependentState.aborted = true;
        dependentState.reason = state.reason;
        toRun[toRun.length] = dependent;
      }
    }
    for (let i = 0; i < toRun.length; i++) {
      const target = /** @type {AbortSignal} */ (toRun[i]);
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
      const event = new Event('abort');
      eventState(event).trusted = true;
      dispatch(target, event);
    }
  }

  class AbortSignal extends EventTarget {
    /** @param {unknown} [key] */
    constructor(key) {
      if (key !== CONSTRUCTING) throw new CtxTypeError('Illegal constructor');
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
            new DOMException('The operation was aborted due to timeout', 'TimeoutError'),
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
        sources[sources.length] = /** @type {AbortSignal} */ (source);
      }
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
        dependents[dependents.length] = signal;
      }
      return signal;
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
      /** @type {Listener} */
      const listener = {
        type: 'abort',
        callback: function (/** @type {Event} */ event) {
          const current = state.handler;
          if (typeof current === 'function') ReflectApply(current, this, [event]);
        },
        capture: false,
        once: false,
        passive: false,
        removed: false,
      };
      state.handlerListener = listener;
      list[list.length] = listener;
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

  return {
    DOMException: DOMException,
    Event: Event,
    CustomEvent: CustomEvent,
    EventTarget: EventTarget,
    AbortController: AbortController,
    AbortSignal: AbortSignal,
    isAbortSignal: isAbortSignal,
    onAbort: onAbort,
    abortReason: function (signal) {
      return signalState(signal).reason;
    },
    isAborted: function (signal) {
      return signalState(signal).aborted;
    },
  };
}
