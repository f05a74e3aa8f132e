// @ts-check
/**
 * Bytes for the web platform: recognising a BufferSource (ArrayBuffer, typed
 * array, DataView) by the engine's own internal slots, never by `instanceof`
 * or a property tool code could forge, and moving bytes across the bridge as
 * a "binary string" (one character per byte, 0–255): a primitive, which is
 * all the bridge may carry, and one the host turns into a Buffer without a
 * copy of its own making (`latin1`).
 */
import {
  ArrayBufferIsView,
  CtxUint8Array,
  ReflectApply,
  StringFromCharCode,
  append,
  arrayBufferLength,
  arrayJoin,
  bareArray,
  charCodeAt,
  dataViewBuffer,
  dataViewLength,
  dataViewOffset,
  typedArrayBuffer,
  typedArrayByteLength as typedArrayLength,
  typedArrayOffset,
  typedArraySet,
  typedArrayTag,
} from '../primordials.js';

/** Bytes per String.fromCharCode call: copied to a plain array first, the fastest way measured. */
const CHUNK = 8192;

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
export function viewOf(value) {
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
export function copyOf(value) {
  const view = viewOf(value);
  return view === null ? null : new CtxUint8Array(view);
}

/**
 * The bytes as a binary string.
 * @param {Uint8Array} bytes
 */
export function toBinary(bytes) {
  const length = ReflectApply(typedArrayLength, bytes, []);
  if (length === 0) return '';
  /** @type {string[]} */
  const parts = [];
  /** @type {number[]} */
  const chunk = bareArray(length < CHUNK ? length : CHUNK);
  for (let start = 0; start < length; start += CHUNK) {
    const size = length - start < CHUNK ? length - start : CHUNK;
    if (size !== chunk.length) chunk.length = size;
    for (let i = 0; i < size; i++) chunk[i] = /** @type {number} */ (bytes[start + i]);
    append(parts, ReflectApply(StringFromCharCode, undefined, chunk));
  }
  return parts.length === 1
    ? /** @type {string} */ (parts[0])
    : ReflectApply(arrayJoin, parts, ['']);
}

/**
 * The chunks' bytes joined, in one new Uint8Array.
 * @param {Uint8Array[]} chunks
 */
export function concat(chunks) {
  let total = 0;
  for (let i = 0; i < chunks.length; i++) {
    total += ReflectApply(typedArrayLength, /** @type {Uint8Array} */ (chunks[i]), []);
  }
  const out = new CtxUint8Array(total);
  let offset = 0;
  for (let i = 0; i < chunks.length; i++) {
    const chunk = /** @type {Uint8Array} */ (chunks[i]);
    ReflectApply(typedArraySet, out, [chunk, offset]);
    offset += ReflectApply(typedArrayLength, chunk, []);
  }
  return out;
}

/**
 * A binary string (every character 0–255) as bytes.
 * @param {string} text
 */
export function fromBinary(text) {
  const length = text.length;
  const bytes = new CtxUint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = charCodeAt(text, i);
  return bytes;
}

/**
 * Whether `value` is a typed array of integers (what getRandomValues fills).
 * A switch rather than a table: a table would be an object made in every
 * context, most of which never ask.
 * @param {unknown} value
 */
export function isIntegerTypedArray(value) {
  switch (typedArrayKind(value)) {
    case 'Int8Array':
    case 'Uint8Array':
    case 'Uint8ClampedArray':
    case 'Int16Array':
    case 'Uint16Array':
    case 'Int32Array':
    case 'Uint32Array':
    case 'BigInt64Array':
    case 'BigUint64Array':
      return true;
    default:
      return false;
  }
}

/**
 * The ArrayBuffer of a Uint8Array made here (offset 0, whole buffer).
 * @param {Uint8Array} bytes
 * @returns {ArrayBuffer}
 */
export function bufferOf(bytes) {
  return ReflectApply(typedArrayBuffer, bytes, []);
}

/**
 * A new ArrayBuffer holding exactly the bytes of `bytes`.
 * @param {Uint8Array} bytes
 * @returns {ArrayBuffer}
 */
export function sliceBuffer(bytes) {
  // Copying into a new Uint8Array allocates a plain %ArrayBuffer%; ArrayBuffer's
  // own slice() would ask the buffer's (replaceable) constructor for one.
  return bufferOf(new CtxUint8Array(bytes));
}
