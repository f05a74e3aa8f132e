// @ts-check
/**
 * The Fetch standard's Request (§5.4) for tool code, and the reading of
 * (input, init) that fetch shares with it: fetch(input, init) is the request
 * `new Request(input, init)` would make, sent. `init` is read as a
 * RequestInit: every member once, converted as read, before anything else
 * happens, so a getter that changes its answer sees no second read.
 *
 * What a tool realm has not, and how Request stands in for it:
 * - no base URL (no document, no location): a relative URL, as input or as
 *   referrer, is a TypeError, as in Node;
 * - no origin: a referrer URL is kept as given (the standard would make a
 *   cross-origin one 'about:client'; Node keeps it too);
 * - no CORS and no forbidden headers: the broker makes the request from the
 *   server side, so a Request's headers (guard 'request') take any valid
 *   header, as Node's do, and mode, credentials, cache, referrer,
 *   referrerPolicy, keepalive and priority are attributes only.
 */
import {
  CtxTypeError,
  CtxWeakMap,
  ObjectCreate,
  ObjectDefineProperty,
  ReflectApply,
  StringCtor,
  SymbolToStringTag,
  regexpExec,
  toUpperCase,
  weakMapGet,
} from '../primordials.js';
import { dictionary, once, platformClasses, remember, stateOf } from '../webidl.js';
import * as events from './abort.js';
import { bodyUnusable, defineBodyMembers, extractBody, takeBody } from './body.js';
import { webHeaders as headersParts } from './headers.js';
import { urlClasses } from './url.js';

/**
 * @typedef {import('./body.js').BodySource} BodySource
 * @typedef {{
 *   url: string, method: string, headers: any, body: BodySource | null, used: boolean,
 *   mode: string, credentials: string, cache: string, redirect: string,
 *   referrer: string, referrerPolicy: string, integrity: string, keepalive: boolean,
 *   reloadNavigation: boolean, historyNavigation: boolean, priority: string,
 *   signal: object | null,
 * }} RequestState `referrer` as the attribute gives it ('about:client', '' or a URL);
 *   `signal` is the Request's own AbortSignal (null only while being made)
 * @typedef {{ state: RequestState, follow: object | null }} RequestDescription
 *   a request, and the AbortSignal it follows (the caller's, not one of its own)
 */

/** Request, and what fetch needs of it, created on first need. */
export const webRequest = once(function () {
  const webHeaders = headersParts();
  const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
  const NORMALISED_METHODS = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT'];
  const FORBIDDEN_METHODS = ['CONNECT', 'TRACE', 'TRACK'];
  const CORS_SAFELISTED_METHODS = ['GET', 'HEAD', 'POST'];
  // The WebIDL enumerations of RequestInit.
  const CACHE_MODES = [
    'default',
    'no-store',
    'reload',
    'no-cache',
    'force-cache',
    'only-if-cached',
  ];
  const CREDENTIALS_MODES = ['omit', 'same-origin', 'include'];
  const DUPLEX_MODES = ['half'];
  const MODES = ['navigate', 'same-origin', 'no-cors', 'cors'];
  const PRIORITIES = ['high', 'low', 'auto'];
  const REDIRECT_MODES = ['follow', 'error', 'manual'];
  const REFERRER_POLICIES = [
    '',
    'no-referrer',
    'no-referrer-when-downgrade',
    'same-origin',
    'origin',
    'strict-origin',
    'origin-when-cross-origin',
    'strict-origin-when-cross-origin',
    'unsafe-url',
  ];
  const CLIENT_REFERRER = 'about:client';

  /** Only this closure may give a Request its state from outside the constructor (clone). */
  const CLONING = ObjectCreate(null);
  /** @type {WeakMap<object, RequestState>} */
  const requests = new CtxWeakMap();

  /** @param {unknown} request */
  function requestState(request) {
    return stateOf(requests, request, 'a Request');
  }

  /**
   * @param {string[]} list
   * @param {string} value
   */
  function listed(list, value) {
    for (let i = 0; i < list.length; i++) if (list[i] === value) return true;
    return false;
  }

  /**
   * WebIDL's DOMString (a Symbol is a TypeError, where String() would name it).
   * @param {unknown} value
   * @param {string} what
   */
  function stringOf(value, what) {
    if (typeof value === 'symbol') throw new CtxTypeError(what + ' cannot be a Symbol');
    return StringCtor(value);
  }

  /**
   * A member of an enumeration, or undefined when absent.
   * @param {unknown} value
   * @param {string[]} allowed
   * @param {string} what e.g. "Request: 'mode'"
   */
  function enumMember(value, allowed, what) {
    if (value === undefined) return undefined;
    const text = stringOf(value, what);
    if (!listed(allowed, text)) {
      throw new CtxTypeError(what + " cannot be '" + text + "'");
    }
    return text;
  }

  /**
   * The serialisation of an absolute URL. There is no base URL in a tool
   * realm (no document, no location), so a relative one is refused.
   * @param {string} text
   * @param {string} what
   */
  function absoluteUrl(text, what) {
    const classes = urlClasses();
    /** @type {unknown} */
    let url;
    try {
      url = new /** @type {any} */ (classes.URL)(text);
    } catch {
      throw new CtxTypeError(
        what +
          " '" +
          text +
          "' is not an absolute URL (tool code has no base URL to resolve a relative one against)",
      );
    }
    return {
      href: /** @type {string} */ (ReflectApply(classes.urlHref, url, [])),
      credentials:
        ReflectApply(classes.urlUsername, url, []) !== '' ||
        ReflectApply(classes.urlPassword, url, []) !== '',
    };
  }

  /**
   * A method given in init: a token; CONNECT, TRACE and TRACK refused; the
   * six the standard names upper-cased, any other kept as written.
   * @param {unknown} method
   * @param {string} where
   */
  function methodOf(method, where) {
    const text = stringOf(method, where + ': the method');
    if (ReflectApply(regexpExec, TOKEN, [text]) === null) {
      throw new CtxTypeError(where + ": '" + text + "' is not a valid HTTP method");
    }
    const upper = toUpperCase(text);
    if (listed(FORBIDDEN_METHODS, upper)) {
      throw new CtxTypeError(where + ": the method '" + text + "' is forbidden");
    }
    return listed(NORMALISED_METHODS, upper) ? upper : text;
  }

  /**
   * Reads a RequestInit: each member once, converted as it is read; an
   * absent member is undefined. The order is Node's (method, headers and
   * body first, as fetch has always read them), not WebIDL's lexicographic
   * one: a getter sees the same reads in either runtime.
   * @param {unknown} init
   * @param {string} where
   */
  function readInit(init, where) {
    const options = /** @type {any} */ (dictionary(init, where));
    const absent = options === undefined || options === null;
    /** @param {string} key */
    const read = (key) => (absent ? undefined : options[key]);
    /** @param {string} key */
    const what = (key) => where + ": '" + key + "'";
    const methodGiven = read('method');
    const method = methodGiven === undefined ? undefined : stringOf(methodGiven, what('method'));
    const headers = read('headers');
    const body = read('body');
    const referrerGiven = read('referrer');
    const referrer =
      referrerGiven === undefined ? undefined : stringOf(referrerGiven, what('referrer'));
    const referrerPolicy = enumMember(
      read('referrerPolicy'),
      REFERRER_POLICIES,
      what('referrerPolicy'),
    );
    const mode = enumMember(read('mode'), MODES, what('mode'));
    const credentials = enumMember(read('credentials'), CREDENTIALS_MODES, what('credentials'));
    const cache = enumMember(read('cache'), CACHE_MODES, what('cache'));
    const redirect = enumMember(read('redirect'), REDIRECT_MODES, what('redirect'));
    const integrityGiven = read('integrity');
    const integrity =
      integrityGiven === undefined ? undefined : stringOf(integrityGiven, what('integrity'));
    const keepaliveGiven = read('keepalive');
    const keepalive = keepaliveGiven === undefined ? undefined : !!keepaliveGiven;
    const signal = read('signal');
    if (signal !== undefined && signal !== null && !events.isAbortSignal(signal)) {
      throw new CtxTypeError(what('signal') + ' must be an AbortSignal');
    }
    const window = read('window');
    const duplex = enumMember(read('duplex'), DUPLEX_MODES, what('duplex'));
    const priority = enumMember(read('priority'), PRIORITIES, what('priority'));
    return {
      // "init is not empty": some member is present.
      present:
        body !== undefined ||
        cache !== undefined ||
        credentials !== undefined ||
        duplex !== undefined ||
        headers !== undefined ||
        integrity !== undefined ||
        keepalive !== undefined ||
        method !== undefined ||
        mode !== undefined ||
        priority !== undefined ||
        redirect !== undefined ||
        referrer !== undefined ||
        referrerPolicy !== undefined ||
        signal !== undefined ||
        window !== undefined,
      body: body,
      cache: cache,
      credentials: credentials,
      headers: headers,
      integrity: integrity,
      keepalive: keepalive,
      method: method,
      mode: mode,
      priority: priority,
      redirect: redirect,
      referrer: referrer,
      referrerPolicy: referrerPolicy,
      signal: /** @type {object | null | undefined} */ (signal),
      window: window,
    };
  }

  /**
   * @param {RequestState} state
   * @returns {RequestState}
   */
  function copyOfState(state) {
    return {
      url: state.url,
      method: state.method,
      headers: state.headers,
      body: state.body,
      used: state.used,
      mode: state.mode,
      credentials: state.credentials,
      cache: state.cache,
      redirect: state.redirect,
      referrer: state.referrer,
      referrerPolicy: state.referrerPolicy,
      integrity: state.integrity,
      keepalive: state.keepalive,
      reloadNavigation: state.reloadNavigation,
      historyNavigation: state.historyNavigation,
      priority: state.priority,
      signal: state.signal,
    };
  }

  /**
   * The request `new Request(input, init)` makes (the constructor's steps,
   * Fetch §5.4), and the signal it follows. A Request given as input whose
   * body is taken has that body used up, as the standard's proxy disturbs it.
   * @param {unknown} input a Request of this realm, or a URL (string or URL object)
   * @param {unknown} init
   * @param {string} where 'Request' or 'fetch'
   * @param {boolean} parseUrl false: a URL input is sent as its string, for
   *   the broker to parse and refuse with its own codes (fetch; it needs no URL parser)
   * @returns {RequestDescription}
   */
  function describeRequest(input, init, where, parseUrl) {
    /** @type {RequestState | undefined} */
    const inputState = ReflectApply(weakMapGet, requests, [input]);
    const text = inputState === undefined ? stringOf(input, where + ': the URL') : '';
    const given = readInit(init, where);
    /** @type {RequestState} */
    let state;
    /** @type {object | null} */
    let follow = null;
    if (inputState === undefined) {
      let url = text;
      if (parseUrl) {
        const parsed = absoluteUrl(text, where + ': the URL');
        if (parsed.credentials) {
          throw new CtxTypeError(
            where + ': a URL with credentials (user:password@) cannot be requested: ' + parsed.href,
          );
        }
        url = parsed.href;
      }
      state = {
        url: url,
        method: 'GET',
        headers: null,
        body: null,
        used: false,
        mode: 'cors',
        credentials: 'same-origin',
        cache: 'default',
        redirect: 'follow',
        referrer: CLIENT_REFERRER,
        referrerPolicy: '',
        integrity: '',
        keepalive: false,
        reloadNavigation: false,
        historyNavigation: false,
        priority: 'auto',
        signal: null,
      };
    } else {
      state = copyOfState(inputState);
      follow = inputState.signal;
    }
    if (given.window !== undefined && given.window !== null) {
      throw new CtxTypeError(where + ": 'window' can only be null");
    }
    if (given.present) {
      state.reloadNavigation = false;
      state.historyNavigation = false;
      state.referrer = CLIENT_REFERRER;
      state.referrerPolicy = '';
    }
    if (given.referrer !== undefined) {
      state.referrer =
        given.referrer === '' ? '' : absoluteUrl(given.referrer, where + ': the referrer').href;
    }
    if (given.referrerPolicy !== undefined) state.referrerPolicy = given.referrerPolicy;
    if (given.mode === 'navigate') {
      throw new CtxTypeError(where + ": the mode 'navigate' is only for the browser's navigations");
    }
    if (given.mode !== undefined) state.mode = given.mode;
    if (given.credentials !== undefined) state.credentials = given.credentials;
    if (given.cache !== undefined) state.cache = given.cache;
    if (state.cache === 'only-if-cached' && state.mode !== 'same-origin') {
      throw new CtxTypeError(
        where + ": the cache mode 'only-if-cached' needs the mode 'same-origin'",
      );
    }
    if (given.redirect !== undefined) state.redirect = given.redirect;
    if (given.integrity !== undefined) state.integrity = given.integrity;
    if (given.keepalive !== undefined) state.keepalive = given.keepalive;
    if (given.method !== undefined) state.method = methodOf(given.method, where);
    if (given.signal !== undefined) follow = given.signal;
    if (given.priority !== undefined) state.priority = given.priority;
    if (state.mode === 'no-cors' && !listed(CORS_SAFELISTED_METHODS, state.method)) {
      throw new CtxTypeError(
        where +
          ": the mode 'no-cors' takes the methods GET, HEAD and POST only, not " +
          state.method,
      );
    }
    // guard 'request': mutable, as the standard's and Node's are; see the file's comment.
    let headers =
      inputState === undefined
        ? webHeaders.headersFrom(undefined)
        : webHeaders.copyHeaders(inputState.headers, false);
    if (given.present && given.headers !== undefined) {
      // As new Headers(init) does: null is no HeadersInit, a TypeError.
      headers = new /** @type {any} */ (webHeaders.Headers)(given.headers);
    }
    state.headers = headers;

    const inputBody = inputState === undefined ? null : inputState.body;
    const initBodyGiven = given.body !== undefined && given.body !== null;
    if (
      (initBodyGiven || inputBody !== null) &&
      (state.method === 'GET' || state.method === 'HEAD')
    ) {
      throw new CtxTypeError(where + ': a ' + state.method + ' request cannot have a body');
    }
    /** @type {BodySource | null} */
    let body = null;
    if (initBodyGiven) {
      const made = extractBody(given.body, where);
      body = made.source;
      if (made.type !== null) webHeaders.setDefaultHeader(headers, 'content-type', made.type);
    } else if (inputState !== undefined && inputBody !== null) {
      if (bodyUnusable(inputState)) {
        throw new CtxTypeError(
          where + ": the Request's body has already been read or its stream is locked",
        );
      }
      body = inputBody;
      takeBody(inputState);
    }
    state.body = body;
    state.used = false;
    state.signal = null;
    return { state: state, follow: follow };
  }

  class Request {
    /**
     * @param {unknown} input a URL (string or URL object) or a Request
     * @param {unknown} [init] {method, headers, body, signal, redirect, mode, credentials,
     *   cache, referrer, referrerPolicy, integrity, keepalive, duplex, priority, window}
     */
    constructor(input, init) {
      if (input === CLONING) {
        // State comes from clone(); nothing of the tool's is read.
        return;
      }
      if (arguments.length === 0) {
        throw new CtxTypeError("Request: the 'input' argument is required");
      }
      const made = describeRequest(input, init, 'Request', true);
      // A signal of its own, following the given one (or the input Request's).
      made.state.signal = events.dependentSignal(made.follow === null ? [] : [made.follow]);
      remember(requests, this, made.state);
    }

    get method() {
      return requestState(this).method;
    }
    get url() {
      return requestState(this).url;
    }
    get headers() {
      return requestState(this).headers;
    }
    get destination() {
      requestState(this);
      return '';
    }
    get referrer() {
      return requestState(this).referrer;
    }
    get referrerPolicy() {
      return requestState(this).referrerPolicy;
    }
    get mode() {
      return requestState(this).mode;
    }
    get credentials() {
      return requestState(this).credentials;
    }
    get cache() {
      return requestState(this).cache;
    }
    get redirect() {
      return requestState(this).redirect;
    }
    get integrity() {
      return requestState(this).integrity;
    }
    get keepalive() {
      return requestState(this).keepalive;
    }
    get isReloadNavigation() {
      return requestState(this).reloadNavigation;
    }
    get isHistoryNavigation() {
      return requestState(this).historyNavigation;
    }
    get signal() {
      return requestState(this).signal;
    }
    get duplex() {
      requestState(this);
      return 'half';
    }

    /** A second Request like this one, with a signal following this one's; the body must be unread. */
    clone() {
      const state = requestState(this);
      if (bodyUnusable(state)) {
        throw new CtxTypeError(
          'Request.clone: the body has already been read or its stream is locked',
        );
      }
      const copy = new Request(CLONING);
      const copied = copyOfState(state);
      copied.headers = webHeaders.copyHeaders(state.headers, false);
      copied.signal = events.dependentSignal([/** @type {object} */ (state.signal)]);
      remember(requests, copy, copied);
      return copy;
    }
  }
  defineBodyMembers(Request.prototype, requestState);
  ObjectDefineProperty(Request.prototype, SymbolToStringTag, {
    value: 'Request',
    configurable: true,
  });

  platformClasses(Request);
  return { Request: Request, describeRequest: describeRequest };
});
