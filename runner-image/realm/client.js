// @ts-check
/**
 * The calling client, as tool code meets it: `sdk.progress`, the requests to
 * the client (`sdk.elicit`, `sdk.sample`, `sdk.roots`, brokered calls like any
 * other), `sdk.closeStream`, and `sdk.client` (what the client declared).
 */
import {
  ArrayIsArray,
  CtxRangeError,
  CtxTypeError,
  JSONParse,
  JSONStringify,
} from './primordials.js';
import { frozenJson } from './frozen-json.js';
import { bridge } from './bridge.js';
import { callHost } from './calls.js';
import { messageOf, rejected } from './errors.js';

let lastProgress = -Infinity;

/**
 * @param {unknown} progress
 * @param {unknown} total
 * @param {unknown} message
 */
export function progress(progress, total, message) {
  if (typeof progress !== 'number' || progress !== progress || !(progress > -Infinity)) {
    throw new CtxTypeError('sdk.progress: progress must be a finite number');
  }
  if (progress === Infinity) throw new CtxTypeError('sdk.progress: progress must be finite');
  if (!(progress > lastProgress)) {
    throw new CtxRangeError(
      'sdk.progress: progress must increase with each call (it was ' +
        lastProgress +
        ', now ' +
        progress +
        ')',
    );
  }
  if (
    total !== undefined &&
    (typeof total !== 'number' || !(total > -Infinity && total < Infinity))
  ) {
    throw new CtxTypeError('sdk.progress: total must be a finite number when given');
  }
  if (message !== undefined && typeof message !== 'string') {
    throw new CtxTypeError('sdk.progress: message must be a string when given');
  }
  lastProgress = progress;
  bridge('progress', progress, total, message);
}

/**
 * The `key` of a request to the client, read once from `options`; the
 * host checks its form.
 * @param {string} name the sdk function, for messages
 * @param {unknown} options
 * @returns {string | undefined}
 */
function keyOf(name, options) {
  if (options === undefined || options === null) return undefined;
  if (typeof options !== 'object') {
    throw new CtxTypeError(name + ': options must be an object such as {key: "name"}');
  }
  const key = /** @type {{ key?: unknown }} */ (options).key;
  if (key !== undefined && typeof key !== 'string') {
    throw new CtxTypeError(name + ': options.key must be a string');
  }
  return key;
}

/**
 * @param {unknown} message
 * @param {unknown} requestedSchema
 * @param {unknown} [options] {key?}
 */
export function elicit(message, requestedSchema, options) {
  return callHost('client.elicit', {
    message: message,
    requestedSchema: requestedSchema,
    key: keyOf('sdk.elicit', options),
  });
}

/**
 * @param {unknown} request {messages, maxTokens, systemPrompt?, ...}
 * @param {unknown} [options] {key?}
 */
export function sample(request, options) {
  const key = keyOf('sdk.sample', options);
  if (key === undefined) return callHost('client.sample', request);
  // A copy with the key beside the request's fields (read once, as the host will).
  let args;
  try {
    args = JSONParse(JSONStringify(request));
  } catch (error) {
    return rejected(
      'ERR_INVALID_ARGUMENT',
      'arguments of client.sample are not JSON-serialisable: ' + messageOf(error),
    );
  }
  if (args === null || typeof args !== 'object' || ArrayIsArray(args)) {
    return rejected('ERR_INVALID_ARGUMENT', 'sdk.sample: the request must be an object');
  }
  args.key = key;
  return callHost('client.sample', args);
}

/** @param {unknown} [options] {key?} */
export function roots(options) {
  return callHost('client.roots', { key: keyOf('sdk.roots', options) });
}

/** What the calling client declared (`sdk.client`); null in a test run. Set by start. */
let callingClient = /** @type {unknown} */ (null);

/** `sdk.client`. */
export function client() {
  return callingClient;
}

/**
 * Takes what the client declared, as JSON text (frozen: see frozen-json.js).
 * @param {string} clientJson
 */
export function setCallingClient(clientJson) {
  callingClient = frozenJson(clientJson);
}

/**
 * Asks the control plane to end the HTTP response carrying this call now,
 * while the call goes on: a client that can resume (SEP-1699) reconnects
 * and gets the rest, the result included. Advisory, so it never throws and
 * returns nothing; only its first call in an invocation is sent.
 */
export function closeStream() {
  try {
    bridge('closeStream');
  } catch {
    // Only a stack overflow reaches here; a hint is not worth failing the tool for.
  }
}
