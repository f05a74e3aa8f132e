// @ts-check
/**
 * Who made the call (`sdk.caller`), as the control plane established it:
 * the kind of credential, the subject and client of an OAuth token with its
 * granted scopes and the claims the server lets tools see, an API key's id
 * and label. Never a token or a key's value. Set by start.
 */
import { frozenJson } from './frozen-json.js';

let callingCaller = /** @type {unknown} */ (null);

/** `sdk.caller`. */
export function caller() {
  return callingCaller;
}

/**
 * Takes the caller, as JSON text.
 * @param {string} callerJson
 */
export function setCaller(callerJson) {
  callingCaller = frozenJson(callerJson);
}
