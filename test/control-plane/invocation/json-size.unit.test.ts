/**
 * control-plane/json-size.ts against the oracle it counts for: the UTF-8
 * bytes of JSON.stringify, once and twice over, for text with every kind of
 * character JSON escapes (issue 28, finding 11).
 */
import { describe, expect, it } from 'vitest';
import {
  jsonBytesAtMost,
  jsonDeeperThan,
  jsonStringBytes,
  jsonTextBytesAtMost,
  jsonTextDeeperThan,
} from '../../../control-plane/json-size.js';

const bytesOf = (text: string) => Buffer.byteLength(text, 'utf8');

/** Every kind of character: controls, quote, backslash, ASCII, 2- and 3-byte, pairs, lone surrogates. */
const SAMPLES = [
  '',
  'plain',
  '\u0000\u0001\u001f\b\t\n\f\r',
  '"\\/',
  'é€\u2028\u2029',
  '😀a😀',
  '\ud800',
  '\udc00x',
  'a\ud800\ud800b',
  '\ud83d',
];

function randomText(length: number, seed: number): string {
  let state = seed;
  const next = () => (state = (state * 1103515245 + 12345) % 2 ** 31);
  const pool = [0x01, 0x0a, 0x22, 0x5c, 0x41, 0x7f, 0xe9, 0x20ac, 0xd83d, 0xde00, 0xdc00, 0x1f];
  return String.fromCharCode(...Array.from({ length }, () => pool[next() % pool.length]!));
}

describe('json-size', () => {
  it('counts a string as JSON.stringify writes it', () => {
    const texts = [...SAMPLES, ...Array.from({ length: 50 }, (_, i) => randomText(i * 7, i + 1))];
    for (const text of texts) {
      expect(jsonStringBytes(text), JSON.stringify(text)).toBe(bytesOf(JSON.stringify(text)));
    }
  });

  it('counts a value, and its JSON sent as text, as JSON.stringify writes them', () => {
    const values: unknown[] = [
      null,
      true,
      false,
      0,
      -1.5e-7,
      1e21,
      [],
      {},
      [1, 'a', null, [true, {}]],
      { a: SAMPLES, [SAMPLES[2]!]: { b: [SAMPLES[3], 3.25] }, skipped: undefined },
      [undefined, 'x'],
      { nested: { deeper: { text: randomText(500, 9) } } },
    ];
    for (const value of values) {
      const json = JSON.stringify(value);
      expect(jsonBytesAtMost(value, 1e9), json).toBe(bytesOf(json));
      expect(jsonTextBytesAtMost(value, 1e9), json).toBe(bytesOf(JSON.stringify(json)));
    }
  });

  it('stops past the limit, answering a number above it', () => {
    const value = { items: Array.from({ length: 100_000 }, (_, i) => `item ${i}`) };
    const full = bytesOf(JSON.stringify(value));
    expect(jsonBytesAtMost(value, full)).toBe(full);
    expect(jsonBytesAtMost(value, 1_000)).toBeGreaterThan(1_000);
    expect(jsonBytesAtMost('x'.repeat(10_000_000), 100)).toBeGreaterThan(100);
    expect(jsonTextBytesAtMost(value, 1_000)).toBeGreaterThan(1_000);
  });
});

describe('nesting depth of JSON, as a value and as text', () => {
  /** The depth of a parsed JSON value, recursively: the oracle for both. */
  const depthOf = (value: unknown): number =>
    value === null || typeof value !== 'object'
      ? 0
      : 1 + Math.max(0, ...Object.values(value).map(depthOf));

  it('agrees with the recursive depth on every kind of value, strings with brackets included', () => {
    const values: unknown[] = [
      0,
      'text',
      [],
      {},
      [[[]]],
      { a: [{ b: { c: [] } }], d: 1 },
      ['[[[[', '{{{{', 'a "quoted" \\[ string'],
      { '[': { '{': '\\"]' } },
      [1, [2, [3, [4, [5]]]], {}],
    ];
    for (const value of values) {
      const depth = depthOf(value);
      const text = JSON.stringify(value);
      expect(jsonDeeperThan(value, depth), text).toBe(false);
      expect(jsonTextDeeperThan(text, depth), text).toBe(false);
      if (depth > 0) {
        expect(jsonDeeperThan(value, depth - 1), text).toBe(true);
        expect(jsonTextDeeperThan(text, depth - 1), text).toBe(true);
      }
    }
  });

  it('walks a nesting deeper than the stack without overflowing', () => {
    const text = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const value = JSON.parse(text) as unknown;
    expect(jsonTextDeeperThan(text, 64)).toBe(true);
    expect(jsonDeeperThan(value, 64)).toBe(true);
    expect(jsonTextDeeperThan(text, 100_000)).toBe(false);
    expect(jsonDeeperThan(value, 100_000)).toBe(false);
  });
});
