// @ts-check
/**
 * fetch and Response for tool code. A fetch is one brokered `http` call, the
 * same one sdk.http makes (egress policy, time, size and redirect limits are
 * the broker's), asking for the response body as base64 so arrayBuffer()
 * gets the exact bytes; text() has the host decode them. Bodies are whole
 * values, never streams. `init` is read once, field by field, before
 * anything else happens, so a getter that changes its answer sees no second
 * read; a Response is a class of this realm with no `then`.
 */
import {
  CtxPromise,
  CtxRangeError,
  CtxTypeError,
  CtxWeakMap,
  JSONParse,
  JSONStringify,
  ObjectCreate,
  ObjectDefineProperty,
  ReflectApply,
  StringCtor,
  SymbolToStringTag,
  hasOwn,
  promiseThen,
  regexpExec,
  toUpperCase,
  weakMapSet,
} from '../primordials.js';
import { webCall } from '../bridge.js';
import { adoptCallFailure, callHost } from '../calls.js';
import { once, platformClasses, stateOf } from '../webidl.js';
import * as events from './abort.js';
import * as bytes from './bytes.js';
import { webHeaders as headersParts } from './headers.js';
import { textDecoderClass } from './text-decoder.js';
import { urlSearchParamsText } from './url.js';
import { utf8Encode } from './utf8.js';

/**
 * @typedef {{ kind: 'base64' | 'text', data: string } | { kind: 'bytes', data: Uint8Array }} BodySource
 * @typedef {{
 *   status: number, statusText: string, headers: any, url: string,
 *   redirected: boolean, type: string, body: BodySource | null, used: boolean,
 * }} ResponseState
 */

/** fetch and Response, created on first need. */
export const webFetch = once(function () {
  const webHeaders = headersParts();
  const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
  const REASON_PHRASE = /^[\t\u0020-\u007e\u0080-\u00ff]*$/;
  const NORMALISED_METHODS = {
    DELETE: true,
    GET: true,
    HEAD: true,
    OPTIONS: true,
    POST: true,
    PUT: true,
  };
  const FORBIDDEN_METHODS = { CONNECT: true, TRACE: true, TRACK: true };
  const NULL_BODY_STATUSES = { 101: true, 103: true, 204: true, 205: true, 304: true };
  const TEXT_TYPE = 'text/plain;charset=UTF-8';
  const FORM_TYPE = 'application/x-www-form-urlencoded;charset=UTF-8';

  /**
   * @param {object} object
   * @param {string} key
   */
  function own(object, key) {
    return ReflectApply(hasOwn, object, [key]) ? /** @type {any} */ (object)[key] : undefined;
  }

  /**
   * A body given to fetch or to new Response, with the content-type it implies.
   * @param {unknown} body
   * @param {string} where
   * @returns {{ source: BodySource, type: string | null }}
   */
  function bodyOf(body, where) {
    if (typeof body === 'string') return { source: { kind: 'text', data: body }, type: TEXT_TYPE };
    const view = bytes.copyOf(body);
    if (view !== null) return { source: { kind: 'bytes', data: view }, type: null };
    const form = urlSearchParamsText(body);
    if (form !== null) return { source: { kind: 'text', data: form }, type: FORM_TYPE };
    throw new CtxTypeError(
      where +
        ': the body must be a string, URLSearchParams, an ArrayBuffer, a typed array or a DataView' +
        ' (Blob, FormData and streams are not available in tool code; for an object, JSON.stringify it)',
    );
  }

  // ---------------------------------------------------------------- Response
  /** Only this closure may give a Response its state from outside the constructor. */
  const FROM_FETCH = ObjectCreate(null);
  /** @type {WeakMap<object, ResponseState>} */
  const responses = new CtxWeakMap();

  /** @param {unknown} response */
  function responseState(response) {
    return stateOf(responses, response, 'a Response');
  }

  /**
   * Takes the body once: later reads reject, as a consumed stream's would.
   * @param {unknown} response
   * @returns {Promise<BodySource | null>}
   */
  function consume(response) {
    return new CtxPromise(function (resolve) {
      const state = responseState(response);
      if (state.used) throw new CtxTypeError('Body is unusable: the body has already been read');
      if (state.body !== null) state.used = true;
      resolve(state.body);
    });
  }

  /**
   * @param {Promise<BodySource | null>} promise
   * @param {(body: BodySource | null) => unknown} read
   */
  function reading(promise, read) {
    return ReflectApply(promiseThen, promise, [read]);
  }

  /** @param {BodySource | null} body */
  function textOf(body) {
    if (body === null) return '';
    if (body.kind === 'text') return body.data;
    if (body.kind === 'bytes') return new (textDecoderClass())().decode(body.data);
    if (body.data.length === 0) return '';
    const text = webCall('decodeBase64', body.data);
    if (typeof text !== 'string') throw new CtxRangeError('the body is too large to decode');
    return text;
  }

  /** @param {BodySource | null} body */
  function bytesOf(body) {
    if (body === null) return bytes.fromBinary('');
    if (body.kind === 'text') return utf8Encode(body.data);
    if (body.kind === 'bytes') return bytes.copyOf(body.data) ?? bytes.fromBinary('');
    if (body.data.length === 0) return bytes.fromBinary('');
    const binary = webCall('fromBase64', body.data);
    if (typeof binary !== 'string') throw new CtxRangeError('the body is too large to read');
    return bytes.fromBinary(binary);
  }

  class Response {
    /**
     * @param {unknown} [body] a string, URLSearchParams, BufferSource, or null
     * @param {unknown} [init] {status, statusText, headers}
     */
    constructor(body, init) {
      if (body === FROM_FETCH) {
        // State comes from responseFrom(); nothing of the tool's is read.
        return;
      }
      if (init !== undefined && init !== null && typeof init !== 'object') {
        throw new CtxTypeError('Response: init must be an object');
      }
      const given = /** @type {any} */ (init);
      const statusGiven = given === undefined || given === null ? undefined : given.status;
      const statusTextGiven = given === undefined || given === null ? undefined : given.statusText;
      const headersGiven = given === undefined || given === null ? undefined : given.headers;
      const status = statusGiven === undefined ? 200 : +statusGiven;
      if (!(status >= 200 && status <= 599) || status !== (status | 0)) {
        throw new CtxRangeError('Response: status must be an integer from 200 to 599');
      }
      const statusText = statusTextGiven === undefined ? '' : StringCtor(statusTextGiven);
      if (ReflectApply(regexpExec, REASON_PHRASE, [statusText]) === null) {
        throw new CtxTypeError('Response: statusText is not a valid reason phrase');
      }
      const headers = webHeaders.headersFrom(headersGiven);
      /** @type {BodySource | null} */
      let source = null;
      if (body !== undefined && body !== null) {
        if (NULL_BODY_STATUSES[/** @type {keyof typeof NULL_BODY_STATUSES} */ (status)] === true) {
          throw new CtxTypeError('Response: a ' + status + ' response cannot have a body');
        }
        const made = bodyOf(body, 'Response');
        source = made.source;
        if (made.type !== null) webHeaders.setDefaultHeader(headers, 'content-type', made.type);
      }
      ReflectApply(weakMapSet, responses, [
        this,
        {
          status: status,
          statusText: statusText,
          headers: headers,
          url: '',
          redirected: false,
          type: 'default',
          body: source,
          used: false,
        },
      ]);
    }

    /**
     * A response whose body is `data` as JSON.
     * @param {unknown} data
     * @param {unknown} [init]
     */
    static json(data, init) {
      const text = JSONStringify(data);
      if (typeof text !== 'string')
        throw new CtxTypeError('Response.json: the data cannot be serialised to JSON');
      const response = new Response(null, init);
      const state = responseState(response);
      if (
        NULL_BODY_STATUSES[/** @type {keyof typeof NULL_BODY_STATUSES} */ (state.status)] === true
      ) {
        throw new CtxTypeError('Response.json: a ' + state.status + ' response cannot have a body');
      }
      state.body = { kind: 'text', data: text };
      webHeaders.setDefaultHeader(state.headers, 'content-type', 'application/json');
      return response;
    }

    /** A network error, as fetch would reject with (type 'error', status 0). */
    static error() {
      const response = new Response(FROM_FETCH);
      ReflectApply(weakMapSet, responses, [
        response,
        {
          status: 0,
          statusText: '',
          headers: webHeaders.readOnlyHeaders({}),
          url: '',
          redirected: false,
          type: 'error',
          body: null,
          used: false,
        },
      ]);
      return response;
    }

    get type() {
      return responseState(this).type;
    }
    get url() {
      return responseState(this).url;
    }
    get redirected() {
      return responseState(this).redirected;
    }
    get status() {
      return responseState(this).status;
    }
    get ok() {
      const status = responseState(this).status;
      return status >= 200 && status <= 299;
    }
    get statusText() {
      return responseState(this).statusText;
    }
    get headers() {
      return responseState(this).headers;
    }
    get bodyUsed() {
      return responseState(this).used;
    }

    /** The body decoded as UTF-8 (a byte order mark dropped, invalid bytes as U+FFFD). */
    text() {
      return reading(consume(this), textOf);
    }

    /** The body parsed as JSON. */
    json() {
      return reading(consume(this), function (body) {
        return JSONParse(textOf(body));
      });
    }

    /** The body's bytes. */
    arrayBuffer() {
      return reading(consume(this), function (body) {
        return bytes.bufferOf(bytesOf(body));
      });
    }

    /** The body's bytes as a Uint8Array. */
    bytes() {
      return reading(consume(this), bytesOf);
    }

    /** A second Response with the same status, headers and body; the body must be unread. */
    clone() {
      const state = responseState(this);
      if (state.used) throw new CtxTypeError('Response.clone: the body has already been read');
      const copy = new Response(FROM_FETCH);
      ReflectApply(weakMapSet, responses, [
        copy,
        {
          status: state.status,
          statusText: state.statusText,
          headers: webHeaders.copyHeaders(state.headers, state.type !== 'default'),
          url: state.url,
          redirected: state.redirected,
          type: state.type,
          body: state.body,
          used: false,
        },
      ]);
      return copy;
    }
  }
  ObjectDefineProperty(Response.prototype, SymbolToStringTag, {
    value: 'Response',
    configurable: true,
  });

  /**
   * The Response for what the broker answered to a fetch of `url`.
   * @param {any} value {status, headers, body (base64), url?, redirected?}
   * @param {string} url what was asked for
   */
  function responseFrom(value, url) {
    const response = new Response(FROM_FETCH);
    const status = own(value, 'status');
    const headers = own(value, 'headers');
    const body = own(value, 'body');
    const finalUrl = own(value, 'url');
    const statusText = own(value, 'statusText');
    ReflectApply(weakMapSet, responses, [
      response,
      {
        status: typeof status === 'number' ? status : 0,
        statusText: typeof statusText === 'string' ? statusText : '',
        headers: webHeaders.readOnlyHeaders(
          headers !== null && typeof headers === 'object' ? headers : {},
        ),
        url: typeof finalUrl === 'string' ? finalUrl : url,
        redirected: own(value, 'redirected') === true,
        type: 'basic',
        body: { kind: 'base64', data: typeof body === 'string' ? body : '' },
        used: false,
      },
    ]);
    return response;
  }

  // ---------------------------------------------------------------- fetch
  /**
   * @param {unknown} method
   */
  function methodOf(method) {
    if (method === undefined) return 'GET';
    const text = StringCtor(method);
    if (ReflectApply(regexpExec, TOKEN, [text]) === null) {
      throw new CtxTypeError("fetch: '" + text + "' is not a valid HTTP method");
    }
    const upper = toUpperCase(text);
    if (FORBIDDEN_METHODS[/** @type {keyof typeof FORBIDDEN_METHODS} */ (upper)] === true) {
      throw new CtxTypeError("fetch: the method '" + text + "' is forbidden");
    }
    return NORMALISED_METHODS[/** @type {keyof typeof NORMALISED_METHODS} */ (upper)] === true
      ? upper
      : text;
  }

  /**
   * Reads the request once: every field of `init` is read exactly once, here.
   * @param {unknown} input a URL string or anything whose string is one (a URL object)
   * @param {unknown} init
   */
  function requestOf(input, init) {
    const url = StringCtor(input);
    if (
      init !== undefined &&
      init !== null &&
      typeof init !== 'object' &&
      typeof init !== 'function'
    ) {
      throw new CtxTypeError('fetch: init must be an object');
    }
    const options = /** @type {any} */ (init === undefined || init === null ? {} : init);
    const methodGiven = options.method;
    const headersGiven = options.headers;
    const bodyGiven = options.body;
    const signalGiven = options.signal;
    const redirectGiven = options.redirect;
    const method = methodOf(methodGiven);
    if (redirectGiven !== undefined && StringCtor(redirectGiven) !== 'follow') {
      throw new CtxTypeError(
        "fetch: redirect '" +
          StringCtor(redirectGiven) +
          "' is not available in tool code; redirects are followed by the broker",
      );
    }
    if (signalGiven !== undefined && signalGiven !== null && !events.isAbortSignal(signalGiven)) {
      throw new CtxTypeError("fetch: the 'signal' option must be an AbortSignal");
    }
    const headers = webHeaders.headersFrom(headersGiven);
    /** @type {Record<string, unknown>} */
    const args = { method: method, url: url, responseEncoding: 'base64' };
    if (bodyGiven !== undefined && bodyGiven !== null) {
      if (method === 'GET' || method === 'HEAD') {
        throw new CtxTypeError('fetch: a ' + method + ' request cannot have a body');
      }
      const made = bodyOf(bodyGiven, 'fetch');
      if (made.type !== null) webHeaders.setDefaultHeader(headers, 'content-type', made.type);
      if (made.source.kind === 'bytes') {
        const encoded =
          made.source.data.length === 0
            ? ''
            : webCall('toBase64', bytes.toBinary(made.source.data));
        if (typeof encoded !== 'string') throw new CtxTypeError('fetch: the body is too large');
        args.body = encoded;
        args.bodyEncoding = 'base64';
      } else {
        args.body = made.source.data;
      }
    }
    args.headers = webHeaders.headerRecord(headers);
    return {
      url: url,
      args: args,
      signal:
        signalGiven === undefined || signalGiven === null
          ? null
          : /** @type {AbortSignal} */ (signalGiven),
    };
  }

  /**
   * What a failed brokered call becomes: a TypeError, as the web's network
   * errors are, carrying the broker's code and message (and the original as
   * its cause); uncaught, it fails the invocation with that code, as the
   * original would. An invocation that ended keeps its ERR_CANCELLED.
   * @param {any} error
   */
  function networkError(error) {
    const code = error !== null && typeof error === 'object' ? own(error, 'code') : undefined;
    if (code === 'ERR_CANCELLED') return error;
    const message = error !== null && typeof error === 'object' ? own(error, 'message') : undefined;
    const failure = new CtxTypeError(
      'fetch failed: ' + (typeof message === 'string' ? message : 'no response'),
    );
    if (typeof code === 'string') {
      ObjectDefineProperty(failure, 'code', {
        value: code,
        writable: true,
        enumerable: true,
        configurable: true,
      });
    }
    ObjectDefineProperty(failure, 'cause', { value: error, writable: true, configurable: true });
    adoptCallFailure(failure, error);
    return failure;
  }

  /**
   * @param {unknown} input
   * @param {unknown} [init] {method, headers, body, signal, redirect: 'follow'}
   * @returns {Promise<Response>}
   */
  function fetch(input, init) {
    const argumentCount = arguments.length;
    return new CtxPromise(function (resolve, reject) {
      if (argumentCount === 0) {
        throw new CtxTypeError("fetch: the 'input' argument is required");
      }
      const request = requestOf(input, init);
      const signal = request.signal;
      if (signal !== null && events.isAborted(signal)) {
        reject(events.abortReason(signal));
        return;
      }
      let settled = false;
      /** @type {(() => void) | null} */
      let forget = null;
      if (signal !== null) {
        forget = events.onAbort(signal, function () {
          if (settled) return;
          settled = true;
          reject(events.abortReason(signal));
        });
      }
      ReflectApply(promiseThen, callHost('http', request.args), [
        function (/** @type {unknown} */ value) {
          if (settled) return;
          settled = true;
          if (forget !== null) forget();
          resolve(responseFrom(value, request.url));
        },
        function (/** @type {unknown} */ error) {
          if (settled) return;
          settled = true;
          if (forget !== null) forget();
          reject(networkError(error));
        },
      ]);
    });
  }

  platformClasses(Response);
  return { fetch: fetch, Response: Response };
});
