/**
 * The error registry (control-plane/errors.ts) holds every code, decides
 * well-formed statuses and JSON-RPC codes, and never lets a hidden message
 * travel; the README's table of codes is the one generated from it (fastify's
 * test/internals/errors.test.js is the model).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ERROR_REGISTRY,
  GENERIC_MESSAGE,
  errorSpecOf,
  jsonRpcErrorOf,
  McphostError,
  type McphostErrorCode,
} from '../../../control-plane/errors.js';
import { errorBody } from '../../../control-plane/http/error-response.js';
import { ERROR_CODES } from '../../../src/protocol/index.js';
import { errorTableMarkdown, readmeErrorTable } from '../../../scripts/error-table.js';

const codes = Object.keys(ERROR_REGISTRY) as McphostErrorCode[];
/** JSON-RPC 2.0's own codes, and the range it leaves to implementations for server errors. */
const JSON_RPC_STANDARD = new Set([-32700, -32600, -32601, -32602, -32603]);
const isServerErrorCode = (code: number) => code <= -32000 && code >= -32099;

describe('the error registry', () => {
  it('has an entry for every code of the stdio wire', () => {
    expect(ERROR_CODES.filter((code) => !Object.hasOwn(ERROR_REGISTRY, code))).toEqual([]);
  });

  it('names every code ERR_ in capitals and is frozen', () => {
    for (const code of codes) expect(code).toMatch(/^ERR_[A-Z][A-Z_]*[A-Z]$/);
    expect(Object.isFrozen(ERROR_REGISTRY)).toBe(true);
    for (const code of codes) expect(Object.isFrozen(ERROR_REGISTRY[code]), code).toBe(true);
  });

  it.each(codes)(
    'gives %s an error status, a JSON-RPC error code and a one-line meaning',
    (code) => {
      const spec = ERROR_REGISTRY[code];
      expect(Number.isInteger(spec.status)).toBe(true);
      expect(spec.status).toBeGreaterThanOrEqual(400);
      expect(spec.status).toBeLessThanOrEqual(599);
      expect(Number.isInteger(spec.jsonRpc)).toBe(true);
      expect(JSON_RPC_STANDARD.has(spec.jsonRpc) || isServerErrorCode(spec.jsonRpc)).toBe(true);
      expect(spec.meaning).toMatch(/^[A-Z`].*\.$/);
      expect(spec.meaning).not.toContain('\n');
    },
  );

  it('treats an unknown code (an old stored row, say) as ERR_INTERNAL', () => {
    expect(errorSpecOf('ERR_FROM_AN_OLDER_VERSION')).toBe(ERROR_REGISTRY.ERR_INTERNAL);
    expect(errorSpecOf('toString')).toBe(ERROR_REGISTRY.ERR_INTERNAL);
  });
});

describe('what a client sees', () => {
  const hidden = codes.filter((code) => !ERROR_REGISTRY[code].exposable);
  const shown = codes.filter((code) => ERROR_REGISTRY[code].exposable);
  const secret = 'connect ECONNREFUSED 10.1.2.3:5432 (postgres://admin:hunter2@db)';

  it('hides at least the failures that may name host details', () => {
    expect(hidden).toEqual(expect.arrayContaining(['ERR_INTERNAL', 'ERR_STORE', 'ERR_CONFIG']));
  });

  it.each(hidden)('never sends the message or details of %s', (code) => {
    const error = new McphostError(code, secret, { details: { dsn: secret } });
    const http = errorBody(error);
    expect(http).toEqual({
      status: ERROR_REGISTRY[code].status,
      body: { error: { code, message: GENERIC_MESSAGE } },
    });
    const rpc = jsonRpcErrorOf(error);
    expect(rpc).toEqual({
      code: ERROR_REGISTRY[code].jsonRpc,
      message: GENERIC_MESSAGE,
      data: { code },
    });
    expect(JSON.stringify([http, rpc])).not.toContain('10.1.2.3');
  });

  it.each(shown)('sends the message and details of %s with its status and codes', (code) => {
    const error = new McphostError(code, 'what went wrong', { details: { field: 'name' } });
    expect(errorBody(error)).toEqual({
      status: ERROR_REGISTRY[code].status,
      body: { error: { code, message: 'what went wrong', details: { field: 'name' } } },
    });
    expect(jsonRpcErrorOf(error)).toEqual({
      code: ERROR_REGISTRY[code].jsonRpc,
      message: 'what went wrong',
      // Where the specification shapes `data` (resource not found: `{uri}`), the details are it.
      data: ERROR_REGISTRY[code].specData
        ? { field: 'name' }
        : { code, details: { field: 'name' } },
    });
  });

  it('answers anything that is not a McphostError as ERR_INTERNAL, saying nothing of it', () => {
    for (const thrown of [new TypeError(secret), secret, { code: 'ERR_NOT_FOUND' }, undefined]) {
      expect(errorBody(thrown)).toEqual({
        status: 500,
        body: { error: { code: 'ERR_INTERNAL', message: GENERIC_MESSAGE } },
      });
      expect(jsonRpcErrorOf(thrown)).toEqual({
        code: -32603,
        message: GENERIC_MESSAGE,
        data: { code: 'ERR_INTERNAL' },
      });
    }
  });
});

describe('the README', () => {
  const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
  const documented = readmeErrorTable(readme) ?? '';
  const documentedCodes = [...documented.matchAll(/^\| `(ERR_[A-Z_]+)` \|/gm)].map(
    (match) => match[1],
  );

  it('documents every code, and no code the registry lacks', () => {
    expect(codes.filter((code) => !documentedCodes.includes(code))).toEqual([]);
    expect(documentedCodes.filter((code) => !Object.hasOwn(ERROR_REGISTRY, code!))).toEqual([]);
  });

  it('lists each code with the status, JSON-RPC code and meaning of the registry', () => {
    // Run `npx tsx scripts/error-table.ts --write` after changing the registry.
    expect(documented).toBe(errorTableMarkdown());
  });
});
