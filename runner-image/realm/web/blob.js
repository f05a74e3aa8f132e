// @ts-check
/**
 * Blob and File (W3C File API §3–4) for tool code. A Blob's bytes are one
 * Uint8Array of this realm that nothing ever writes after the constructor
 * filled it, so a slice, a File made from a Blob (FormData does this) and a
 * Blob given as a body share them instead of copying; what leaves a Blob
 * (arrayBuffer(), bytes()) is always a copy. The bytes live in the
 * container's memory like any other value of the tool's. stream() reads
 * them in chunks, each a copy (streams.js).
 */
import {
  CtxPromise,
  CtxTypeError,
  CtxUint8Array,
  CtxWeakMap,
  DateNow,
  MathTrunc,
  NumberIsFinite,
  ObjectCreate,
  ObjectDefineProperty,
  ReflectApply,
  SymbolIterator,
  SymbolToStringTag,
  append,
  charCodeAt,
  toLowerCase,
  typedArrayBuffer,
  typedArrayLength,
  typedArrayOffset,
  weakMapGet,
} from '../primordials.js';
import { dictionary, member, once, platformClasses, remember, stateOf } from '../webidl.js';
import * as bytes from './bytes.js';
import { stringBuilder, toUsvString } from './infra.js';
import { byteStream } from './streams.js';
import { utf8DecodeAll, utf8Encode } from './utf8.js';

/**
 * @typedef {{ name: string, lastModified: number }} FileFields
 * @typedef {{ bytes: Uint8Array, size: number, type: string, file: FileFields | null }} BlobState
 */

/** The Blobs' states, once the classes exist (before that nothing can be a Blob). */
/** @type {WeakMap<object, BlobState> | null} */
let blobStates = null;

/**
 * The state of a Blob (or File) of this realm, or null for anything else;
 * never creates the classes.
 * @param {unknown} value
 * @returns {BlobState | null}
 */
export function blobStateOf(value) {
  if (blobStates === null || value === null || typeof value !== 'object') return null;
  const state = ReflectApply(weakMapGet, blobStates, [value]);
  return state === undefined ? null : state;
}

/**
 * WebIDL's DOMString conversion: ToString, which throws a TypeError for a
 * Symbol (String(symbol) would not).
 * @param {unknown} value
 */
export function domString(value) {
  return `${/** @type {any} */ (value)}`;
}

/**
 * A type as a Blob keeps it: empty when it has a character outside
 * U+0020–U+007E, else in ASCII lower case.
 * @param {string} type
 */
export function blobType(type) {
  for (let i = 0; i < type.length; i++) {
    const code = charCodeAt(type, i);
    if (code < 0x20 || code > 0x7e) return '';
  }
  return toLowerCase(type);
}

/**
 * `text` with every CR LF and lone CR turned into LF (the "native" line
 * ending of the Linux the container runs).
 * @param {string} text
 */
function nativeLineEndings(text) {
  let found = false;
  for (let i = 0; i < text.length && !found; i++) found = charCodeAt(text, i) === 0x0d;
  if (!found) return text;
  const out = stringBuilder();
  for (let i = 0; i < text.length; i++) {
    const code = charCodeAt(text, i);
    if (code !== 0x0d) out.push(code);
    else {
      out.push(0x0a);
      if (i + 1 < text.length && charCodeAt(text, i + 1) === 0x0a) i++;
    }
  }
  return out.text();
}

/** 2^63, the bound of a long long (exact as a double). */
const TWO_TO_63 = 9223372036854775808;

/**
 * WebIDL's `[Clamp] long long`: NaN is 0, the number is clamped to the
 * range and rounded to the nearest integer, ties to even.
 * @param {unknown} value
 */
function clampLongLong(value) {
  const number = +(/** @type {any} */ (value));
  if (number !== number) return 0;
  if (number >= TWO_TO_63) return TWO_TO_63 - 1;
  if (number <= -TWO_TO_63) return -TWO_TO_63;
  const truncated = MathTrunc(number);
  const floor = truncated > number ? truncated - 1 : truncated;
  const fraction = number - floor;
  let rounded = floor;
  if (fraction > 0.5 || (fraction === 0.5 && floor % 2 !== 0)) rounded = floor + 1;
  return rounded + 0;
}

/**
 * WebIDL's `long long` (no [Clamp]): not finite is 0, truncated, then wrapped
 * modulo 2^64 into the signed range.
 * @param {unknown} value
 */
function longLong(value) {
  const number = +(/** @type {any} */ (value));
  if (!NumberIsFinite(number)) return 0;
  let integer = MathTrunc(number);
  if (integer >= TWO_TO_63 || integer < -TWO_TO_63) {
    integer = integer % (TWO_TO_63 * 2);
    if (integer < 0) integer += TWO_TO_63 * 2;
    if (integer >= TWO_TO_63) integer -= TWO_TO_63 * 2;
  }
  return integer + 0;
}

/**
 * Where a slice starts or ends: a negative position counts from the end.
 * @param {number} position
 * @param {number} size
 */
function relativePosition(position, size) {
  if (position < 0) return size + position > 0 ? size + position : 0;
  return position < size ? position : size;
}

/**
 * A view of the bytes of `view` from `from` to `to`, sharing them.
 * @param {Uint8Array} view
 * @param {number} from
 * @param {number} to
 */
function viewBetween(view, from, to) {
  return new CtxUint8Array(
    ReflectApply(typedArrayBuffer, view, []),
    ReflectApply(typedArrayOffset, view, []) + from,
    to - from,
  );
}

/** @param {Uint8Array} view */
function lengthOf(view) {
  return ReflectApply(typedArrayLength, view, []);
}

/** Blob and File, with the constructors the realm's own code uses, created on first need. */
export const blobClasses = once(function () {
  /** @type {WeakMap<object, BlobState>} */
  const states = new CtxWeakMap();
  /** Only this closure may construct a Blob or File without arguments to read. */
  const MAKING = ObjectCreate(null);

  /** @param {unknown} blob */
  function blobState(blob) {
    return stateOf(states, blob, 'a Blob');
  }

  /**
   * A promise of what `read` gives from the Blob's state: a receiver that is
   * no Blob rejects it (WebIDL: a promise-returning operation never throws).
   * @template T
   * @param {unknown} blob
   * @param {(state: BlobState) => T} read
   * @returns {Promise<T>}
   */
  function settled(blob, read) {
    return new CtxPromise(function (resolve) {
      resolve(read(blobState(blob)));
    });
  }

  /** @param {unknown} file */
  function fileFields(file) {
    const fields = stateOf(states, file, 'a File').file;
    if (fields === null) throw new CtxTypeError('Illegal invocation: not a File');
    return fields;
  }

  /**
   * The parts of a `sequence<BlobPart>`, converted while iterated as WebIDL
   * does: a Blob's bytes, a BufferSource's view (its bytes are copied once,
   * after the whole sequence was read, as the File API says), or a USVString.
   * @param {unknown} given
   * @param {string} where
   * @returns {(Uint8Array | string)[]}
   */
  function partsOf(given, where) {
    if (given === undefined) return [];
    if (given === null || (typeof given !== 'object' && typeof given !== 'function')) {
      throw new CtxTypeError(where + ': the parts must be a sequence (an array or an iterable)');
    }
    const object = /** @type {any} */ (given);
    const iterate = object[SymbolIterator];
    if (typeof iterate !== 'function') {
      throw new CtxTypeError(where + ': the parts must be a sequence (an array or an iterable)');
    }
    /** @type {(Uint8Array | string)[]} */
    const parts = [];
    const iterable = /** @type {Iterable<unknown>} */ (
      /** @type {unknown} */ ({ [SymbolIterator]: () => ReflectApply(iterate, object, []) })
    );
    for (const part of iterable) {
      const blob = blobStateOf(part);
      if (blob !== null) {
        append(parts, blob.bytes);
        continue;
      }
      const view = bytes.viewOf(part);
      append(parts, view !== null ? view : toUsvString(domString(part)));
    }
    return parts;
  }

  /**
   * The bytes of the parts, joined into one new Uint8Array (a lone Blob's
   * or string's bytes are taken as they are: nothing writes them).
   * @param {(Uint8Array | string)[]} parts
   * @param {boolean} native whether strings get native line endings
   */
  function joinParts(parts, native) {
    /** @type {Uint8Array[]} */
    const chunks = [];
    let fresh = false;
    for (let i = 0; i < parts.length; i++) {
      const part = /** @type {Uint8Array | string} */ (parts[i]);
      let chunk;
      if (typeof part === 'string') {
        chunk = utf8Encode(native ? nativeLineEndings(part) : part);
        fresh = true;
      } else {
        chunk = part;
        // A BufferSource's bytes must be copied; a Blob's are never written.
        fresh = blobBytesOwner(part);
      }
      append(chunks, chunk);
    }
    if (chunks.length === 1 && fresh) return /** @type {Uint8Array} */ (chunks[0]);
    return bytes.concat(chunks);
  }

  /** Views that are some Blob's bytes (so never written), as opposed to a tool's BufferSource. */
  /** @type {WeakMap<object, true>} */
  const blobBytes = new CtxWeakMap();
  /** @param {Uint8Array} view */
  function blobBytesOwner(view) {
    return ReflectApply(weakMapGet, blobBytes, [view]) === true;
  }

  /**
   * Records `state` as the state of `blob`.
   * @param {object} blob
   * @param {Uint8Array} data never written again
   * @param {string} type already normalised
   * @param {FileFields | null} file
   */
  function adopt(blob, data, type, file) {
    remember(blobBytes, data, true);
    remember(states, blob, { bytes: data, size: lengthOf(data), type: type, file: file });
    return blob;
  }

  /**
   * A BlobPropertyBag (and FilePropertyBag's lastModified), members read in
   * WebIDL's order: endings, type, then lastModified.
   * @param {unknown} options
   * @param {string} where
   * @param {boolean} file
   */
  function bagOf(options, where, file) {
    dictionary(options, where);
    const endingsGiven = member(options, 'endings');
    let native = false;
    if (endingsGiven !== undefined) {
      const endings = domString(endingsGiven);
      if (endings !== 'transparent' && endings !== 'native') {
        throw new CtxTypeError(
          where + ": endings must be 'transparent' or 'native', not '" + endings + "'",
        );
      }
      native = endings === 'native';
    }
    const typeGiven = member(options, 'type');
    const type = typeGiven === undefined ? '' : blobType(domString(typeGiven));
    let lastModified = 0;
    if (file) {
      const given = member(options, 'lastModified');
      lastModified = given === undefined ? DateNow() : longLong(given);
    }
    return { native: native, type: type, lastModified: lastModified };
  }

  class Blob {
    /**
     * @param {unknown} [blobParts] strings, ArrayBuffers, views and Blobs
     * @param {unknown} [options] {type, endings}
     */
    constructor(blobParts, options) {
      if (blobParts === MAKING) return;
      const parts = partsOf(blobParts, 'Blob');
      const bag = bagOf(options, 'Blob', false);
      adopt(this, joinParts(parts, bag.native), bag.type, null);
    }

    get size() {
      return blobState(this).size;
    }

    get type() {
      return blobState(this).type;
    }

    /**
     * A Blob of the bytes from `start` to `end` (negative counts from the end), sharing them.
     * @param {unknown} [start]
     * @param {unknown} [end]
     * @param {unknown} [contentType]
     */
    slice(start, end, contentType) {
      const state = blobState(this);
      const from = start === undefined ? 0 : clampLongLong(start);
      const to = end === undefined ? state.size : clampLongLong(end);
      const type = contentType === undefined ? '' : blobType(domString(contentType));
      const first = relativePosition(from, state.size);
      const last = relativePosition(to, state.size);
      const span = last > first ? last - first : 0;
      return adopt(new Blob(MAKING), viewBetween(state.bytes, first, first + span), type, null);
    }

    /** The bytes decoded as UTF-8 (a byte order mark dropped, invalid bytes as U+FFFD). */
    text() {
      return settled(this, function (state) {
        return utf8DecodeAll(state.bytes, false);
      });
    }

    /** A copy of the bytes. */
    arrayBuffer() {
      return settled(this, function (state) {
        return bytes.sliceBuffer(state.bytes);
      });
    }

    /** A copy of the bytes as a Uint8Array. */
    bytes() {
      return settled(this, function (state) {
        return new CtxUint8Array(state.bytes);
      });
    }

    /** A ReadableStream (a byte stream) of the bytes, read in chunks when a reader asks. */
    stream() {
      const data = blobState(this).bytes;
      return byteStream(function () {
        return data;
      });
    }
  }
  // Both arguments are optional: the interface's length is 0.
  ObjectDefineProperty(Blob, 'length', { value: 0, configurable: true });
  ObjectDefineProperty(Blob.prototype, SymbolToStringTag, { value: 'Blob', configurable: true });

  class File extends Blob {
    /**
     * @param {unknown} fileBits strings, ArrayBuffers, views and Blobs
     * @param {unknown} fileName
     * @param {unknown} [options] {type, endings, lastModified}
     */
    constructor(fileBits, fileName, options) {
      if (fileBits === MAKING) {
        super(MAKING);
        return;
      }
      if (arguments.length < 2) {
        throw new CtxTypeError("File: the 'fileBits' and 'fileName' arguments are required");
      }
      const parts = partsOf(fileBits, 'File');
      const name = toUsvString(domString(fileName));
      const bag = bagOf(options, 'File', true);
      super(MAKING);
      adopt(this, joinParts(parts, bag.native), bag.type, {
        name: name,
        lastModified: bag.lastModified,
      });
    }

    get name() {
      return fileFields(this).name;
    }

    get lastModified() {
      return fileFields(this).lastModified;
    }
  }
  // fileBits and fileName are required, options is not.
  ObjectDefineProperty(File, 'length', { value: 2, configurable: true });
  ObjectDefineProperty(File.prototype, SymbolToStringTag, { value: 'File', configurable: true });

  /**
   * A Blob of the realm's own making.
   * @param {Uint8Array} data fresh bytes nothing else writes
   * @param {string} type kept as a Blob keeps a type
   */
  function makeBlob(data, type) {
    return adopt(new Blob(MAKING), data, blobType(type), null);
  }

  /**
   * A File of the realm's own making.
   * @param {Uint8Array} data fresh bytes or a Blob's (nothing writes either)
   * @param {string} type kept as a Blob keeps a type
   * @param {string} name a USVString
   * @param {number} lastModified
   */
  function makeFile(data, type, name, lastModified) {
    return adopt(new File(MAKING, ''), data, blobType(type), {
      name: name,
      lastModified: lastModified,
    });
  }

  blobStates = states;
  platformClasses(Blob, File);
  return { Blob: Blob, File: File, makeBlob: makeBlob, makeFile: makeFile };
});
