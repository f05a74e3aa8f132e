// @ts-check
/**
 * What the tool's `console.log('%s has %d items', name, n)` prints: the
 * arguments made into one line, formatted like Node's console does.
 */
import {
  ArrayIsArray,
  CtxDate,
  CtxError,
  CtxMap,
  CtxRegExp,
  CtxSet,
  JSONStringify,
  NumberParseFloat,
  NumberParseInt,
  ObjectKeys,
  ObjectPrototypeToString,
  ReflectApply,
  StringCtor,
  append,
  dateToISOString,
  functionToString,
  mapEntries,
  mapIteratorNext,
  matches,
  regexpToString,
  setIteratorNext,
  setValues,
  symbolToString,
} from './primordials.js';
import { messageOf } from './errors.js';

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const FORMAT_DIRECTIVE = /%[sdifjoOc%]/;
const MAX_INSPECT_DEPTH = 3;
const MAX_INSPECT_ITEMS = 100;

/** @param {string} text */
function quote(text) {
  return "'" + text + "'";
}

/** @param {string} key */
function keyText(key) {
  return matches(IDENTIFIER, key) ? key : quote(key);
}

/** @param {Function} value */
function inspectFunction(value) {
  let source = '';
  try {
    source = ReflectApply(functionToString, value, []);
  } catch {
    // A revoked proxy, say: shown by its name alone.
  }
  const name = typeof value.name === 'string' && value.name !== '' ? value.name : '';
  if (source.slice(0, 5) === 'class') return '[class ' + (name || '(anonymous)') + ']';
  return '[Function: ' + (name || '(anonymous)') + ']';
}

/** @param {object} value */
function isError(value) {
  return (
    value instanceof CtxError ||
    ReflectApply(ObjectPrototypeToString, value, []) === '[object Error]'
  );
}

/**
 * @param {any} value anything tool code logs; read defensively
 * @param {number} depth how deep inside the logged value this one is
 * @param {unknown[]} seen the containers being inspected, outermost first
 * @param {boolean} nested whether this value is inside another (strings get quotes)
 * @returns {string}
 */
function inspect(value, depth, seen, nested) {
  switch (typeof value) {
    case 'string':
      return nested ? quote(value) : value;
    case 'number':
      return value === 0 && 1 / value < 0 ? '-0' : StringCtor(value);
    case 'bigint':
      return StringCtor(value) + 'n';
    case 'symbol':
      return ReflectApply(symbolToString, value, []);
    case 'undefined':
      return 'undefined';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'function':
      return inspectFunction(value);
  }
  if (value === null) return 'null';
  if (isError(value)) {
    const stack = value.stack;
    if (typeof stack === 'string' && stack !== '') return nested ? '[' + stack + ']' : stack;
    return StringCtor(value.name) + ': ' + StringCtor(value.message);
  }
  if (value instanceof CtxDate) {
    try {
      return ReflectApply(dateToISOString, value, []);
    } catch {
      return 'Invalid Date';
    }
  }
  if (value instanceof CtxRegExp) return ReflectApply(regexpToString, value, []);
  for (let i = 0; i < seen.length; i++) if (seen[i] === value) return '[Circular]';
  if (ArrayIsArray(value)) {
    if (value.length === 0) return '[]';
    if (depth > MAX_INSPECT_DEPTH) return '[Array]';
    append(seen, value);
    /** @type {string[]} */
    const parts = [];
    const shown = value.length < MAX_INSPECT_ITEMS ? value.length : MAX_INSPECT_ITEMS;
    for (let i = 0; i < shown; i++) append(parts, inspect(value[i], depth + 1, seen, true));
    if (value.length > shown) append(parts, '... ' + (value.length - shown) + ' more items');
    seen.length = seen.length - 1;
    return '[ ' + parts.join(', ') + ' ]';
  }
  if (value instanceof CtxMap || value instanceof CtxSet) {
    const isMap = value instanceof CtxMap;
    if (depth > MAX_INSPECT_DEPTH) return isMap ? '[Map]' : '[Set]';
    append(seen, value);
    /** @type {string[]} */
    const parts = [];
    const iterator = isMap
      ? ReflectApply(mapEntries, value, [])
      : ReflectApply(setValues, value, []);
    const next = isMap ? mapIteratorNext : setIteratorNext;
    let size = 0;
    for (
      let step = ReflectApply(next, iterator, []);
      !step.done;
      step = ReflectApply(next, iterator, [])
    ) {
      size++;
      if (parts.length >= MAX_INSPECT_ITEMS) continue;
      append(
        parts,
        isMap
          ? inspect(step.value[0], depth + 1, seen, true) +
              ' => ' +
              inspect(step.value[1], depth + 1, seen, true)
          : inspect(step.value, depth + 1, seen, true),
      );
    }
    seen.length = seen.length - 1;
    const head = (isMap ? 'Map(' : 'Set(') + size + ') ';
    return parts.length === 0 ? head + '{}' : head + '{ ' + parts.join(', ') + ' }';
  }
  const keys = ObjectKeys(value);
  if (keys.length === 0) return '{}';
  if (depth > MAX_INSPECT_DEPTH) return '[Object]';
  append(seen, value);
  /** @type {string[]} */
  const parts = [];
  const shown = keys.length < MAX_INSPECT_ITEMS ? keys.length : MAX_INSPECT_ITEMS;
  for (let i = 0; i < shown; i++) {
    const key = /** @type {string} */ (keys[i]);
    let text;
    try {
      text = inspect(value[key], depth + 1, seen, true);
    } catch {
      text = '[unreadable]';
    }
    append(parts, keyText(key) + ': ' + text);
  }
  if (keys.length > shown) {
    append(parts, '... ' + (keys.length - shown) + ' more properties');
  }
  seen.length = seen.length - 1;
  return '{ ' + parts.join(', ') + ' }';
}

/**
 * @param {unknown} value
 * @param {boolean} nested
 */
function inspectSafely(value, nested) {
  try {
    return inspect(value, 0, [], nested);
  } catch (error) {
    return '[uninspectable: ' + messageOf(error) + ']';
  }
}

/**
 * Like console: a first string argument may hold %s %d %i %f %j %o %O %c %%.
 * @param {any[]} args what tool code passed to console.log
 * @returns {string}
 */
export function formatArguments(args) {
  let text = '';
  let next = 0;
  if (typeof args[0] === 'string' && matches(FORMAT_DIRECTIVE, args[0])) {
    const template = args[0];
    next = 1;
    for (let i = 0; i < template.length; i++) {
      const char = template[i];
      if (char !== '%' || i + 1 >= template.length) {
        text += char;
        continue;
      }
      const directive = /** @type {string} */ (template[i + 1]); // i + 1 < template.length
      if (directive === '%') {
        text += '%';
        i++;
        continue;
      }
      if ('sdifjoOc'.indexOf(directive) === -1) {
        text += char;
        continue;
      }
      i++;
      if (next >= args.length) {
        text += '%' + directive;
        continue;
      }
      const arg = args[next++];
      if (directive === 's') text += typeof arg === 'string' ? arg : inspectSafely(arg, true);
      else if (directive === 'd' || directive === 'i')
        text +=
          typeof arg === 'bigint'
            ? StringCtor(arg) + 'n'
            : StringCtor(directive === 'i' ? NumberParseInt(arg) : +arg);
      else if (directive === 'f') text += StringCtor(NumberParseFloat(arg));
      else if (directive === 'j') {
        try {
          text += JSONStringify(arg);
        } catch {
          text += '[Circular]';
        }
      } else if (directive === 'c') {
        /* CSS: ignored, as in Node */
      } else text += inspectSafely(arg, true);
    }
  }
  for (let i = next; i < args.length; i++) {
    if (i > 0) text += ' ';
    text += inspectSafely(args[i], false);
  }
  return text;
}
