// @ts-check
/**
 * Bytes for the web platform of tool code (web-platform.js): recognising a
 * BufferSource (ArrayBuffer, typed array, DataView) by the engine's own
 * internal slots, never by `instanceof` or a property tool code could forge,
 * and moving bytes across the bridge as a "binary string" (one character per
 * byte, 0–255): a primitive, which is all the bridge may carry, and one the
 * host turns into a Buffer without a copy of its own making (`latin1`).
 *
 * Part of the bootstrap (see install.js): compiled in the tool's realm, naming
 * no Node or host global; the intrinsics it uses are captured when it is called.
 */
/* exported createWebBytes */

/**
 * @typedef {{
 *   viewOf: (value: unknown) => Uint8Array | null,
 *   copyOf: (value: unknown) => Uint8Array | null,
 *   toBinary: (bytes: Uint8Array) => string,
 *   fromBinary: (text: string) => Uint8Array,
 *   isIntegerTypedArray: (value: unknown) => boolean,
 *   bufferOf: (bytes: Uint8Array) => ArrayBuffer,
 *   sliceBuffer: (bytes: Uint8Array) => ArrayBuffer,
 * }} WebBytes
 */

/**
 * Captures the intrinsics and returns the byte helpers.
 * @returns {WebBytes}
 */
function createWebBytes() {
  'use strict';
  const ReflectApply = Reflect.apply;
  const getOwnDescriptor = Object.getOwnPropertyDescriptor;
  const getPrototypeOf = Object.getPrototypeOf;
  const CtxUint8Array = Uint8Array;
  const CtxArray = Array;
  const ArrayBufferIsView = ArrayBuffer.isView;
  const StringFromCharCode = String.fromCharCode;
  const arrayJoin = Array.prototype.join;
  const TypedArrayPrototype = getPrototypeOf(Uint8Array.prototype);

  /**
   * A getter of an intrinsic prototype; every one used here exists in the language.
   * @param {object} prototype
   * @param {PropertyKey} key
   * @returns {Function}
   */
  function getterOf(prototype, key) {
    const descriptor = /** @type {PropertyDescriptor} */ (getOwnDescriptor(prototype, key));
    return /** @type {Function} */ (descriptor.get);
  }

  const typedArrayTag = getterOf(TypedArrayPrototype, Symbol.toStringTag);
  const typedArrayBuffer = getterOf(TypedArrayPrototype, 'buffer');
  const typedArrayOffset = getterOf(TypedArrayPrototype, 'byteOffset');
  const typedArrayLength = getterOf(TypedArrayPrototype, 'byteLength');
  const dataViewBuffer = getterOf(DataView.prototype, 'buffer');
  const dataViewOffset = getterOf(DataView.prototype, 'byteOffset');
  const dataViewLength = getterOf(DataView.prototype, 'byteLength');
  const arrayBufferLength = getterOf(ArrayBuffer.prototype, 'byteLength');
  // Bound once: as fast as a direct call, and immune to a replaced String.prototype.charCodeAt.
  const charCodeAt = Function.prototype.call.bind(String.prototype.charCodeAt);
  /** Bytes per String.fromCharCode call: copied to a plain array first, the fastest way measured. */
  const CHUNK = 8192;
  const INTEGER_ARRAYS = {
    Int8Array: true,
    Uint8Array: true,
    Uint8ClampedArray: true,
    Int16Array: true,
    Uint16Array: true,
    Int32Array: true,
    Uint32Array: true,
    BigInt64Array: true,
    BigUint64Array: true,
  };

  /**
   * The typed array's tag (`'Uint8Array'`…), or undefined for anything else; never throws.
   * @param {unknown} value
   * @returns {string | undefined}
   */
  function typedArrayKind(value) {
    return ReflectApply(typedArrayTag, value, []);
  }

  /**
   * Whether `value` is an ArrayBuffer of this realm (not a SharedArrayBuffer).
   * @param {unknown} value
   */
  function isArrayBuffer(value) {
    try {
      ReflectApply(arrayBufferLength, value, []);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * A Uint8Array over the bytes a BufferSource holds (no copy), or null when
   * `value` is none. A view over a SharedArrayBuffer is refused like the
   * web's BufferSource (without [AllowShared]) refuses it.
   * @param {unknown} value
   */
  function viewOf(value) {
    if (typedArrayKind(value) !== undefined) {
      const buffer = ReflectApply(typedArrayBuffer, value, []);
      if (!isArrayBuffer(buffer)) return null;
      return new CtxUint8Array(
        buffer,
        ReflectApply(typedArrayOffset, value, []),
        ReflectApply(typedArrayLength, value, []),
      );
    }
    if (ArrayBufferIsView(value)) {
      const buffer = ReflectApply(dataViewBuffer, value, []);
      if (!isArrayBuffer(buffer)) return null;
      return new CtxUint8Array(
        buffer,
        ReflectApply(dataViewOffset, value, []),
        ReflectApply(dataViewLength, value, []),
      );
    }
    if (isArrayBuffer(value)) return new CtxUint8Array(/** @type {ArrayBuffer} */ (value));
    return null;
  }

  /**
   * A copy of the bytes a BufferSource holds now (what the web takes from
   * one), or null when `value` is none.
   * @param {unknown} value
   */
  function copyOf(value) {
    const view = viewOf(value);
    return view === null ? null : new CtxUint8Array(view);
  }

  /**
   * The bytes as a binary string.
   * @param {Uint8Array} bytes
   */
  function toBinary(bytes) {
    const length = bytes.length;
    if (length === 0) return '';
    /** @type {string[]} */
    const parts = [];
    /** @type {number[]} */
    const chunk = new CtxArray(length < CHUNK ? length : CHUNK);
    for (let start = 0; start < length; start += CHUNK) {
      const size = length - start < CHUNK ? length - start : CHUNK;
      if (size !== chunk.length) chunk.length = size;
      for (let i = 0; i < size; i++) chunk[i] = /** @type {number} */ (bytes[start + i]);
      parts[parts.length] = ReflectApply(StringFromCharCode, undefined, chunk);
    }
    return parts.length === 1
      ? /** @type {string} */ (parts[0])
      : ReflectApply(arrayJoin, parts, ['']);
  }

  /**
   * A binary string (every character 0–255) as bytes.
   * @param {string} text
   */
  function fromBinary(text) {
    const length = text.length;
    const bytes = new CtxUint8Array(length);
    for (let i = 0; i < length; i++) bytes[i] = charCodeAt(text, i);
    return bytes;
  }

  /**
   * Whether `value` is a typed array of integers (what getRandomValues fills).
   * @param {unknown} value
   */
  function isIntegerTypedArray(value) {
    const kind = typedArrayKind(value);
    return (
      kind !== undefined &&
      INTEGER_ARRAYS[/** @type {keyof typeof INTEGER_ARRAYS} */ (kind)] === true
    );
  }

  /**
   * The ArrayBuffer of a Uint8Array made here (offset 0, whole buffer).
   * @param {Uint8Array} bytes
   * @returns {ArrayBuffer}
   */
  function bufferOf(bytes) {
    return ReflectApply(typedArrayBuffer, bytes, []);
  }

  /**
   * A new ArrayBuffer holding exactly the bytes of `bytes`.
   * @param {Uint8Array} bytes
   * @returns {ArrayBuffer}
   */
  function sliceBuffer(bytes) {
    // Copying into a new Uint8Array allocates a plain %ArrayBuffer%; ArrayBuffer's
    // own slice() would ask the buffer's (replaceable) constructor for one.
    return bufferOf(new CtxUint8Array(bytes));
  }

  return {
    viewOf: viewOf,
    copyOf: copyOf,
    toBinary: toBinary,
    fromBinary: fromBinary,
    isIntegerTypedArray: isIntegerTypedArray,
    bufferOf: bufferOf,
    sliceBuffer: sliceBuffer,
  };
}
