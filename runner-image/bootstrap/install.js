// @ts-check
/**
 * The code that runs inside every tool context before tool code does. The
 * harness never imports it: the build writes its text (with the other
 * bootstrap files', see scripts/build-harness.ts) into context-scripts.json,
 * and tool-context.ts compiles that text in the context's realm, so every object and function tool code can
 * reach is created here, in that realm. It must therefore name no Node or host
 * global (eslint.config.js holds it to the language's own).
 *
 * It receives ONE host function (the bridge) and keeps it in a closure; it
 * calls it directly (never through a property tool code could replace) and
 * only with primitives. The bridge returns primitives only. Intrinsics are
 * captured before tool code runs, so tool code that replaces JSON.stringify or
 * Promise.prototype.then only confuses itself.
 *
 * Evaluating the built text yields `install(bridge)`, which returns the context
 * API the host drives (see `ContextApi` in tool-context.ts).
 */
/* exported bootstrap */

/** @typedef {import('../tool-context.js').HostBridge} HostBridge */
/** @typedef {import('../tool-context.js').ContextApi} ContextApi */
/** @typedef {[resolve: (value: unknown) => void, reject: (error: unknown) => void]} PendingCall */
/** @typedef {[callback: Function, args: unknown[], repeat: boolean]} Timer */
/**
 * What the web platform's installer gets from the bootstrap: the one way to
 * the host, brokered calls, and errors made in this realm.
 * @typedef {{
 *   bridge: (kind: string, a?: string | number | boolean, b?: string | number | boolean, c?: string | number, d?: string | number) => unknown,
 *   callHost: (op: string, args: unknown) => Promise<unknown>,
 *   makeError: (code: string, message: string) => Error,
 *   messageOf: (error: unknown) => string,
 *   adoptCallFailure: (failure: object, cause: unknown) => void,
 * }} WebPlatformHost
 */

/**
 * Takes the console formatter (console-format.js) and the web platform's
 * installer (web-platform.js) and returns `install`.
 * @param {(messageOf: (error: unknown) => string) => (args: unknown[]) => string} createConsoleFormatter
 * @param {(global: Record<string, unknown>, host: WebPlatformHost) => void} installWebPlatform
 * @returns {(hostBridge: HostBridge) => ContextApi}
 */
function bootstrap(createConsoleFormatter, installWebPlatform) {
  'use strict';
  return function install(hostBridge) {
    /** The context's global, as the untyped bag of properties it is to us. */
    const G = /** @type {Record<string, unknown>} */ (globalThis);
    const ObjectCreate = Object.create;
    const ObjectFreeze = Object.freeze;
    const ObjectKeys = Object.keys;
    const ObjectDefineProperty = Object.defineProperty;
    const ReflectApply = Reflect.apply;
    const ArrayIsArray = Array.isArray;
    const JSONStringify = JSON.stringify;
    const JSONParse = JSON.parse;
    const CtxPromise = Promise;
    const promiseThen = Promise.prototype.then;
    const promiseResolve = Promise.resolve;
    const promiseReject = Promise.reject;
    const CtxError = Error;
    const CtxTypeError = TypeError;
    const CtxRangeError = RangeError;
    const StringCtor = String;
    const regexpExec = RegExp.prototype.exec;
    const CtxWeakMap = WeakMap;
    const weakMapGet = WeakMap.prototype.get;
    const weakMapSet = WeakMap.prototype.set;
    const TOOL_FRAME = /tool\.js:(\d+):(\d+)/;
    const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

    /**
     * The one way to the host. What the host threw (only a stack overflow can
     * reach here) is never shown: it is a host object.
     * @param {string} kind
     * @param {string | number | boolean} [a]
     * @param {string | number | boolean} [b]
     * @param {string | number} [c]
     * @param {string | number} [d]
     */
    function bridge(kind, a, b, c, d) {
      try {
        return hostBridge(kind, a, b, c, d);
      } catch {
        throw new CtxRangeError('Maximum call stack size exceeded');
      }
    }

    /**
     * `promise.then(...)` through the captured `then`.
     * @param {unknown} promise
     * @param {((value: any) => unknown) | undefined} onFulfilled
     * @param {(error: unknown) => unknown} [onRejected]
     * @returns {Promise<any>}
     */
    function then(promise, onFulfilled, onRejected) {
      return ReflectApply(promiseThen, promise, [onFulfilled, onRejected]);
    }

    /**
     * @param {string} code
     * @param {string} message
     */
    function makeError(code, message) {
      const error = new CtxError(message);
      ObjectDefineProperty(error, 'code', {
        value: code,
        writable: true,
        enumerable: true,
        configurable: true,
      });
      return error;
    }

    /**
     * @param {string} code
     * @param {string} message
     * @returns {Promise<never>}
     */
    function rejected(code, message) {
      return ReflectApply(promiseReject, CtxPromise, [makeError(code, message)]);
    }

    /** @param {any} error anything tool code threw; read defensively */
    function messageOf(error) {
      try {
        if (error !== null && typeof error === 'object' && typeof error.message === 'string') {
          return error.message;
        }
        return StringCtor(error);
      } catch {
        return 'a value that cannot be described';
      }
    }

    const formatArguments = createConsoleFormatter(messageOf);

    // ---------------------------------------------------------------- failed calls
    /**
     * The error objects failed replies were delivered as (and fetch's errors
     * made from them), with the reply's code. Thrown uncaught, such an error
     * fails the invocation with that code; its `code` property is tool code's
     * to change and is never what decides. The host checks the code again.
     */
    const callFailures = new CtxWeakMap();

    /**
     * @param {object} error
     * @param {string} code
     */
    function markCallFailure(error, code) {
      ReflectApply(weakMapSet, callFailures, [error, code]);
    }

    /**
     * The reply's code when `error` is the very object a failed call was rejected with.
     * @param {unknown} error
     * @returns {string | undefined}
     */
    function callFailureCode(error) {
      if (error === null || (typeof error !== 'object' && typeof error !== 'function')) {
        return undefined;
      }
      const code = ReflectApply(weakMapGet, callFailures, [error]);
      return typeof code === 'string' ? code : undefined;
    }

    /**
     * Gives `failure` (an error made from a failed call's, as fetch's TypeError
     * is) the code of `cause`, when `cause` is one.
     * @param {object} failure
     * @param {unknown} cause
     */
    function adoptCallFailure(failure, cause) {
      const code = callFailureCode(cause);
      if (code !== undefined) markCallFailure(failure, code);
    }

    // ---------------------------------------------------------------- brokered calls
    let closed = false;
    /** @type {Record<number, PendingCall>} */
    const pending = ObjectCreate(null);

    /**
     * @param {string} op
     * @param {unknown} args
     * @returns {Promise<unknown>}
     */
    function callHost(op, args) {
      let argsJson;
      try {
        argsJson = JSONStringify(args);
      } catch (error) {
        return rejected(
          'ERR_INVALID_ARGUMENT',
          'arguments of ' + op + ' are not JSON-serialisable: ' + messageOf(error),
        );
      }
      if (typeof argsJson !== 'string') {
        return rejected('ERR_INVALID_ARGUMENT', 'arguments of ' + op + ' are missing');
      }
      return new CtxPromise(function (resolve, reject) {
        if (closed) {
          reject(makeError('ERR_CANCELLED', 'the invocation has ended'));
          return;
        }
        const id = bridge('call', op, argsJson);
        if (typeof id !== 'number') {
          reject(makeError('ERR_CANCELLED', 'the invocation has ended'));
          return;
        }
        // A negative id is minus the largest line the host may send: these arguments are over it.
        if (id < 0) {
          reject(
            makeError(
              'ERR_INVALID_ARGUMENT',
              'arguments of ' +
                op +
                ' are too large: more than ' +
                -id +
                ' bytes once encoded as JSON; send less (a smaller body, fewer or smaller values)',
            ),
          );
          return;
        }
        pending[id] = [resolve, reject];
      });
    }

    /**
     * @param {number} id
     * @param {boolean} ok
     * @param {string} payload
     * @param {string} code
     */
    function settle(id, ok, payload, code) {
      const entry = pending[id];
      if (entry === undefined) return false;
      delete pending[id];
      if (!ok) {
        const failure = makeError(code, payload);
        markCallFailure(failure, code);
        entry[1](failure);
        return true;
      }
      let value;
      try {
        value = JSONParse(payload);
      } catch (error) {
        entry[1](makeError('ERR_INTERNAL', 'the reply could not be read: ' + messageOf(error)));
        return true;
      }
      entry[0](value);
      return true;
    }

    /** @param {{ status: number, body: string, headers: unknown }} value what the host's http call answered */
    function toResponse(value) {
      const status = value.status;
      const body = value.body;
      const headers = value.headers;
      return ObjectFreeze({
        status: function status_() {
          return status;
        },
        body: function body_() {
          return body;
        },
        headers: function headers_() {
          return JSONParse(JSONStringify(headers));
        },
        json: function json() {
          return JSONParse(body);
        },
      });
    }

    /** @param {any} request what tool code passed to sdk.http; read defensively */
    function http(request) {
      if (request === null || typeof request !== 'object') {
        return rejected(
          'ERR_INVALID_ARGUMENT',
          'sdk.http expects an object {method, url, headers?, body?}',
        );
      }
      const args = {
        method: request.method,
        url: request.url,
        headers: request.headers,
        body: request.body,
      };
      return then(callHost('http', args), toResponse);
    }

    /** @param {any} target what tool code passed to sdk.db; read defensively */
    function db(target) {
      if (target === null || typeof target !== 'object') {
        throw makeError('ERR_INVALID_ARGUMENT', 'sdk.db expects an object {type, connection}');
      }
      const type = target.type;
      const connection = target.connection;
      return ObjectFreeze({
        /**
         * @param {unknown} table
         * @param {unknown} where
         */
        select: function select(table, where) {
          return callHost('db.select', {
            type: type,
            connection: connection,
            table: table,
            where: where === undefined ? {} : where,
          });
        },
        /**
         * @param {unknown} table
         * @param {unknown} row
         */
        insert: function insert(table, row) {
          return callHost('db.insert', {
            type: type,
            connection: connection,
            table: table,
            row: row,
          });
        },
        /**
         * @param {unknown} sql
         * @param {unknown} values
         */
        query: function query(sql, values) {
          return callHost('db.query', {
            type: type,
            connection: connection,
            sql: sql,
            values: values === undefined ? [] : values,
          });
        },
      });
    }

    // lodash is evaluated in this context on first use (2–7 ms of CPU): most tools
    // never touch it, and those that do get it evaluated ahead, while idle (see
    // ToolContextFactory.create).
    /** @type {unknown} */
    let lodashValue;
    function lodash() {
      if (lodashValue === undefined) {
        G.self = G; // lodash looks for a global 'self' to attach to
        bridge('lodash');
        lodashValue = G._;
        delete G._;
        delete G.self;
      }
      return lodashValue;
    }
    // ---------------------------------------------------------------- rich results
    // Blocks made here are remembered (a WeakSet of this realm): a returned
    // block, or an array of them, becomes MCP content. A look-alike plain object
    // is ordinary JSON data, as before. The host checks every block again.
    const contentBlocks = new WeakSet();
    const weakSetAdd = WeakSet.prototype.add;
    const weakSetHas = WeakSet.prototype.has;
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
      if (typeof value !== 'string' || ReflectApply(regexpExec, pattern, [value]) === null) {
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
    function blocksJson(blocks) {
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

    const content = ObjectFreeze({
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
    function contentOf(value) {
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

    // ---------------------------------------------------------------- the calling client
    let lastProgress = -Infinity;

    /**
     * @param {unknown} progress
     * @param {unknown} total
     * @param {unknown} message
     */
    function progress(progress, total, message) {
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
    function elicit(message, requestedSchema, options) {
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
    function sample(request, options) {
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
    function roots(options) {
      return callHost('client.roots', { key: keyOf('sdk.roots', options) });
    }

    /** What the calling client declared (`sdk.client`); null in a test run. Set by start. */
    let callingClient = /** @type {unknown} */ (null);

    /**
     * Asks the control plane to end the HTTP response carrying this call now,
     * while the call goes on: a client that can resume (SEP-1699) reconnects
     * and gets the rest, the result included. Advisory, so it never throws and
     * returns nothing; only its first call in an invocation is sent.
     */
    function closeStream() {
      try {
        bridge('closeStream');
      } catch {
        // Only a stack overflow reaches here; a hint is not worth failing the tool for.
      }
    }

    const sdk = {
      http: http,
      db: db,
      content: content,
      progress: progress,
      elicit: elicit,
      sample: sample,
      roots: roots,
      closeStream: closeStream,
    };
    ObjectDefineProperty(sdk, 'lodash', { enumerable: true, configurable: false, get: lodash });
    ObjectDefineProperty(sdk, 'client', {
      enumerable: true,
      configurable: false,
      get: function client() {
        return callingClient;
      },
    });

    // ---------------------------------------------------------------- console
    /** @param {string} level */
    function logger(level) {
      return function () {
        const args = [];
        for (let i = 0; i < arguments.length; i++) args[i] = arguments[i];
        bridge('log', level, formatArguments(args));
      };
    }

    const toolConsole = ObjectFreeze({
      log: logger('log'),
      info: logger('info'),
      warn: logger('warn'),
      error: logger('error'),
      debug: logger('debug'),
      trace: logger('debug'),
      dir: logger('log'),
    });

    // ---------------------------------------------------------------- timers
    /** @type {Record<number, Timer>} */
    const timers = ObjectCreate(null);

    /**
     * @param {unknown} callback
     * @param {any} delay milliseconds, converted as `+delay` converts them
     * @param {unknown[]} args
     * @param {boolean} repeat
     */
    function startTimer(callback, delay, args, repeat) {
      if (typeof callback !== 'function') {
        throw new CtxTypeError('The "callback" argument must be of type function');
      }
      let ms = +delay;
      if (!(ms >= 1 && ms <= 2147483647)) ms = 1;
      const id = bridge('timer', ms, repeat);
      if (typeof id !== 'number') return 0;
      timers[id] = [callback, args, repeat];
      return id;
    }

    /** @param {unknown} id */
    function stopTimer(id) {
      if (typeof id !== 'number' || timers[id] === undefined) return;
      delete timers[id];
      bridge('clear', id);
    }

    /**
     * @param {IArguments} args
     * @param {number} from
     */
    function restArguments(args, from) {
      const rest = [];
      for (let i = from; i < args.length; i++) rest[rest.length] = args[i];
      return rest;
    }

    /**
     * @param {unknown} callback
     * @param {unknown} delay
     */
    G.setTimeout = function setTimeout(callback, delay) {
      return startTimer(callback, delay, restArguments(arguments, 2), false);
    };
    /**
     * @param {unknown} callback
     * @param {unknown} delay
     */
    G.setInterval = function setInterval(callback, delay) {
      return startTimer(callback, delay, restArguments(arguments, 2), true);
    };
    /** @param {unknown} id */
    G.clearTimeout = function clearTimeout(id) {
      stopTimer(id);
    };
    /** @param {unknown} id */
    G.clearInterval = function clearInterval(id) {
      stopTimer(id);
    };
    /** @param {unknown} callback */
    G.queueMicrotask = function queueMicrotask(callback) {
      if (typeof callback !== 'function') {
        throw new CtxTypeError('The "callback" argument must be of type function');
      }
      then(ReflectApply(promiseResolve, CtxPromise, []), function () {
        callback();
      });
    };

    /** @param {number} id */
    function fire(id) {
      const timer = timers[id];
      if (timer === undefined || closed) return;
      if (!timer[2]) delete timers[id];
      try {
        ReflectApply(timer[0], undefined, timer[1]);
      } catch (error) {
        fail(error);
      }
    }

    // ---------------------------------------------------------------- the result
    /** @param {string} key */
    function pathKey(key) {
      return ReflectApply(regexpExec, IDENTIFIER, [key]) !== null
        ? '.' + key
        : '[' + JSONStringify(key) + ']';
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
      stack[stack.length] = value;
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
    function settleWith(value) {
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
          'result is ' +
            what +
            '; return JSON data (object, array, string, number, boolean or null)',
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
    function fail(thrown) {
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

    // ---------------------------------------------------------------- the API the host drives
    /**
     * @param {unknown} tool
     * @param {string} paramsJson
     * @param {string} envJson
     * @param {string} clientJson
     */
    function start(tool, paramsJson, envJson, clientJson) {
      const params = JSONParse(paramsJson);
      const env = ObjectFreeze(JSONParse(envJson));
      callingClient = deepFreeze(JSONParse(clientJson));
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

    /**
     * Freezes a parsed JSON value through and through: `sdk.client` is what the
     * client said, and no tool code may rewrite it for the code after it.
     * @param {unknown} value
     * @returns {unknown}
     */
    function deepFreeze(value) {
      if (value !== null && typeof value === 'object') {
        const keys = ObjectKeys(value);
        for (let i = 0; i < keys.length; i++) {
          deepFreeze(
            /** @type {Record<string, unknown>} */ (value)[/** @type {string} */ (keys[i])],
          );
        }
        ObjectFreeze(value);
      }
      return value;
    }

    function cancel() {
      closed = true;
      const ids = ObjectKeys(timers);
      for (let i = 0; i < ids.length; i++) delete timers[/** @type {any} */ (ids[i])];
      const calls = ObjectKeys(pending);
      for (let i = 0; i < calls.length; i++) {
        const key = /** @type {any} */ (calls[i]);
        const entry = /** @type {PendingCall} */ (pending[key]);
        delete pending[key];
        entry[1](makeError('ERR_CANCELLED', 'the invocation was cancelled'));
      }
    }

    ObjectFreeze(sdk);

    installWebPlatform(G, {
      bridge: bridge,
      callHost: callHost,
      makeError: makeError,
      messageOf: messageOf,
      adoptCallFailure: adoptCallFailure,
    });

    // What the engine settles on its own schedule, outside the drains the host
    // controls (see tool-context.ts): a FinalizationRegistry callback would run
    // tool code after its invocation ended; a timed-out Atomics.waitAsync, or the
    // refusal of WebAssembly.compile (code generation is off), would settle after
    // the drain and leave the tool waiting for one that never comes.
    delete G.FinalizationRegistry;
    delete G.WebAssembly;
    if (typeof Atomics === 'object') {
      delete (/** @type {{ waitAsync?: unknown }} */ (Atomics).waitAsync);
    }

    /** Evaluates lodash now (while idle), so the tool's first sdk.lodash costs nothing. */
    function preloadLodash() {
      lodash();
    }

    return ObjectFreeze({
      start: start,
      settle: settle,
      fire: fire,
      cancel: cancel,
      preloadLodash: preloadLodash,
    });
  };
}
