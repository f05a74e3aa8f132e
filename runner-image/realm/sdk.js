// @ts-check
/**
 * The `sdk` object tool code is handed: `sdk.http` and `sdk.db` (brokered
 * calls), `sdk.lodash` (evaluated in this realm on first use), and the parts
 * content.js and client.js make. Frozen before any tool code runs.
 */
import {
  JSONParse,
  JSONStringify,
  ObjectDefineProperty,
  ObjectFreeze,
  contextGlobal,
  then,
} from './primordials.js';
import { bridge } from './bridge.js';
import { callHost } from './calls.js';
import { caller } from './caller.js';
import { client, closeStream, elicit, progress, roots, sample } from './client.js';
import { content } from './content.js';
import { makeError, rejected } from './errors.js';

/** The context's global, as the untyped bag of properties it is to us. */
const G = /** @type {Record<string, unknown>} */ (contextGlobal);

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

/** Evaluates lodash now (while idle), so the tool's first sdk.lodash costs nothing. */
export function preloadLodash() {
  lodash();
}

export const sdk = {
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
  get: client,
});
ObjectDefineProperty(sdk, 'caller', {
  enumerable: true,
  configurable: false,
  get: caller,
});

ObjectFreeze(sdk);
