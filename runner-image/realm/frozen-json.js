// @ts-check
/**
 * JSON text from the control plane as a value of this realm, frozen through
 * and through: what `sdk.client` and `sdk.caller` show is what the control
 * plane said, and no tool code may rewrite it for the code after it.
 */
import { JSONParse, ObjectFreeze, ObjectKeys } from './primordials.js';

/**
 * @param {string} text JSON text
 * @returns {unknown}
 */
export function frozenJson(text) {
  return deepFreeze(JSONParse(text));
}

/**
 * @param {unknown} value a parsed JSON value
 * @returns {unknown}
 */
function deepFreeze(value) {
  if (value !== null && typeof value === 'object') {
    const keys = ObjectKeys(value);
    for (let i = 0; i < keys.length; i++) {
      deepFreeze(/** @type {Record<string, unknown>} */ (value)[/** @type {string} */ (keys[i])]);
    }
    ObjectFreeze(value);
  }
  return value;
}
