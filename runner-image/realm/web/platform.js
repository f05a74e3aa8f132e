// @ts-check
/**
 * The web platform of tool code (docs/tool-code.md, "The web platform"): URL, URLSearchParams,
 * TextEncoder, TextDecoder, atob, btoa, structuredClone, DOMException,
 * Event, CustomEvent, EventTarget, AbortController, AbortSignal, performance,
 * crypto, fetch, Headers, Request, Response, Blob, File, FormData and the
 * streams (ReadableStream, WritableStream, TransformStream, their readers,
 * writers and controllers, and the queuing strategies), all created in the
 * tool's realm.
 *
 * Each is installed lazily: the global is an accessor until first read, when
 * its group is created and the accessor becomes the ordinary data property
 * the web has. A context that never names them pays for a few accessors only
 * (contexts are made for every invocation). Reading one global of a group
 * creates the whole group; tool-context.ts reads one per group ahead when the
 * tool's code names any of them.
 */
import { ObjectDefineProperty } from '../primordials.js';
import { once } from '../webidl.js';
import { abortClasses } from './abort.js';
import { atob, btoa } from './base64.js';
import { blobClasses } from './blob.js';
import { webCrypto } from './crypto.js';
import { domExceptionClass } from './dom-exception.js';
import { eventClasses } from './event-target.js';
import { webFetch } from './fetch.js';
import { formDataClass } from './form-data.js';
import { webHeaders } from './headers.js';
import { webPerformance } from './performance.js';
import { webRequest } from './request.js';
import { streamClasses, takeStreamsFactory } from './streams.js';
import { structuredCloneFunction } from './structured-clone.js';
import { textDecoderClass } from './text-decoder.js';
import { textEncoderClass } from './text-encoder.js';
import { takeUrlFactory, urlClasses } from './url.js';

/** @typedef {() => Record<string, unknown>} Group */

/** @type {Group} */
const encoding = once(function () {
  return {
    TextEncoder: textEncoderClass(),
    TextDecoder: textDecoderClass(),
    atob: atob,
    btoa: btoa,
  };
});

/** @type {Group} */
const events = once(function () {
  const made = eventClasses();
  const abort = abortClasses();
  return {
    DOMException: domExceptionClass(),
    Event: made.Event,
    CustomEvent: made.CustomEvent,
    EventTarget: made.EventTarget,
    AbortController: abort.AbortController,
    AbortSignal: abort.AbortSignal,
  };
});

/** @type {Group} */
function fetchGroup() {
  const made = webFetch();
  return {
    fetch: made.fetch,
    Request: webRequest().Request,
    Response: made.Response,
    Headers: webHeaders().Headers,
  };
}

/** @type {Group} */
function filesGroup() {
  const made = blobClasses();
  return { Blob: made.Blob, File: made.File, FormData: formDataClass().FormData };
}

/**
 * Defines the web platform's globals on the context's global, each an
 * accessor until first read; takes the factories of URL and the streams out
 * of tool code's reach.
 * @param {Record<string, unknown>} G the context's global
 */
export function installWebPlatform(G) {
  takeUrlFactory(G);
  takeStreamsFactory(G);

  /**
   * @param {string} name
   * @param {unknown} value
   */
  function defineGlobal(name, value) {
    ObjectDefineProperty(G, name, {
      value: value,
      writable: true,
      enumerable: false,
      configurable: true,
    });
  }

  /**
   * Makes `name` an accessor that creates its value on first read (then a
   * data property, as on the web); assigning it first just replaces it.
   * @param {string} name
   * @param {() => unknown} resolve
   */
  function lazyGlobal(name, resolve) {
    ObjectDefineProperty(G, name, {
      enumerable: false,
      configurable: true,
      get: function () {
        const value = resolve();
        defineGlobal(name, value);
        return value;
      },
      set: function (value) {
        defineGlobal(name, value);
      },
    });
  }

  /**
   * @param {() => object} group
   * @param {string[]} names
   */
  function lazyGroup(group, names) {
    for (let i = 0; i < names.length; i++) {
      const name = /** @type {string} */ (names[i]);
      lazyGlobal(name, function () {
        return /** @type {Record<string, unknown>} */ (group())[name];
      });
    }
  }

  lazyGroup(encoding, ['TextEncoder', 'TextDecoder', 'atob', 'btoa']);
  lazyGroup(events, [
    'DOMException',
    'Event',
    'CustomEvent',
    'EventTarget',
    'AbortController',
    'AbortSignal',
  ]);
  lazyGlobal('structuredClone', structuredCloneFunction);
  lazyGroup(webCrypto, ['crypto', 'Crypto', 'SubtleCrypto', 'CryptoKey']);
  lazyGroup(webPerformance, ['performance', 'Performance']);
  lazyGroup(fetchGroup, ['fetch', 'Request', 'Response', 'Headers']);
  lazyGroup(filesGroup, ['Blob', 'File', 'FormData']);
  lazyGroup(urlClasses, ['URL', 'URLSearchParams']);
  lazyGroup(streamClasses, [
    'ReadableStream',
    'ReadableStreamDefaultReader',
    'ReadableStreamBYOBReader',
    'ReadableStreamBYOBRequest',
    'ReadableStreamDefaultController',
    'ReadableByteStreamController',
    'WritableStream',
    'WritableStreamDefaultWriter',
    'WritableStreamDefaultController',
    'TransformStream',
    'TransformStreamDefaultController',
    'ByteLengthQueuingStrategy',
    'CountQueuingStrategy',
  ]);
}
