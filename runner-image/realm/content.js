// @ts-check
/**
 * Rich results (`sdk.content`): blocks made here are remembered (a WeakSet of
 * this realm), so a returned block, or an array of them, becomes MCP content.
 * A look-alike plain object is ordinary JSON data, as before. The host checks
 * every block again.
 */
import {
  ArrayIsArray,
  CtxTypeError,
  CtxWeakSet,
  JSONStringify,
  ObjectFreeze,
  ReflectApply,
  matches,
  weakSetAdd,
  weakSetHas,
} from './primordials.js';

const contentBlocks = new CtxWeakSet();
const MIME_TYPE = /^[\w.+-]+\/[\w.+-]+(?:\s*;.*)?$/;
const ABSOLUTE_URI = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/** @param {Record<string, unknown>} fields */
function contentBlock(fields) {
  const block = ObjectFreeze(fields);
  ReflectApply(weakSetAdd, contentBlocks, [block]);
  return block;
}

/** @param {unknown} value */
function isContentBlock(value) {
  return (
    value !== null &&
    typeof value === 'object' &&
    ReflectApply(weakSetHas, contentBlocks, [value]) === true
  );
}

/**
 * @param {string} where
 * @param {unknown} value
 * @param {RegExp} pattern
 * @param {string} what
 */
function checkText(where, value, pattern, what) {
  if (typeof value !== 'string' || !matches(pattern, value)) {
    throw new CtxTypeError(where + ' must be ' + what);
  }
  return value;
}

/**
 * Standard base64 with padding, checked by a loop: a regular expression
 * with a repeated group overflows the stack on megabytes of data.
 * @param {string} where
 * @param {unknown} value
 */
function checkBase64(where, value) {
  let valid = typeof value === 'string' && value.length % 4 === 0;
  if (valid) {
    const text = /** @type {string} */ (value);
    const length = text.length;
    const padding =
      length > 0 && text.charCodeAt(length - 1) === 61
        ? length > 1 && text.charCodeAt(length - 2) === 61
          ? 2
          : 1
        : 0;
    for (let i = 0; i < length - padding && valid; i++) {
      const code = text.charCodeAt(i);
      valid =
        (code >= 65 && code <= 90) ||
        (code >= 97 && code <= 122) ||
        (code >= 48 && code <= 57) ||
        code === 43 ||
        code === 47;
    }
  }
  if (!valid) throw new CtxTypeError(where + ' must be base64 text (btoa gives it)');
  return /** @type {string} */ (value);
}

/**
 * The JSON of blocks made here, written field by field: JSON.stringify of
 * the objects would consult a `toJSON` tool code put on Object.prototype;
 * of a primitive string it consults nothing.
 * @param {unknown[]} blocks frozen blocks of this realm (see contentBlock)
 */
export function blocksJson(blocks) {
  let json = '[';
  for (let i = 0; i < blocks.length; i++) {
    const block = /** @type {Record<string, any>} */ (blocks[i]);
    if (i > 0) json += ',';
    json += '{"type":' + JSONStringify(block.type);
    if (block.type === 'text') {
      json += ',"text":' + JSONStringify(block.text);
    } else if (block.type === 'resource') {
      const contents = block.resource;
      json += ',"resource":{"uri":' + JSONStringify(contents.uri);
      if (contents.mimeType !== undefined)
        json += ',"mimeType":' + JSONStringify(contents.mimeType);
      json +=
        contents.text !== undefined
          ? ',"text":' + JSONStringify(contents.text)
          : ',"blob":' + JSONStringify(contents.blob);
      json += '}';
    } else {
      json +=
        ',"data":' + JSONStringify(block.data) + ',"mimeType":' + JSONStringify(block.mimeType);
    }
    json += '}';
  }
  return json + ']';
}

/**
 * @param {'image' | 'audio'} type
 * @param {unknown} data
 * @param {unknown} mimeType
 */
function mediaBlock(type, data, mimeType) {
  const where = 'sdk.content.' + type;
  return contentBlock({
    type: type,
    data: checkBase64(where + ': data', data),
    mimeType: checkText(where + ': mimeType', mimeType, MIME_TYPE, 'a MIME type'),
  });
}

export const content = ObjectFreeze({
  /** @param {unknown} text */
  text: function text(text) {
    if (typeof text !== 'string') throw new CtxTypeError('sdk.content.text expects a string');
    return contentBlock({ type: 'text', text: text });
  },
  /**
   * @param {unknown} data
   * @param {unknown} mimeType
   */
  image: function image(data, mimeType) {
    return mediaBlock('image', data, mimeType);
  },
  /**
   * @param {unknown} data
   * @param {unknown} mimeType
   */
  audio: function audio(data, mimeType) {
    return mediaBlock('audio', data, mimeType);
  },
  /** @param {any} resource {uri, mimeType?, text | blob}; read defensively */
  resource: function resource(resource) {
    const where = 'sdk.content.resource';
    if (resource === null || typeof resource !== 'object') {
      throw new CtxTypeError(where + ' expects {uri, mimeType?, text | blob}');
    }
    const uri = checkText(where + ': uri', resource.uri, ABSOLUTE_URI, 'an absolute URI');
    const mimeType = resource.mimeType;
    const text = resource.text;
    const blob = resource.blob;
    if ((text === undefined) === (blob === undefined)) {
      throw new CtxTypeError(where + ' needs exactly one of text and blob');
    }
    /** @type {Record<string, unknown>} */
    const contents = { uri: uri };
    if (mimeType !== undefined) {
      contents.mimeType = checkText(where + ': mimeType', mimeType, MIME_TYPE, 'a MIME type');
    }
    if (text !== undefined) {
      if (typeof text !== 'string') throw new CtxTypeError(where + ': text must be a string');
      contents.text = text;
    } else {
      contents.blob = checkBase64(where + ': blob', blob);
    }
    return contentBlock({ type: 'resource', resource: ObjectFreeze(contents) });
  },
});

/**
 * The blocks a result stands for, or null when it is ordinary data; an
 * array mixing blocks with other values is refused rather than guessed at.
 * @param {unknown} value
 * @returns {unknown[] | null}
 */
export function contentOf(value) {
  if (isContentBlock(value)) return [value];
  if (!ArrayIsArray(value) || value.length === 0) return null;
  // Each element is read once, into an array of our own: a getter cannot
  // answer a block to this check and something else to the serialiser.
  const items = [];
  const length = value.length;
  let blocks = 0;
  for (let i = 0; i < length; i++) {
    const item = value[i];
    items[i] = item;
    if (isContentBlock(item)) blocks++;
  }
  if (blocks === 0) return null;
  if (blocks < length) {
    throw new CtxTypeError(
      'the result mixes sdk.content blocks with other values; wrap text in sdk.content.text(...)',
    );
  }
  return items;
}
