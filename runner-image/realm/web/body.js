// @ts-check
/**
 * The Fetch standard's Body mixin (§5.3) for Request and Response: what a
 * body may be made from, the content-type it implies, and the methods that
 * read it once (text, json, arrayBuffer, bytes, blob, formData, bodyUsed).
 * A Blob body shares the Blob's bytes (never written); a FormData body is
 * encoded as multipart/form-data (multipart.js). `body` is a byte stream of
 * the same bytes (streams.js), made when first asked for. Bodies are whole
 * values underneath, so "disturbed" is one flag: reading the body, whole or
 * from its stream, sets it, and a second read, a clone or a new Request from
 * the used one is refused; a whole read locks a stream already handed out.
 */
import {
  CtxPromise,
  CtxWeakMap,
  CtxRangeError,
  CtxTypeError,
  JSONParse,
  ObjectDefineProperty,
  ObjectGetOwnPropertyDescriptor,
  ReflectApply,
  ReflectOwnKeys,
  promiseThen,
  weakMapGet,
} from '../primordials.js';
import { webCall } from '../bridge.js';
import { remember } from '../webidl.js';
import { blobClasses, blobStateOf } from './blob.js';
import * as bytes from './bytes.js';
import { formDataClass, formDataEntries } from './form-data.js';
import { webHeaders } from './headers.js';
import { extractMimeType, parameterOf, serializeMimeType } from './mime.js';
import {
  encodeMultipart,
  multipartBoundary,
  parseMultipart,
  parseUrlencoded,
} from './multipart.js';
import { byteStream, isLocked, lockForever } from './streams.js';
import { textDecoderClass } from './text-decoder.js';
import { urlSearchParamsText } from './url.js';
import { utf8Encode } from './utf8.js';

/**
 * A body's content: text of this realm, bytes, or base64 as the broker
 * answered a fetch (decoded only when read).
 * @typedef {{ kind: 'base64' | 'text', data: string } | { kind: 'bytes', data: Uint8Array }} BodySource
 * @typedef {{ body: BodySource | null, used: boolean, headers: any }} BodyHolder what a Request's or Response's state holds
 */

const TEXT_TYPE = 'text/plain;charset=UTF-8';
const FORM_TYPE = 'application/x-www-form-urlencoded;charset=UTF-8';

/**
 * A body given to fetch, new Request or new Response, with the content-type
 * it implies (Fetch's "extract a body"). An object that is none of these is
 * refused rather than sent as "[object Object]", as the web would.
 * @param {unknown} body
 * @param {string} where
 * @returns {{ source: BodySource, type: string | null }}
 */
export function extractBody(body, where) {
  if (typeof body === 'string') return { source: { kind: 'text', data: body }, type: TEXT_TYPE };
  const blob = blobStateOf(body);
  if (blob !== null) {
    return {
      source: { kind: 'bytes', data: blob.bytes },
      type: blob.type === '' ? null : blob.type,
    };
  }
  const view = bytes.copyOf(body);
  if (view !== null) return { source: { kind: 'bytes', data: view }, type: null };
  const entries = formDataEntries(body);
  if (entries !== null) {
    const boundary = multipartBoundary();
    return {
      source: { kind: 'bytes', data: encodeMultipart(entries, boundary) },
      type: 'multipart/form-data; boundary=' + boundary,
    };
  }
  const form = urlSearchParamsText(body);
  if (form !== null) return { source: { kind: 'text', data: form }, type: FORM_TYPE };
  throw new CtxTypeError(
    where +
      ': the body must be a string, URLSearchParams, an ArrayBuffer, a typed array, a DataView,' +
      ' a Blob or a FormData (streams are not taken as bodies; for an object, JSON.stringify it)',
  );
}

/**
 * The body decoded as UTF-8 (a byte order mark dropped, invalid bytes as U+FFFD).
 * @param {BodySource | null} body
 */
function textOf(body) {
  if (body === null) return '';
  if (body.kind === 'text') return body.data;
  if (body.kind === 'bytes') return new (textDecoderClass())().decode(body.data);
  if (body.data.length === 0) return '';
  const text = webCall('decodeBase64', body.data);
  if (typeof text !== 'string') throw new CtxRangeError('the body is too large to decode');
  return text;
}

/**
 * The body's bytes, in a new Uint8Array over a buffer of its own (a 'bytes'
 * body may be a Blob's, which nothing may write).
 * @param {BodySource | null} body
 */
function bytesOf(body) {
  if (body === null) return bytes.fromBinary('');
  if (body.kind === 'text') return utf8Encode(body.data);
  if (body.kind === 'bytes') return bytes.copyOf(body.data) ?? bytes.fromBinary('');
  if (body.data.length === 0) return bytes.fromBinary('');
  const binary = webCall('fromBase64', body.data);
  if (typeof binary !== 'string') throw new CtxRangeError('the body is too large to read');
  return bytes.fromBinary(binary);
}

/**
 * The stream each body handed out as `body`, by its holder (one Request's
 * or Response's state).
 * @type {WeakMap<object, object>}
 */
const bodyStreams = new CtxWeakMap();

/**
 * The holder's stream, if its `body` was asked for.
 * @param {BodyHolder} holder
 * @returns {object | undefined}
 */
function streamOf(holder) {
  return ReflectApply(weakMapGet, bodyStreams, [holder]);
}

/**
 * Fetch's "unusable": the body was read, or its stream is locked to a reader.
 * @param {BodyHolder} holder
 */
export function bodyUnusable(holder) {
  if (holder.used) return true;
  const stream = streamOf(holder);
  return stream !== undefined && isLocked(stream);
}

/**
 * Takes a usable body whole (a read, a new Request made from this one): it
 * is used from now on, and its stream, if one was handed out, stays locked.
 * @param {BodyHolder} holder
 */
export function takeBody(holder) {
  const stream = streamOf(holder);
  if (stream !== undefined) lockForever(stream);
  if (holder.body !== null) holder.used = true;
}

/**
 * Gives `prototype` the Body mixin's members, reading the body through
 * `holderOf` (the class's brand check: a Response's methods refuse a
 * Request). They are defined as class members are: not enumerable.
 * @param {object} prototype
 * @param {(object: unknown) => BodyHolder} holderOf
 */
export function defineBodyMembers(prototype, holderOf) {
  // Taken before tool code can reach Headers (this group creates it).
  const headersGet = webHeaders().Headers.prototype.get;

  /**
   * The MIME type of the object's Content-Type header, or null.
   * @param {unknown} object
   */
  function mimeTypeOf(object) {
    return extractMimeType(ReflectApply(headersGet, holderOf(object).headers, ['content-type']));
  }

  /**
   * Takes the body once: later reads reject, as a consumed stream's would;
   * a null body is never used up.
   * @param {unknown} object
   * @param {(body: BodySource | null, object: unknown) => unknown} read
   */
  function consume(object, read) {
    /** @type {BodySource | null} */
    let body = null;
    const taken = new CtxPromise(function (resolve) {
      const holder = holderOf(object);
      if (bodyUnusable(holder)) {
        throw new CtxTypeError(
          'Body is unusable: the body has already been read or its stream is locked',
        );
      }
      body = holder.body;
      takeBody(holder);
      // Resolved with nothing: resolving with the body would hand its state (a
      // Blob's own bytes) to a `then` getter tool code put on Object.prototype.
      resolve(undefined);
    });
    return ReflectApply(promiseThen, taken, [
      function () {
        return read(body, object);
      },
    ]);
  }

  const members = {
    get bodyUsed() {
      return holderOf(this).used;
    },

    /** The body as a ReadableStream of bytes (the same one each time), or null when there is none. */
    get body() {
      const holder = holderOf(this);
      if (holder.body === null) return null;
      let stream = streamOf(holder);
      if (stream === undefined) {
        stream = byteStream(function () {
          holder.used = true;
          return bytesOf(holder.body);
        });
        remember(bodyStreams, holder, stream);
      }
      return stream;
    },

    /** The body decoded as UTF-8 (a byte order mark dropped, invalid bytes as U+FFFD). */
    text() {
      return consume(this, textOf);
    },

    /** The body parsed as JSON. */
    json() {
      return consume(this, function (body) {
        return JSONParse(textOf(body));
      });
    },

    /** The body's bytes. */
    arrayBuffer() {
      return consume(this, function (body) {
        return bytes.bufferOf(bytesOf(body));
      });
    },

    /** The body's bytes as a Uint8Array. */
    bytes() {
      return consume(this, bytesOf);
    },

    /** The body as a Blob typed by the Content-Type header. */
    blob() {
      return consume(this, function (body, object) {
        const mime = mimeTypeOf(object);
        return blobClasses().makeBlob(bytesOf(body), mime === null ? '' : serializeMimeType(mime));
      });
    },

    /**
     * The body as a FormData: multipart/form-data (by its boundary) or
     * application/x-www-form-urlencoded, by the Content-Type header.
     */
    formData() {
      return consume(this, function (body, object) {
        const mime = mimeTypeOf(object);
        const made = formDataClass();
        if (mime !== null && mime.type === 'multipart' && mime.subtype === 'form-data') {
          const boundary = parameterOf(mime, 'boundary');
          const entries = boundary === undefined ? null : parseMultipart(bytesOf(body), boundary);
          if (entries === null) {
            throw new CtxTypeError('formData: the body is not valid multipart/form-data');
          }
          return made.formDataFrom(entries);
        }
        if (
          mime !== null &&
          mime.type === 'application' &&
          mime.subtype === 'x-www-form-urlencoded'
        ) {
          return made.formDataFrom(parseUrlencoded(bytesOf(body)));
        }
        throw new CtxTypeError(
          'formData: the Content-Type is neither multipart/form-data nor' +
            ' application/x-www-form-urlencoded',
        );
      });
    },
  };
  const keys = ReflectOwnKeys(members);
  for (let i = 0; i < keys.length; i++) {
    const key = /** @type {string} */ (keys[i]);
    const descriptor = /** @type {PropertyDescriptor} */ (
      ObjectGetOwnPropertyDescriptor(members, key)
    );
    descriptor.enumerable = false;
    ObjectDefineProperty(prototype, key, descriptor);
  }
}
