// @ts-check
/**
 * The code that runs inside every tool context before tool code does: the
 * entry of the bootstrap. The harness never imports it: scripts/build-harness.ts
 * bundles this folder into one script (context-scripts.json), and
 * tool-context.ts evaluates that script in each new context's realm, so every
 * object and function tool code can reach is created here, in that realm. No
 * module of this folder may name a Node or host global (eslint holds them to
 * the language's own), and each takes the built-ins it uses from
 * primordials.js, captured when the script is evaluated, before tool code runs.
 *
 * The host hands `install` ONE function (the bridge, bridge.js) and drives
 * the context through what `install` returns (`ContextApi` in tool-context.ts).
 */
import {
  CtxAtomics,
  JSONParse,
  ObjectFreeze,
  ReflectApply,
  contextGlobal,
  then,
} from './primordials.js';
import { connectBridge } from './bridge.js';
import { closeCalls, settle } from './calls.js';
import { setCaller } from './caller.js';
import { setCallingClient } from './client.js';
import { toolConsole } from './console.js';
import { fail, settleWith } from './result.js';
import { preloadLodash, sdk } from './sdk.js';
import { clearTimers, fire, installTimers } from './timers.js';
import { installWebPlatform } from './web/platform.js';

/** @typedef {import('../tool-context.js').HostBridge} HostBridge */
/** @typedef {import('../tool-context.js').ContextApi} ContextApi */

/**
 * Runs the tool function with params, env, the calling client and the caller given as JSON text.
 * @param {unknown} tool
 * @param {string} paramsJson
 * @param {string} envJson
 * @param {string} clientJson
 * @param {string} callerJson
 */
function start(tool, paramsJson, envJson, clientJson, callerJson) {
  const params = JSONParse(paramsJson);
  const env = ObjectFreeze(JSONParse(envJson));
  setCallingClient(clientJson);
  setCaller(callerJson);
  let promise;
  try {
    promise = ReflectApply(/** @type {Function} */ (tool), undefined, [
      params,
      env,
      toolConsole,
      sdk,
    ]);
  } catch (error) {
    fail(error);
    return;
  }
  then(promise, settleWith, fail);
}

/** Ends the invocation: timers stop, pending calls reject with ERR_CANCELLED. */
function cancel() {
  clearTimers();
  closeCalls();
}

/**
 * Takes the host's bridge, sets the context's globals up, and returns the API the host drives.
 * @param {HostBridge} hostBridge
 * @returns {ContextApi}
 */
export function install(hostBridge) {
  connectBridge(hostBridge);
  /** The context's global, as the untyped bag of properties it is to us. */
  const G = /** @type {Record<string, unknown>} */ (contextGlobal);
  installTimers(G);
  installWebPlatform(G);

  // What the engine settles on its own schedule, outside the drains the host
  // controls (see tool-context.ts): a FinalizationRegistry callback would run
  // tool code after its invocation ended; a timed-out Atomics.waitAsync, or the
  // refusal of WebAssembly.compile (code generation is off), would settle after
  // the drain and leave the tool waiting for one that never comes.
  delete G.FinalizationRegistry;
  delete G.WebAssembly;
  if (CtxAtomics !== undefined) {
    delete (/** @type {{ waitAsync?: unknown }} */ (CtxAtomics).waitAsync);
  }

  return ObjectFreeze({
    start: start,
    settle: settle,
    fire: fire,
    cancel: cancel,
    preloadLodash: preloadLodash,
  });
}
