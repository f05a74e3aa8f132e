/**
 * What the audit log keeps of a record (auditSummaryOf): secret-named fields
 * dropped wherever they sit, program code and contents as length and SHA-256
 * (an error's code kept as it is), long
 * strings digested whatever their name, nesting and size bounded.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { auditSummaryOf } from '../../../control-plane/admin/audit-summary.js';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const digestOf = (text: string) => ({ bytes: Buffer.byteLength(text), sha256: sha256(text) });

const SECRET_NAMES = [
  'value',
  'password',
  'passwordHash',
  'token',
  'key',
  'secret',
  'csrfToken',
  'authorization',
  'clientSecret',
];

describe('auditSummaryOf', () => {
  it.each(SECRET_NAMES)('drops "%s" at the top, nested, and inside arrays', (name) => {
    const record = {
      [name]: 'hunter2-top',
      name: 'kept',
      nested: { [name]: 'hunter2-nested', deeper: { [name]: { even: 'an object' }, other: 1 } },
      list: [{ [name]: 'hunter2-in-array', label: 'x' }, 'plain'],
    };
    const summary = auditSummaryOf(record);
    expect(summary).toEqual({
      name: 'kept',
      nested: { deeper: { other: 1 } },
      list: [{ label: 'x' }, 'plain'],
    });
    expect(JSON.stringify(summary)).not.toContain('hunter2');
    expect(JSON.stringify(summary)).not.toContain('an object');
  });

  it('keeps a flag under a secret name: it says that one exists, not what it is', () => {
    expect(auditSummaryOf({ email: 'a@example.test', password: true })).toEqual({
      email: 'a@example.test',
      password: true,
    });
    expect(auditSummaryOf({ password: false })).toEqual({ password: false });
  });

  it('keeps names that merely resemble a secret’s (a list of secret names, a key’s prefix)', () => {
    const record = { secrets: ['API_TOKEN'], prefix: 'mcph_ak_abcd', keyId: 'k1' };
    expect(auditSummaryOf(record)).toEqual(record);
  });

  it('digests code and contents as their length and SHA-256', () => {
    const code = "return 'héllo';";
    expect(auditSummaryOf({ name: 'greet', code, version: 3 })).toEqual({
      name: 'greet',
      code: digestOf(code),
      version: 3,
    });
    for (const field of ['text', 'blob', 'contents', 'result', 'content']) {
      expect(auditSummaryOf({ [field]: 'short' }), field).toEqual({ [field]: digestOf('short') });
    }
    // A structured content is digested as its JSON.
    const content = { type: 'text', text: 'Hello' };
    expect(auditSummaryOf({ messages: [{ role: 'user', content }] })).toEqual({
      messages: [{ role: 'user', content: digestOf(JSON.stringify(content)) }],
    });
    // An absent body stays absent: null is not the digest of anything.
    expect(auditSummaryOf({ code: null })).toEqual({ code: null });
    // The byte count is of UTF-8, not of UTF-16 code units.
    expect((auditSummaryOf({ code: 'é' }) as { code: { bytes: number } }).code.bytes).toBe(2);
  });

  it('keeps an error’s code (a registry name, a JSON-RPC number): it is no program text', () => {
    const run = {
      ok: false,
      durationMs: 3,
      error: { code: 'ERR_TOOL_TIMEOUT', message: 'the tool took longer than 5000 ms' },
    };
    expect(auditSummaryOf(run)).toEqual(run);
    const protocol = {
      error: { code: -32602, message: 'Invalid params', data: { code: 'ERR_VALIDATION' } },
    };
    expect(auditSummaryOf(protocol)).toEqual(protocol);
    // Program text stays digested wherever it sits: a tool's, a prompt's, a completion's.
    const completion = { name: 'city', complete: { code: 'return ["Paris"];' } };
    expect(auditSummaryOf(completion)).toEqual({
      name: 'city',
      complete: { code: digestOf('return ["Paris"];') },
    });
    // A string that merely looks like a code but is none of the registry's is program text.
    expect(auditSummaryOf({ code: 'ERR_MADE_UP' })).toEqual({ code: digestOf('ERR_MADE_UP') });
  });

  it('digests strings longer than 256 characters whatever their name, keeps shorter ones', () => {
    const kept = 'a'.repeat(256);
    const long = 'b'.repeat(257);
    expect(auditSummaryOf({ description: kept })).toEqual({ description: kept });
    expect(auditSummaryOf({ description: long })).toEqual({ description: digestOf(long) });
    expect(auditSummaryOf([long])).toEqual([digestOf(long)]);
    expect(auditSummaryOf(long)).toEqual(digestOf(long));
  });

  it('keeps numbers, booleans, null and short strings as they are', () => {
    const record = { count: 0, ratio: 0.5, on: false, none: null, label: 'x', at: '2024-01-01' };
    expect(auditSummaryOf(record)).toEqual(record);
    expect(auditSummaryOf(undefined)).toBeUndefined();
    expect(auditSummaryOf(7)).toBe(7);
  });

  it('cuts nesting deeper than six levels', () => {
    const deep = { a: { b: { c: { d: { e: { f: { g: 'too deep' } } } } } } };
    expect(auditSummaryOf(deep)).toEqual({ a: { b: { c: { d: { e: { f: '…' } } } } } });
    expect(JSON.stringify(auditSummaryOf(deep))).not.toContain('too deep');
  });

  it('replaces a summary larger than 16 384 characters by its size and hash', () => {
    const big = { names: Array.from({ length: 2000 }, (_, index) => `name-${index}`) };
    const text = JSON.stringify(big);
    expect(text.length).toBeGreaterThan(16_384);
    expect(auditSummaryOf(big)).toEqual({
      omitted: `${text.length} characters of summary`,
      sha256: sha256(text),
    });
    const small = { names: Array.from({ length: 100 }, (_, index) => `name-${index}`) };
    expect(auditSummaryOf(small)).toEqual(small);
  });

  it('leaves its input as it was', () => {
    const record = { password: 'p', code: 'c', nested: { token: 't' } };
    const copy = structuredClone(record);
    auditSummaryOf(record);
    expect(record).toEqual(copy);
  });
});
