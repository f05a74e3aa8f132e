// @ts-check
/**
 * `crypto` for tool code: getRandomValues, randomUUID, and the part of
 * `crypto.subtle` tools reach for — digest (SHA-1/256/384/512) and HMAC
 * (importKey 'raw', generateKey, exportKey 'raw', sign, verify). The
 * arithmetic is the host's (Node's crypto, through the bridge, bytes as
 * binary strings); what is written here is Web Crypto's argument handling:
 * algorithm normalisation, key objects whose secret the tool cannot read
 * unless it made the key extractable, and the standard's errors.
 */
import {
  CtxPromise,
  CtxTypeError,
  CtxWeakMap,
  ObjectDefineProperty,
  ReflectApply,
  StringCtor,
  append,
  charCodeAt,
  toUpperCase,
  weakMapGet,
  weakMapSet,
} from '../primordials.js';
import { byteLimit, webCall } from '../bridge.js';
import {
  CONSTRUCTING,
  checkConstructing,
  enforceUnsignedLong,
  once,
  platformClasses,
} from '../webidl.js';
import * as bytes from './bytes.js';
import { newDOMException } from './dom-exception.js';

/**
 * @typedef {{ name: 'HMAC', hash: { name: string }, length: number }} HmacAlgorithm
 * @typedef {{
 *   extractable: boolean, hash: string, usages: string[], secret: string,
 *   algorithm: HmacAlgorithm, usagesView: string[],
 * }} KeyState
 * The key's own `hash` and `usages` decide what it may do; `algorithm` and
 * `usagesView` are the objects the tool sees (and may change, to no effect).
 */

/** `crypto` and its classes, created on first need. */
export const webCrypto = once(function () {
  /** The web's limit on one getRandomValues call, in bytes. */
  const MAX_RANDOM_BYTES = 65536;
  /** Digest names, by their upper-case form; the value is the HMAC block size in bits. */
  const DIGESTS = { 'SHA-1': 512, 'SHA-256': 512, 'SHA-384': 1024, 'SHA-512': 1024 };
  const AVAILABLE =
    'digest (SHA-1, SHA-256, SHA-384, SHA-512) and HMAC keys (importKey raw, generateKey, exportKey raw, sign, verify)';

  /**
   * @param {string} message
   * @param {string} name
   */
  function fail(message, name) {
    return newDOMException(message, name);
  }

  /**
   * Runs `work` now and gives its result or its exception as a promise, as every SubtleCrypto method does.
   * @param {() => unknown} work
   */
  function promised(work) {
    return new CtxPromise(function (resolve) {
      resolve(work());
    });
  }

  /**
   * The name of an AlgorithmIdentifier (a string or an object with `name`), read once.
   * @param {unknown} algorithm
   */
  function algorithmName(algorithm) {
    if (typeof algorithm === 'string') return algorithm;
    if (algorithm !== null && typeof algorithm === 'object') {
      const name = /** @type {any} */ (algorithm).name;
      if (name === undefined) throw new CtxTypeError("the algorithm has no 'name'");
      return StringCtor(name);
    }
    throw new CtxTypeError('the algorithm must be a string or an object with a name');
  }

  /** @param {unknown} algorithm */
  function digestName(algorithm) {
    const name = toUpperCase(algorithmName(algorithm));
    if (DIGESTS[/** @type {keyof typeof DIGESTS} */ (name)] === undefined) {
      throw fail('Unrecognized algorithm name; available: ' + AVAILABLE, 'NotSupportedError');
    }
    return name;
  }

  /** @param {unknown} algorithm */
  function requireHmac(algorithm) {
    if (toUpperCase(algorithmName(algorithm)) !== 'HMAC') {
      throw fail('Unrecognized algorithm name; available: ' + AVAILABLE, 'NotSupportedError');
    }
  }

  /**
   * The bytes of a BufferSource argument, copied now, within the bridge's limit.
   * @param {unknown} data
   * @param {string} where
   */
  function dataOf(data, where) {
    const view = bytes.viewOf(data);
    if (view === null) {
      throw new CtxTypeError(
        where + ': the data must be an ArrayBuffer, a typed array or a DataView',
      );
    }
    // Checked before any copy: an oversized buffer costs nothing more here.
    const limit = byteLimit();
    if (view.length > limit) {
      throw fail(
        where +
          ': the data is ' +
          view.length +
          ' bytes, more than the ' +
          limit +
          ' bytes tool code may hand the host at once',
        'QuotaExceededError',
      );
    }
    return bytes.toBinary(view);
  }

  /**
   * An answer of the host that must be a binary string.
   * @param {unknown} answer
   * @param {string} where
   */
  function binaryAnswer(answer, where) {
    if (typeof answer !== 'string') throw fail(where + ' failed', 'OperationError');
    return answer;
  }

  /**
   * The key usages given, each one of `allowed`, not empty (a secret key must be usable).
   * @param {unknown} usages
   * @param {string} where
   */
  function usagesOf(usages, where) {
    if (usages === null || typeof usages !== 'object')
      throw new CtxTypeError(where + ': keyUsages must be an array');
    /** @type {string[]} */
    const list = [];
    for (const usage of /** @type {Iterable<unknown>} */ (usages)) {
      const text = StringCtor(usage);
      if (text !== 'sign' && text !== 'verify') {
        throw fail(
          where + ": an HMAC key's usages can only be 'sign' and 'verify', not '" + text + "'",
          'SyntaxError',
        );
      }
      let seen = false;
      for (let i = 0; i < list.length; i++) if (list[i] === text) seen = true;
      if (!seen) append(list, text);
    }
    if (list.length === 0)
      throw fail(where + ': usages cannot be empty when creating a key', 'SyntaxError');
    return list;
  }

  // ---------------------------------------------------------------- CryptoKey
  /** @type {WeakMap<object, KeyState>} */
  const keys = new CtxWeakMap();

  /**
   * @param {unknown} key
   * @param {string} where
   * @returns {KeyState}
   */
  function keyState(key, where) {
    const state = ReflectApply(weakMapGet, keys, [key]);
    if (state === undefined) throw new CtxTypeError(where + ': the key must be a CryptoKey');
    return state;
  }

  class CryptoKey {
    /** @param {unknown} [key] */
    constructor(key) {
      checkConstructing(key);
    }
    get type() {
      keyState(this, 'CryptoKey.type');
      return 'secret';
    }
    get extractable() {
      return keyState(this, 'CryptoKey.extractable').extractable;
    }
    get algorithm() {
      return keyState(this, 'CryptoKey.algorithm').algorithm;
    }
    get usages() {
      return keyState(this, 'CryptoKey.usages').usagesView;
    }
  }

  /**
   * A new HMAC key holding `secret` (a binary string).
   * @param {string} secret
   * @param {string} hash
   * @param {boolean} extractable
   * @param {string[]} usages
   */
  function hmacKey(secret, hash, extractable, usages) {
    const key = new CryptoKey(CONSTRUCTING);
    /** @type {HmacAlgorithm} */
    const algorithm = { name: 'HMAC', hash: { name: hash }, length: secret.length * 8 };
    /** @type {KeyState} */
    const state = {
      extractable: extractable,
      hash: hash,
      usages: usages,
      secret: secret,
      algorithm: algorithm,
      usagesView: [],
    };
    for (let i = 0; i < usages.length; i++) state.usagesView[i] = /** @type {string} */ (usages[i]);
    ReflectApply(weakMapSet, keys, [key, state]);
    return key;
  }

  /**
   * The hash and declared length of an HmacImportParams / HmacKeyGenParams, read once each.
   * @param {unknown} algorithm
   * @param {string} where
   */
  function hmacParams(algorithm, where) {
    requireHmac(algorithm);
    if (algorithm === null || typeof algorithm !== 'object') {
      throw new CtxTypeError(where + ": HMAC needs {name: 'HMAC', hash}");
    }
    // The dictionary's members in WebIDL's order, each converted as it is
    // read: the required hash, then length, an [EnforceRange] unsigned long
    // whose bad value is a TypeError before the hash's name or the key's
    // size is looked at.
    const hash = /** @type {any} */ (algorithm).hash;
    if (hash === undefined) throw new CtxTypeError(where + ": HMAC needs a 'hash'");
    const given = /** @type {any} */ (algorithm).length;
    const length = given === undefined ? undefined : enforceUnsignedLong(given, where + ': length');
    return { hash: digestName(hash), length: length };
  }

  /**
   * @param {unknown} format
   * @param {string} where
   */
  function requireRaw(format, where) {
    if (format !== 'raw') {
      throw fail(
        where +
          ": only the 'raw' format is available in tool code, not '" +
          StringCtor(format) +
          "'",
        'NotSupportedError',
      );
    }
  }

  // ---------------------------------------------------------------- SubtleCrypto
  /**
   * @param {string} name
   * @returns {() => Promise<unknown>}
   */
  function unavailable(name) {
    return function () {
      return promised(function () {
        throw fail(
          'crypto.subtle.' + name + ' is not available in tool code; available: ' + AVAILABLE,
          'NotSupportedError',
        );
      });
    };
  }

  class SubtleCrypto {
    /** @param {unknown} [key] */
    constructor(key) {
      checkConstructing(key);
    }

    /**
     * @param {unknown} algorithm 'SHA-1' | 'SHA-256' | 'SHA-384' | 'SHA-512' or {name}
     * @param {unknown} data a BufferSource
     */
    digest(algorithm, data) {
      return promised(function () {
        const name = digestName(algorithm);
        const digest = binaryAnswer(
          webCall('digest', name, dataOf(data, 'crypto.subtle.digest')),
          'crypto.subtle.digest',
        );
        return bytes.bufferOf(bytes.fromBinary(digest));
      });
    }

    /**
     * @param {unknown} format 'raw'
     * @param {unknown} keyData a BufferSource
     * @param {unknown} algorithm {name: 'HMAC', hash, length?}
     * @param {unknown} extractable
     * @param {unknown} keyUsages
     */
    importKey(format, keyData, algorithm, extractable, keyUsages) {
      return promised(function () {
        requireRaw(format, 'crypto.subtle.importKey');
        const params = hmacParams(algorithm, 'crypto.subtle.importKey');
        const usages = usagesOf(keyUsages, 'crypto.subtle.importKey');
        const secret = dataOf(keyData, 'crypto.subtle.importKey');
        if (secret.length === 0)
          throw fail('crypto.subtle.importKey: the key is empty', 'DataError');
        if (params.length !== undefined && params.length !== secret.length * 8) {
          throw fail(
            "crypto.subtle.importKey: length must be the key data's length in bits (" +
              secret.length * 8 +
              ')',
            'DataError',
          );
        }
        return hmacKey(secret, params.hash, !!extractable, usages);
      });
    }

    /**
     * @param {unknown} algorithm {name: 'HMAC', hash, length?}
     * @param {unknown} extractable
     * @param {unknown} keyUsages
     */
    generateKey(algorithm, extractable, keyUsages) {
      return promised(function () {
        const params = hmacParams(algorithm, 'crypto.subtle.generateKey');
        const usages = usagesOf(keyUsages, 'crypto.subtle.generateKey');
        const bits =
          params.length === undefined
            ? DIGESTS[/** @type {keyof typeof DIGESTS} */ (params.hash)]
            : params.length;
        if (!(bits > 0 && bits % 8 === 0 && bits <= MAX_RANDOM_BYTES * 8)) {
          throw fail(
            'crypto.subtle.generateKey: length must be a positive multiple of 8 bits',
            'OperationError',
          );
        }
        const secret = binaryAnswer(webCall('random', bits / 8), 'crypto.subtle.generateKey');
        return hmacKey(secret, params.hash, !!extractable, usages);
      });
    }

    /**
     * @param {unknown} format 'raw'
     * @param {unknown} key
     */
    exportKey(format, key) {
      return promised(function () {
        requireRaw(format, 'crypto.subtle.exportKey');
        const state = keyState(key, 'crypto.subtle.exportKey');
        if (!state.extractable)
          throw fail('crypto.subtle.exportKey: the key is not extractable', 'InvalidAccessError');
        return bytes.bufferOf(bytes.fromBinary(state.secret));
      });
    }

    /**
     * @param {unknown} algorithm 'HMAC' or {name: 'HMAC'}
     * @param {unknown} key
     * @param {unknown} data
     */
    sign(algorithm, key, data) {
      return promised(function () {
        return bytes.bufferOf(bytes.fromBinary(mac(algorithm, key, data, 'sign')));
      });
    }

    /**
     * @param {unknown} algorithm 'HMAC' or {name: 'HMAC'}
     * @param {unknown} key
     * @param {unknown} signature
     * @param {unknown} data
     */
    verify(algorithm, key, signature, data) {
      return promised(function () {
        const given = bytes.copyOf(signature);
        if (given === null) {
          throw new CtxTypeError(
            'crypto.subtle.verify: the signature must be an ArrayBuffer, a typed array or a DataView',
          );
        }
        const expected = mac(algorithm, key, data, 'verify');
        if (given.length !== expected.length) return false;
        // Constant time in the bytes: every byte is compared whatever the first difference.
        let difference = 0;
        for (let i = 0; i < expected.length; i++) {
          difference |= /** @type {number} */ (given[i]) ^ (charCodeAt(expected, i) & 0xff);
        }
        return difference === 0;
      });
    }
  }
  const UNAVAILABLE = ['encrypt', 'decrypt', 'deriveBits', 'deriveKey', 'wrapKey', 'unwrapKey'];
  for (let i = 0; i < UNAVAILABLE.length; i++) {
    const name = /** @type {string} */ (UNAVAILABLE[i]);
    ObjectDefineProperty(SubtleCrypto.prototype, name, {
      value: unavailable(name),
      writable: true,
      configurable: true,
    });
  }

  /**
   * The HMAC of `data` under `key` as a binary string, after the checks sign and verify share.
   * @param {unknown} algorithm
   * @param {unknown} key
   * @param {unknown} data
   * @param {'sign' | 'verify'} usage
   */
  function mac(algorithm, key, data, usage) {
    const where = 'crypto.subtle.' + usage;
    requireHmac(algorithm);
    const state = keyState(key, where);
    let allowed = false;
    for (let i = 0; i < state.usages.length; i++) if (state.usages[i] === usage) allowed = true;
    if (!allowed)
      throw fail(where + ": the key's usages do not include '" + usage + "'", 'InvalidAccessError');
    return binaryAnswer(webCall('hmac', state.hash, state.secret, dataOf(data, where)), where);
  }

  // ---------------------------------------------------------------- Crypto
  const subtle = new SubtleCrypto(CONSTRUCTING);

  class Crypto {
    /** @param {unknown} [key] */
    constructor(key) {
      checkConstructing(key);
    }

    get subtle() {
      return subtle;
    }

    /**
     * Fills an integer typed array with random bytes and returns it.
     * @template T
     * @param {T} array
     * @returns {T}
     */
    getRandomValues(array) {
      if (!bytes.isIntegerTypedArray(array)) {
        throw fail(
          'crypto.getRandomValues: the argument must be an integer typed array',
          'TypeMismatchError',
        );
      }
      const view = bytes.viewOf(array);
      if (view === null) {
        // A view over a SharedArrayBuffer: the web refuses those too.
        throw fail(
          'crypto.getRandomValues: the argument must not be a view of a SharedArrayBuffer',
          'TypeMismatchError',
        );
      }
      if (view.length > MAX_RANDOM_BYTES) {
        throw fail(
          "crypto.getRandomValues: the ArrayBufferView's byte length (" +
            view.length +
            ') exceeds the number of bytes of entropy available via this API (' +
            MAX_RANDOM_BYTES +
            ')',
          'QuotaExceededError',
        );
      }
      if (view.length === 0) return array;
      const random = binaryAnswer(webCall('random', view.length), 'crypto.getRandomValues');
      const filled = bytes.fromBinary(random);
      for (let i = 0; i < view.length; i++) view[i] = /** @type {number} */ (filled[i]);
      return array;
    }

    /** A random version 4 UUID. */
    randomUUID() {
      return binaryAnswer(webCall('uuid'), 'crypto.randomUUID');
    }
  }

  platformClasses(Crypto, SubtleCrypto, CryptoKey);
  return {
    crypto: new Crypto(CONSTRUCTING),
    Crypto: Crypto,
    SubtleCrypto: SubtleCrypto,
    CryptoKey: CryptoKey,
  };
});
