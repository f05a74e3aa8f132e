// @ts-check
/**
 * The web platform of tool code (DESIGN §3): URL, URLSearchParams,
 * TextEncoder, TextDecoder, atob, btoa, structuredClone, DOMException,
 * Event, EventTarget, AbortController, AbortSignal, performance, crypto,
 * fetch, Headers and Response, all created in the tool's realm.
 *
 * Each is installed lazily: the global is an accessor until first read, when
 * its group (web-*.js) is created and the accessor becomes the ordinary data
 * property the web has. A context that never names them pays for a few
 * accessors only (contexts are made for every invocation). URL is a bundled
 * implementation (whatwg-url, see scripts/build-harness.ts): the host runs its
 * script in the context before this bootstrap, which only defines a factory
 * (taken here, out of tool code's reach); the factory runs on the first read
 * of URL, or ahead, while idle, when the tool's code names it (tool-context.ts).
 *
 * Part of the bootstrap (see install.js): compiled in the tool's realm, naming
 * no Node or host global; the intrinsics it uses are captured when it is called.
 */
/* exported createWebPlatformInstaller */

/**
 * The groups' factories (one bootstrap file each), handed over by the build
 * like the console formatter is handed to `bootstrap`.
 * @typedef {{
 *   createWebBytes: () => import('./web-bytes.js').WebBytes,
 *   createWebEvents: (platform: {
 *     setTimeout: (callback: () => void, ms: number) => unknown,
 *     clearTimeout: (id: unknown) => void,
 *     reportError: (error: unknown) => void,
 *     now: () => number,
 *   }) => import('./web-events.js').WebEvents,
 *   createWebEncoding: (bytes: import('./web-bytes.js').WebBytes, DOMExceptionCtor: import('./web-events.js').DOMExceptionClass, webCall: WebCall) => import('./web-encoding.js').WebEncoding,
 *   createStructuredClone: (DOMExceptionCtor: import('./web-events.js').DOMExceptionClass, isPlatformObject: (value: object) => boolean) => (value: unknown, options?: unknown) => unknown,
 *   createWebCrypto: (bytes: import('./web-bytes.js').WebBytes, DOMExceptionCtor: import('./web-events.js').DOMExceptionClass, webCall: WebCall, byteLimit: () => number) => import('./web-crypto.js').WebCrypto,
 *   createWebHeaders: () => import('./web-headers.js').WebHeaders,
 *   createWebFetch: (parts: {
 *     bytes: import('./web-bytes.js').WebBytes,
 *     encoding: import('./web-encoding.js').WebEncoding,
 *     headers: import('./web-headers.js').WebHeaders,
 *     events: import('./web-events.js').WebEvents,
 *     callHost: (op: string, args: unknown) => Promise<unknown>,
 *     adoptCallFailure: (failure: object, cause: unknown) => void,
 *     webCall: WebCall,
 *     urlSearchParamsText: (value: unknown) => string | null,
 *   }) => import('./web-fetch.js').WebFetch,
 * }} WebPlatformParts
 * @typedef {(op: string, a?: string | number, b?: string | number, c?: string | number) => unknown} WebCall
 */

/**
 * @param {WebPlatformParts} parts
 * @returns {(global: Record<string, unknown>, host: import('./install.js').WebPlatformHost) => void}
 */
function createWebPlatformInstaller(parts) {
  'use strict';
  return function installWebPlatform(global, host) {
    const G = global;
    const ObjectDefineProperty = Object.defineProperty;
    const ObjectGetOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
    const ObjectFreeze = Object.freeze;
    const ReflectApply = Reflect.apply;
    const isPrototypeOf = Object.prototype.isPrototypeOf;
    const CtxError = Error;
    const CtxTypeError = TypeError;
    const bridge = host.bridge;
    // The context's own timers (install.js defines them before calling here), kept before tool code may replace them.
    const setTimer = /** @type {(callback: () => void, ms: number) => unknown} */ (G.setTimeout);
    const clearTimer = /** @type {(id: unknown) => void} */ (G.clearTimeout);
    /** Where the host leaves the URL implementation's factory (see scripts/build-harness.ts). */
    const URL_SLOT = '__mcphostWhatwgUrl';
    const urlSlot = ObjectGetOwnPropertyDescriptor(G, URL_SLOT);
    delete G[URL_SLOT];
    const urlFactory = urlSlot === undefined ? undefined : urlSlot.value;

    /**
     * The bridge's `web` kind: randomness, digests, base64 and the clock (runner-image/web-host.ts).
     * @param {string} op
     * @param {string | number} [a]
     * @param {string | number} [b]
     * @param {string | number} [c]
     */
    function webCall(op, a, b, c) {
      return bridge('web', op, a, b, c);
    }

    /** Milliseconds since the invocation started. */
    function now() {
      const value = webCall('now');
      return typeof value === 'number' ? value : 0;
    }

    /** @param {unknown} error what a listener or an abort algorithm threw */
    function reportError(error) {
      bridge('log', 'error', 'Uncaught (in an event listener) ' + host.messageOf(error));
    }

    /** @type {number | undefined} */
    let byteLimitValue;
    /** The most bytes one call may hand the host (the harness's line limit). */
    function byteLimit() {
      if (byteLimitValue === undefined) {
        const value = webCall('maxBytes');
        if (typeof value !== 'number') return 0;
        byteLimitValue = value;
      }
      return byteLimitValue;
    }

    /**
     * A factory run once, on first need.
     * @template T
     * @param {() => T} make
     * @returns {() => T}
     */
    function once(make) {
      /** @type {{ value: T } | null} */
      let made = null;
      return function () {
        if (made === null) made = { value: make() };
        return made.value;
      };
    }

    // Prototypes of the platform's objects that are not cloneable: structuredClone refuses them.
    /** @type {object[]} */
    const platformPrototypes = [];
    /** @param {...Function} classes */
    function platformClasses(...classes) {
      for (let i = 0; i < classes.length; i++) {
        platformPrototypes[platformPrototypes.length] = /** @type {Function} */ (
          classes[i]
        ).prototype;
      }
    }
    /** @param {object} value */
    function isPlatformObject(value) {
      for (let i = 0; i < platformPrototypes.length; i++) {
        if (ReflectApply(isPrototypeOf, platformPrototypes[i], [value])) return true;
      }
      return false;
    }

    // ---------------------------------------------------------------- groups
    const bytes = once(parts.createWebBytes);
    const events = once(function () {
      const made = parts.createWebEvents({
        setTimeout: setTimer,
        clearTimeout: clearTimer,
        reportError: reportError,
        now: now,
      });
      platformClasses(made.Event, made.EventTarget, made.AbortController);
      return made;
    });
    const encoding = once(function () {
      const made = parts.createWebEncoding(bytes(), events().DOMException, webCall);
      platformClasses(made.TextEncoder, made.TextDecoder);
      return made;
    });
    const structuredClone = once(function () {
      return parts.createStructuredClone(events().DOMException, isPlatformObject);
    });
    const crypto = once(function () {
      const made = parts.createWebCrypto(bytes(), events().DOMException, webCall, byteLimit);
      platformClasses(made.Crypto, made.SubtleCrypto, made.CryptoKey);
      return made;
    });
    const headers = once(function () {
      const made = parts.createWebHeaders();
      platformClasses(made.Headers);
      return made;
    });
    const url = once(function () {
      if (typeof urlFactory !== 'function') {
        throw new CtxError('URL is not available: its implementation was not loaded');
      }
      const made = /** @type {{ URL: Function, URLSearchParams: Function }} */ (
        urlFactory(urlCodecs().UrlTextEncoder, urlCodecs().UrlTextDecoder)
      );
      platformClasses(made.URL, made.URLSearchParams);
      urlLoaded = true;
      return {
        URL: made.URL,
        URLSearchParams: made.URLSearchParams,
        searchParamsToString: made.URLSearchParams.prototype.toString,
      };
    });
    /**
     * The UTF-8 codecs whatwg-url is given instead of the global classes:
     * frozen, so a tool that replaces TextEncoder.prototype.encode does not
     * change how its URLs parse. whatwg-url only ever asks for UTF-8.
     */
    const urlCodecs = once(function () {
      const codecs = encoding();
      const StringCtor = String;
      class UrlTextEncoder {
        /** @param {unknown} input */
        encode(input) {
          return codecs.utf8Encode(input === undefined ? '' : StringCtor(input));
        }
      }
      class UrlTextDecoder {
        /** @param {Uint8Array} input */
        decode(input) {
          return codecs.utf8DecodeAll(input, true);
        }
      }
      ObjectFreeze(UrlTextEncoder.prototype);
      ObjectFreeze(UrlTextDecoder.prototype);
      return {
        UrlTextEncoder: ObjectFreeze(UrlTextEncoder),
        UrlTextDecoder: ObjectFreeze(UrlTextDecoder),
      };
    });
    /** A URLSearchParams' text, or null for anything else (URL not loaded means there is none). */
    let urlLoaded = false;
    /** @param {unknown} value */
    function urlSearchParamsText(value) {
      if (!urlLoaded || value === null || typeof value !== 'object') return null;
      try {
        // whatwg-url's methods check their receiver: anything else throws.
        return ReflectApply(url().searchParamsToString, value, []);
      } catch {
        return null;
      }
    }
    const fetch = once(function () {
      const made = parts.createWebFetch({
        bytes: bytes(),
        encoding: encoding(),
        headers: headers(),
        events: events(),
        callHost: host.callHost,
        adoptCallFailure: host.adoptCallFailure,
        webCall: webCall,
        urlSearchParamsText: urlSearchParamsText,
      });
      platformClasses(made.Response);
      return made;
    });
    const performance = once(function () {
      const CONSTRUCTING = ObjectFreeze({});
      class Performance {
        /** @param {unknown} [key] */
        constructor(key) {
          if (key !== CONSTRUCTING) throw new CtxTypeError('Illegal constructor');
        }
        /** Milliseconds since the invocation started (5 µs resolution). */
        now() {
          return now();
        }
        /** When the invocation started, in ms since the epoch. */
        get timeOrigin() {
          const value = webCall('timeOrigin');
          return typeof value === 'number' ? value : 0;
        }
        toJSON() {
          return { timeOrigin: this.timeOrigin };
        }
      }
      platformClasses(Performance);
      return { performance: new Performance(CONSTRUCTING), Performance: Performance };
    });

    // ---------------------------------------------------------------- lazy globals
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
     * @param {() => Record<string, unknown>} group
     * @param {string[]} names
     */
    function lazyGroup(group, names) {
      for (let i = 0; i < names.length; i++) {
        const name = /** @type {string} */ (names[i]);
        lazyGlobal(name, function () {
          return group()[name];
        });
      }
    }

    lazyGroup(/** @type {() => any} */ (encoding), ['TextEncoder', 'TextDecoder', 'atob', 'btoa']);
    lazyGroup(/** @type {() => any} */ (events), [
      'DOMException',
      'Event',
      'CustomEvent',
      'EventTarget',
      'AbortController',
      'AbortSignal',
    ]);
    lazyGlobal('structuredClone', structuredClone);
    lazyGroup(/** @type {() => any} */ (crypto), ['crypto', 'Crypto', 'SubtleCrypto', 'CryptoKey']);
    lazyGroup(/** @type {() => any} */ (performance), ['performance', 'Performance']);
    lazyGroup(
      function () {
        return { fetch: fetch().fetch, Response: fetch().Response, Headers: headers().Headers };
      },
      ['fetch', 'Response', 'Headers'],
    );
    lazyGroup(/** @type {() => any} */ (url), ['URL', 'URLSearchParams']);
  };
}
