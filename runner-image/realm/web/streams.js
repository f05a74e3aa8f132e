// @ts-check
/**
 * ReadableStream, WritableStream, TransformStream and their readers,
 * writers, controllers and queuing strategies for tool code: the library
 * web-streams-polyfill (its ponyfill build, tested against the
 * web-platform-tests), bundled by scripts/build-harness.ts into a script of
 * its own that only leaves a factory in a slot of the global, as URL's does
 * (url.js). `takeStreamsFactory` takes it out of tool code's reach; it runs
 * on the first read of one of these globals, or ahead, while idle, when the
 * tool's code names one (tool-context.ts).
 *
 * The factory is handed every global the library names (STREAMS_INTRINSICS
 * in the build script), taken from primordials.js: a tool that replaced
 * `TypeError`, `Symbol` or `Promise.prototype.then` before its first stream
 * does not reach the library. What it keeps of its own design: its state
 * lives in underscore properties of the objects (`stream._state`), which tool
 * code can see and spoil, for its own streams only.
 */
import {
  CtxArrayBuffer,
  CtxDataView,
  CtxError,
  CtxFunction,
  CtxMath,
  CtxObject,
  CtxPromise,
  CtxRangeError,
  CtxSymbol,
  CtxTypeError,
  CtxUint8Array,
  GlobalIsFinite,
  NumberCtor,
  ObjectFreeze,
  ObjectGetOwnPropertyDescriptor,
  ReflectApply,
  StringCtor,
  hasOwn,
  promiseThen,
} from '../primordials.js';
import { once, platformClasses } from '../webidl.js';
import { abortClasses } from './abort.js';
import { domExceptionClass } from './dom-exception.js';

/** Where the host leaves the streams implementation's factory (see scripts/build-harness.ts). */
const STREAMS_SLOT = '__mcphostWebStreams';

/** @type {unknown} */
let streamsFactory;

/**
 * Takes the factory out of the global, before any tool code runs.
 * @param {Record<string, unknown>} G the context's global
 */
export function takeStreamsFactory(G) {
  const slot = ObjectGetOwnPropertyDescriptor(G, STREAMS_SLOT);
  delete G[STREAMS_SLOT];
  streamsFactory = slot === undefined ? undefined : slot.value;
}

/**
 * What the library gets for each global it names. `queueMicrotask`,
 * `structuredClone`, `self` and `global` are left undefined: it then queues
 * microtasks through the captured `then`, and moves an ArrayBuffer it takes
 * over with `transfer()` where the engine has it (else keeps it as is; the
 * realm's structuredClone transfers nothing).
 */
function streamsIntrinsics() {
  return ObjectFreeze({
    // Each WritableStream's controller has an AbortController (its `signal`):
    // the realm's, whose classes are made when the first one is.
    AbortController: function AbortController() {
      return new (abortClasses().AbortController)();
    },
    ArrayBuffer: CtxArrayBuffer,
    DataView: CtxDataView,
    Error: CtxError,
    Function: CtxFunction,
    Math: CtxMath,
    Number: NumberCtor,
    Object: CtxObject,
    Promise: CtxPromise,
    RangeError: CtxRangeError,
    String: StringCtor,
    Symbol: CtxSymbol,
    TypeError: CtxTypeError,
    Uint8Array: CtxUint8Array,
    global: undefined,
    // The library takes `globalThis.DOMException` as it is evaluated, for the
    // one error it makes (`new DOMException('Aborted', 'AbortError')`, an
    // aborted pipeTo's): a stand-in that makes the realm's class only then.
    globalThis: ObjectFreeze({
      DOMException: function DOMException(
        /** @type {unknown} */ message,
        /** @type {unknown} */ name,
      ) {
        return new (domExceptionClass())(message, name);
      },
    }),
    isFinite: GlobalIsFinite,
    queueMicrotask: undefined,
    self: undefined,
    structuredClone: undefined,
    // Stand-ins of `Function.prototype.apply`, `Object.prototype.hasOwnProperty`
    // and `Promise.prototype.then`, which the library only ever `.call`s.
    intrinsicApply: ObjectFreeze({
      /**
       * @param {Function} target
       * @param {unknown} receiver
       * @param {ArrayLike<unknown> | null | undefined} args
       */
      call: function (target, receiver, args) {
        return ReflectApply(target, receiver, args === undefined || args === null ? [] : args);
      },
    }),
    intrinsicHasOwn: ObjectFreeze({
      /**
       * @param {unknown} object
       * @param {PropertyKey} key
       */
      call: function (object, key) {
        return ReflectApply(hasOwn, object, [key]);
      },
    }),
    intrinsicThen: ObjectFreeze({
      /**
       * @param {unknown} promise
       * @param {unknown} onFulfilled
       * @param {unknown} onRejected
       */
      call: function (promise, onFulfilled, onRejected) {
        return ReflectApply(promiseThen, promise, [onFulfilled, onRejected]);
      },
    }),
  });
}

/**
 * What the factory returns (STREAMS_EXPORTS in the build script).
 * @typedef {{
 *   ReadableStream: Function, ReadableStreamDefaultReader: Function,
 *   ReadableStreamBYOBReader: Function, ReadableStreamBYOBRequest: Function,
 *   ReadableStreamDefaultController: Function, ReadableByteStreamController: Function,
 *   WritableStream: Function, WritableStreamDefaultWriter: Function,
 *   WritableStreamDefaultController: Function, TransformStream: Function,
 *   TransformStreamDefaultController: Function, ByteLengthQueuingStrategy: Function,
 *   CountQueuingStrategy: Function,
 * }} StreamClasses
 */

/** This realm's stream classes, made by the factory on first need. */
export const streamClasses = once(function () {
  if (typeof streamsFactory !== 'function') {
    throw new CtxError('ReadableStream is not available: its implementation was not loaded');
  }
  const made = /** @type {StreamClasses} */ (streamsFactory(streamsIntrinsics()));
  streamsFactory = undefined;
  // structuredClone refuses them, as the platform's objects they are.
  platformClasses(
    made.ReadableStream,
    made.ReadableStreamDefaultReader,
    made.ReadableStreamBYOBReader,
    made.ReadableStreamBYOBRequest,
    made.ReadableStreamDefaultController,
    made.ReadableByteStreamController,
    made.WritableStream,
    made.WritableStreamDefaultWriter,
    made.WritableStreamDefaultController,
    made.TransformStream,
    made.TransformStreamDefaultController,
    made.ByteLengthQueuingStrategy,
    made.CountQueuingStrategy,
  );
  return made;
});
