// @ts-check
/**
 * The one way to the host: the bridge function tool-context.ts hands to
 * `install` (install.js), kept in this module's closure and called directly,
 * never through a property tool code could replace, with primitives only.
 * The host answers with primitives only.
 */
import { CtxRangeError } from './primordials.js';

/** @type {import('../tool-context.js').HostBridge | null} */
let hostBridge = null;

/**
 * Takes the host's bridge; `install` calls it first, once per realm.
 * @param {import('../tool-context.js').HostBridge} given
 */
export function connectBridge(given) {
  hostBridge = given;
}

/**
 * Calls the host. What the host threw (only a stack overflow can reach here)
 * is never shown: it is a host object.
 * @param {string} kind
 * @param {string | number | boolean} [a]
 * @param {string | number | boolean} [b]
 * @param {string | number} [c]
 * @param {string | number} [d]
 */
export function bridge(kind, a, b, c, d) {
  const target = hostBridge;
  if (target === null) return undefined;
  try {
    return target(kind, a, b, c, d);
  } catch {
    throw new CtxRangeError('Maximum call stack size exceeded');
  }
}

/**
 * The bridge's `web` kind: randomness, digests, base64, text decoding and the
 * clock (runner-image/web-host.ts).
 * @param {string} op
 * @param {string | number} [a]
 * @param {string | number} [b]
 * @param {string | number} [c]
 */
export function webCall(op, a, b, c) {
  return bridge('web', op, a, b, c);
}

/** Milliseconds since the invocation started. */
export function now() {
  const value = webCall('now');
  return typeof value === 'number' ? value : 0;
}

/** @type {number | undefined} */
let byteLimitValue;

/** The most bytes one call may hand the host (the harness's line limit). */
export function byteLimit() {
  if (byteLimitValue === undefined) {
    const value = webCall('maxBytes');
    if (typeof value !== 'number') return 0;
    byteLimitValue = value;
  }
  return byteLimitValue;
}
