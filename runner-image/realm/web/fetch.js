// @ts-check
/**
 * fetch and Response for tool code. A fetch is one brokered `http` call, the
 * same one sdk.http makes (egress policy, time, size and redirect limits are
 * the broker's), asking for the response body as base64 so arrayBuffer()
 * gets the exact bytes; text() has the host decode them. Bodies are whole
 * values, never streams: a string, URLSearchParams, a BufferSource, a Blob
 * (its bytes, shared, never written) or a FormData (multipart/form-data,
 * multipart.js). `init` is read once, field by field, before
 * anything else happens, so a getter that changes its answer sees no second
 * read; a Response is a class of this realm with no `then`. fetch also
 * takes a Request (request.js, which reads (input, init) for both); the
 * body methods Request and Response share are body.js's.
 */
import {
  CtxPromise,
  CtxRangeError,
  CtxTypeError,
  CtxWeakMap,
  JSONStringify,
  ObjectCreate,
  ObjectDefineProperty,
  ReflectApply,
  StringCtor,
  SymbolToStringTag,
  hasOwn,
  promiseThen,
  regexpExec,
  weakMapSet,
} from '../primordials.js';
import { webCall } from '../bridge.js';
import { adoptCallFailure, callHost } from '../calls.js';
import { once, platformClasses, stateOf } from '../webidl.js';
import * as events from './abort.js';
import { bodyUnusable, defineBodyMembers, extractBody } from './body.js';
import * as bytes from './bytes.js';
import { webHeaders as headersParts } from './headers.js';
import { webRequest } from './request.js';

/**
 * @typedef {import('./body.js').BodySource} BodySource
 * @typedef {{
 *   status: number, statusText: string, headers: any, url: string,
 *   redirected: boolean, type: string, body: BodySource | null, used: boolean,
 * }} ResponseState
 */

/** fetch and Response, created on first need. */
export const webFetch = once(function () {
  const webHeaders = headersParts();
  const REASON_PHRASE = /^[\t\u0020-\u007e\u0080-\u00ff]*$/;
  const NULL_BODY_STATUSES = { 101: true, 103: true, 204: true, 205: true, 304: true };

  /**
   * @param {object} object
   * @param {string} key
   */
  function own(object, key) {
    return ReflectApply(hasOwn, object, [key]) ? /** @type {any} */ (object)[key] : undefined;
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
        const made = extractBody(body, 'Response');
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
    /** A second Response with the same status, headers and body; the body must be unread. */
    clone() {
      const state = responseState(this);
      if (bodyUnusable(state)) {
        throw new CtxTypeError(
          'Response.clone: the body has already been read or its stream is locked',
        );
      }
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
  defineBodyMembers(Response.prototype, responseState);
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
   * The brokered call for fetch(input, init): the request new Request(input,
   * init) would make (request.js reads init, once), except that a URL string
   * goes to the broker unparsed, for it to parse and refuse with its codes.
   * @param {unknown} input a URL string, anything whose string is one (a URL object), or a Request
   * @param {unknown} init
   */
  function requestOf(input, init) {
    const made = webRequest().describeRequest(input, init, 'fetch', false);
    const state = made.state;
    if (state.redirect !== 'follow') {
      throw new CtxTypeError(
        "fetch: redirect '" +
          state.redirect +
          "' is not available in tool code; redirects are followed by the broker",
      );
    }
    if (state.integrity !== '') {
      throw new CtxTypeError(
        'fetch: integrity metadata is not available in tool code; the broker does not check it',
      );
    }
    /** @type {Record<string, unknown>} */
    const args = { method: state.method, url: state.url, responseEncoding: 'base64' };
    const body = state.body;
    if (body !== null) {
      if (body.kind === 'bytes') {
        const binary = bytes.toBinary(body.data);
        const encoded = binary === '' ? '' : webCall('toBase64', binary);
        if (typeof encoded !== 'string') throw new CtxTypeError('fetch: the body is too large');
        args.body = encoded;
        args.bodyEncoding = 'base64';
      } else {
        args.body = body.data;
        if (body.kind === 'base64') args.bodyEncoding = 'base64';
      }
    }
    args.headers = webHeaders.headerRecord(state.headers);
    return { url: state.url, args: args, signal: made.follow };
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
   * @param {unknown} input a URL or a Request
   * @param {unknown} [init] {method, headers, body, signal, redirect: 'follow', …} as for new Request
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
