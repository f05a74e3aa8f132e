// @ts-check
/**
 * The invocation's outcome, sent to the host once: the tool's value as JSON
 * text or MCP content (`ok`), or what it threw (`fail`) with the reply code a
 * failed call carried and the line and column of the tool's frame.
 */
import {
  ArrayIsArray,
  JSONStringify,
  ObjectKeys,
  ReflectApply,
  StringCtor,
  append,
  matches,
  regexpExec,
} from './primordials.js';
import { bridge } from './bridge.js';
import { callFailureCode } from './calls.js';
import { blocksJson, contentOf } from './content.js';
import { messageOf } from './errors.js';

const TOOL_FRAME = /tool\.js:(\d+):(\d+)/;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** @param {string} key */
function pathKey(key) {
  return matches(IDENTIFIER, key) ? '.' + key : '[' + JSONStringify(key) + ']';
}

/**
 * Finds why JSON.stringify refused a value, with the path to the culprit.
 * @param {any} value part of the tool's result; read defensively
 * @param {string} path
 * @param {unknown[]} stack
 * @returns {string | null}
 */
function findUnserialisable(value, path, stack) {
  if (
    value !== null &&
    (typeof value === 'object' || typeof value === 'bigint') &&
    typeof value.toJSON === 'function'
  ) {
    value = value.toJSON();
  }
  if (typeof value === 'bigint') return 'a BigInt at ' + (path || 'the top level');
  if (value === null || typeof value !== 'object') return null;
  for (let i = 0; i < stack.length; i++) {
    if (stack[i] === value) return 'a circular reference at ' + (path || 'the top level');
  }
  append(stack, value);
  let found = null;
  if (ArrayIsArray(value)) {
    for (let i = 0; i < value.length && found === null; i++) {
      found = findUnserialisable(value[i], path + '[' + i + ']', stack);
    }
  } else {
    const keys = ObjectKeys(value);
    for (let i = 0; i < keys.length && found === null; i++) {
      const key = /** @type {string} */ (keys[i]);
      found = findUnserialisable(value[key], path + pathKey(key), stack);
    }
  }
  stack.length = stack.length - 1;
  return found;
}

/**
 * @param {unknown} value
 * @param {unknown} error
 */
function describeUnserialisable(value, error) {
  let culprit = null;
  try {
    culprit = findUnserialisable(value, '', []);
  } catch {
    // A getter or toJSON that throws: fall back to JSON.stringify's message.
  }
  if (culprit !== null) return 'result contains ' + culprit + '; return JSON data instead';
  return 'result cannot be serialised to JSON: ' + messageOf(error);
}

/**
 * The outcome of a resolved tool: whatever goes wrong on the way (a getter
 * or `toJSON` of the result that throws) fails the invocation at once;
 * nothing is left as an unhandled rejection the host never sees.
 * @param {unknown} value
 */
export function settleWith(value) {
  try {
    succeed(value);
  } catch (error) {
    fail(error);
  }
}

/** @param {unknown} value what the tool's promise resolved to */
function succeed(value) {
  if (value === undefined) {
    bridge('ok', 'null');
    return;
  }
  const kind = typeof value;
  if (kind === 'function' || kind === 'symbol' || kind === 'bigint') {
    const what = kind === 'bigint' ? 'a BigInt' : 'a ' + kind;
    bridge(
      'fail',
      'ERR_RESULT_NOT_SERIALISABLE',
      'result is ' + what + '; return JSON data (object, array, string, number, boolean or null)',
    );
    return;
  }
  let blocks;
  try {
    blocks = contentOf(value);
  } catch (error) {
    fail(error);
    return;
  }
  if (blocks !== null) {
    bridge('ok', blocksJson(blocks), 'content');
    return;
  }
  let json;
  try {
    json = JSONStringify(value);
  } catch (error) {
    bridge('fail', 'ERR_RESULT_NOT_SERIALISABLE', describeUnserialisable(value, error));
    return;
  }
  bridge('ok', typeof json === 'string' ? json : 'null');
}

/** @param {any} thrown what tool code threw or rejected with; read defensively */
export function fail(thrown) {
  // Read first, off the object's identity: nothing tool code defined runs for it.
  const code = callFailureCode(thrown);
  let message;
  let line;
  let column;
  try {
    if (
      thrown !== null &&
      (typeof thrown === 'object' || typeof thrown === 'function') &&
      typeof thrown.message === 'string'
    ) {
      message = thrown.message;
      const stack = thrown.stack;
      const frame =
        typeof stack === 'string' ? ReflectApply(regexpExec, TOOL_FRAME, [stack]) : null;
      if (frame !== null) {
        // Both groups of TOOL_FRAME take part in every match.
        line = +(/** @type {string} */ (frame[1]));
        column = +(/** @type {string} */ (frame[2]));
      }
    } else {
      message = StringCtor(thrown);
    }
  } catch {
    message = 'tool code threw a value that cannot be described';
  }
  bridge(
    'fail',
    code === undefined ? 'ERR_TOOL_ERROR' : code,
    typeof message === 'string' ? message : 'tool code threw',
    line,
    column,
  );
}
