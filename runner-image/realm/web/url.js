// @ts-check
/**
 * URL and URLSearchParams for tool code: whatwg-url, the URL Standard's
 * reference implementation, bundled by scripts/build-harness.ts into a script
 * of its own. The host runs that script in the context before the bootstrap;
 * it only leaves a factory in a slot of the global, which `takeUrlFactory`
 * takes out of tool code's reach. The factory runs on the first read of URL,
 * or ahead, while idle, when the tool's code names it (tool-context.ts).
 */
import {
  CtxError,
  ObjectFreeze,
  ObjectGetOwnPropertyDescriptor,
  ReflectApply,
  StringCtor,
} from '../primordials.js';
import { once, platformClasses } from '../webidl.js';
import { utf8DecodeAll, utf8Encode } from './utf8.js';

/** Where the host leaves the URL implementation's factory (see scripts/build-harness.ts). */
const URL_SLOT = '__mcphostWhatwgUrl';

/** @type {unknown} */
let urlFactory;
let urlLoaded = false;

/**
 * Takes the factory out of the global, before any tool code runs.
 * @param {Record<string, unknown>} G the context's global
 */
export function takeUrlFactory(G) {
  const urlSlot = ObjectGetOwnPropertyDescriptor(G, URL_SLOT);
  delete G[URL_SLOT];
  urlFactory = urlSlot === undefined ? undefined : urlSlot.value;
}

/**
 * The UTF-8 codecs whatwg-url is given instead of the global classes:
 * frozen, so a tool that replaces TextEncoder.prototype.encode does not
 * change how its URLs parse. whatwg-url only ever asks for UTF-8.
 */
function urlCodecs() {
  class UrlTextEncoder {
    /** @param {unknown} input */
    encode(input) {
      return utf8Encode(input === undefined ? '' : StringCtor(input));
    }
  }
  class UrlTextDecoder {
    /** @param {Uint8Array} input */
    decode(input) {
      return utf8DecodeAll(input, true);
    }
  }
  ObjectFreeze(UrlTextEncoder.prototype);
  ObjectFreeze(UrlTextDecoder.prototype);
  return {
    UrlTextEncoder: ObjectFreeze(UrlTextEncoder),
    UrlTextDecoder: ObjectFreeze(UrlTextDecoder),
  };
}

/**
 * @param {object} prototype
 * @param {string} key
 * @returns {Function}
 */
function getterOf(prototype, key) {
  const descriptor = ObjectGetOwnPropertyDescriptor(prototype, key);
  if (descriptor === undefined || typeof descriptor.get !== 'function') {
    throw new CtxError('URL is not available: its ' + key + ' getter is missing');
  }
  return descriptor.get;
}

/** This realm's URL and URLSearchParams, made by the factory on first need. */
export const urlClasses = once(function () {
  if (typeof urlFactory !== 'function') {
    throw new CtxError('URL is not available: its implementation was not loaded');
  }
  const codecs = urlCodecs();
  const made = /** @type {{ URL: Function, URLSearchParams: Function }} */ (
    urlFactory(codecs.UrlTextEncoder, codecs.UrlTextDecoder)
  );
  platformClasses(made.URL, made.URLSearchParams);
  urlLoaded = true;
  // Taken now, before tool code can hold URL.prototype: realm code (Request) reads URLs through these.
  const urlPrototype = made.URL.prototype;
  return {
    URL: made.URL,
    URLSearchParams: made.URLSearchParams,
    searchParamsToString: made.URLSearchParams.prototype.toString,
    urlHref: getterOf(urlPrototype, 'href'),
    urlUsername: getterOf(urlPrototype, 'username'),
    urlPassword: getterOf(urlPrototype, 'password'),
  };
});

/**
 * A URLSearchParams' text, or null for anything else (URL not loaded means there is none).
 * @param {unknown} value
 */
export function urlSearchParamsText(value) {
  if (!urlLoaded || value === null || typeof value !== 'object') return null;
  try {
    // whatwg-url's methods check their receiver: anything else throws.
    return ReflectApply(urlClasses().searchParamsToString, value, []);
  } catch {
    return null;
  }
}
