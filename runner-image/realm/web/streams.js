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
  typedArrayBuffer,
  typedArrayLength,
  typedArrayOffset,
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
  // Taken before tool code can reach the prototype (this group creates it).
  const locked = ObjectGetOwnPropertyDescriptor(made.ReadableStream.prototype, 'locked');
  readableParts = {
    ReadableStream: made.ReadableStream,
    getReader: made.ReadableStream.prototype.getReader,
    locked: /** @type {() => boolean} */ (/** @type {PropertyDescriptor} */ (locked).get),
    enqueue: made.ReadableByteStreamController.prototype.enqueue,
    close: made.ReadableByteStreamController.prototype.close,
  };
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

/**
 * What the realm's own code uses of ReadableStream, captured when the
 * classes were made (before tool code could replace a method).
 * @type {{
 *   ReadableStream: Function, getReader: Function, locked: () => boolean,
 *   enqueue: Function, close: Function,
 * } | null}
 */
let readableParts = null;

/** Most bytes one chunk of a byte stream of the realm's carries. */
const CHUNK_BYTES = 65536;

/**
 * A byte stream of the bytes `load` gives when a reader first asks (a byte
 * stream's high-water mark is 0: nothing is read before), handed out in
 * chunks, each a copy the reader may keep or detach. The source is a
 * null-prototype object: nothing tool code plants on Object.prototype
 * becomes one of its callbacks.
 * @param {() => Uint8Array} load bytes the stream only reads
 * @returns {object}
 */
export function byteStream(load) {
  const parts = readableStreamParts();
  /** @type {Uint8Array | null} */
  let data = null;
  let offset = 0;
  const source = {
    __proto__: null,
    type: 'bytes',
    /** @param {any} controller */
    pull: function (controller) {
      if (data === null) data = load();
      const total = ReflectApply(typedArrayLength, data, []);
      if (offset < total) {
        const end = offset + CHUNK_BYTES < total ? offset + CHUNK_BYTES : total;
        const chunk = new CtxUint8Array(
          ReflectApply(typedArrayBuffer, data, []),
          ReflectApply(typedArrayOffset, data, []) + offset,
          end - offset,
        );
        offset = end;
        ReflectApply(parts.enqueue, controller, [new CtxUint8Array(chunk)]);
      }
      if (offset >= total) ReflectApply(parts.close, controller, []);
    },
  };
  return new /** @type {any} */ (parts.ReadableStream)(source);
}

/**
 * Whether a stream of the realm's is locked to a reader.
 * @param {object} stream
 */
export function isLocked(stream) {
  return ReflectApply(readableStreamParts().locked, stream, []);
}

/**
 * Locks a stream of the realm's to a reader no one holds: a body read whole
 * by text() or json() leaves its stream unusable, as the Fetch standard says.
 * @param {object} stream
 */
export function lockForever(stream) {
  ReflectApply(readableStreamParts().getReader, stream, []);
}

function readableStreamParts() {
  if (readableParts === null) streamClasses();
  return /** @type {NonNullable<typeof readableParts>} */ (readableParts);
}
