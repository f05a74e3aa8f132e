/**
 * What the audit log keeps of a record: the record with every secret taken
 * out. Values that are secrets by their name (a secret's value, passwords,
 * tokens, keys) are dropped; program text (a tool's, prompt's, resource
 * template's or completion's `code`), contents and long text become their
 * length and SHA-256, which tells that (and whether) it changed without
 * keeping it; an error's `code` (`ERR_TOOL_TIMEOUT`, a JSON-RPC number) is
 * kept as it is; the whole summary is bounded in size.
 */
import { createHash } from 'node:crypto';
import { ERROR_REGISTRY } from '../errors.js';

/** Fields that hold a secret or a credential wherever they appear, lower case (matched so). */
const SECRET_FIELDS = new Set([
  'value',
  'password',
  'passwordhash',
  'token',
  'key',
  'apikey',
  'secret',
  'csrftoken',
  'authorization',
  'cookie',
  'clientsecret',
  'client_secret',
  'accesstoken',
  'access_token',
  'refreshtoken',
  'refresh_token',
  'privatekey',
]);
/** Fields that hold contents: kept as length and hash. */
const DIGESTED_FIELDS = new Set(['text', 'blob', 'contents', 'result', 'content']);
/** Longer strings are digested whatever their name. */
const LONGEST_KEPT_STRING = 256;
/** Deepest nesting kept. */
const MAX_DEPTH = 6;
/** Largest summary, as JSON, in characters; a larger one is replaced by a note. */
const MAX_SUMMARY_CHARACTERS = 16_384;

/** A record as the audit log may keep it. */
export function auditSummaryOf(value: unknown): unknown {
  const summary = strip(value, 0);
  const text = JSON.stringify(summary) ?? '';
  return text.length > MAX_SUMMARY_CHARACTERS
    ? { omitted: `${text.length} characters of summary`, sha256: sha256(text) }
    : summary;
}

function strip(value: unknown, depth: number): unknown {
  if (typeof value === 'string') {
    return value.length > LONGEST_KEPT_STRING ? digest(value) : value;
  }
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return '…';
  if (Array.isArray(value)) return value.map((item) => strip(item, depth + 1));
  const kept: Record<string, unknown> = {};
  for (const [field, item] of Object.entries(value as Record<string, unknown>)) {
    // A flag (an account's `password: true`) says that one exists, not what it is: kept.
    if (SECRET_FIELDS.has(field.toLowerCase()) && typeof item !== 'boolean') continue;
    kept[field] =
      (DIGESTED_FIELDS.has(field) && item !== null && item !== undefined) ||
      (field === 'code' && isProgramText(item))
        ? digest(typeof item === 'string' ? item : (JSON.stringify(item) ?? ''))
        : strip(item, depth + 1);
  }
  return kept;
}

/**
 * True for the `code` of a tool or entry: program text, always a string. An
 * error's `code` is a registry name or a JSON-RPC number, never program
 * text: tool code that is just such a name tells nothing worth hiding.
 */
function isProgramText(code: unknown): code is string {
  return typeof code === 'string' && !Object.hasOwn(ERROR_REGISTRY, code);
}

function digest(text: string): { bytes: number; sha256: string } {
  return { bytes: Buffer.byteLength(text), sha256: sha256(text) };
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
