import { describe, expect, it } from 'vitest';
import {
  clearCookie,
  parseCookies,
  serializeCookie,
  type CookieOptions,
} from '../../control-plane/identity/index.js';

const SESSION: CookieOptions = { secure: true, httpOnly: true, sameSite: 'Lax', path: '/' };

describe('parseCookies', () => {
  it('reads name=value pairs, trimming blanks', () => {
    expect([...parseCookies('a=1; b=two ;c = three')]).toEqual([
      ['a', '1'],
      ['b', 'two'],
      ['c', 'three'],
    ]);
  });

  it('answers an empty map for no header', () => {
    expect(parseCookies(undefined).size).toBe(0);
    expect(parseCookies('').size).toBe(0);
    expect(parseCookies(';;; ').size).toBe(0);
  });

  it('keeps the first occurrence of a name (the most specific path comes first)', () => {
    expect(parseCookies('mcph_session=specific; mcph_session=general').get('mcph_session')).toBe(
      'specific',
    );
  });

  it('skips pairs without = or without a name, and keeps = inside values', () => {
    const cookies = parseCookies('flag; =orphan; token=abc==; x=');
    expect([...cookies]).toEqual([
      ['token', 'abc=='],
      ['x', ''],
    ]);
  });

  it('decodes percent-encoding and quoted values, keeping undecodable values as sent', () => {
    const cookies = parseCookies('a=%E2%9C%93; b="quoted"; c=%E0%A4%A; d=100%');
    expect(cookies.get('a')).toBe('\u2713');
    expect(cookies.get('b')).toBe('quoted');
    expect(cookies.get('c')).toBe('%E0%A4%A');
    expect(cookies.get('d')).toBe('100%');
  });
});

describe('serializeCookie', () => {
  it('writes the attributes in a fixed order', () => {
    expect(serializeCookie('__Host-mcph_session', 'abc', { ...SESSION, maxAgeSeconds: 3600 })).toBe(
      '__Host-mcph_session=abc; Path=/; Max-Age=3600; Secure; HttpOnly; SameSite=Lax',
    );
    expect(
      serializeCookie('mcph_flow', 'v', {
        secure: false,
        httpOnly: false,
        sameSite: 'Strict',
        path: '/auth',
      }),
    ).toBe('mcph_flow=v; Path=/auth; SameSite=Strict');
  });

  it('encodes values so that parseCookies reads them back unchanged', () => {
    const value = 'a b;c,d"e\\f=\u00e9\u{1F511}';
    const header = serializeCookie('n', value, SESSION);
    expect(header.split('; ')[0]).not.toMatch(/[ ;,"\\]/);
    const pair = header.split('; ')[0] ?? '';
    expect(parseCookies(pair).get('n')).toBe(value);
  });

  it('clears a cookie with Max-Age=0 and an Expires in the past', () => {
    expect(clearCookie('mcph_session', { ...SESSION, secure: false })).toBe(
      'mcph_session=; Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax',
    );
  });

  it('throws TypeError for misuse', () => {
    const misuse: Array<() => string> = [
      () => serializeCookie('', 'v', SESSION),
      () => serializeCookie('has space', 'v', SESSION),
      () => serializeCookie('semi;colon', 'v', SESSION),
      () => serializeCookie('n', 'v', { ...SESSION, path: 'relative' }),
      () => serializeCookie('n', 'v', { ...SESSION, path: '/a;Domain=evil.example' }),
      () => serializeCookie('n', 'v', { ...SESSION, maxAgeSeconds: -1 }),
      () => serializeCookie('n', 'v', { ...SESSION, maxAgeSeconds: 1.5 }),
      () => serializeCookie('n', 'v', { ...SESSION, sameSite: 'None' as 'Lax' }),
      () => serializeCookie('__Host-n', 'v', { ...SESSION, secure: false }),
      () => serializeCookie('__Host-n', 'v', { ...SESSION, path: '/auth' }),
      () => serializeCookie('__Secure-n', 'v', { ...SESSION, secure: false }),
      () => serializeCookie('n', '\ud800', SESSION),
      () => serializeCookie('n', 'x'.repeat(5000), SESSION),
      () => serializeCookie('n', 42 as unknown as string, SESSION),
    ];
    for (const call of misuse) expect(call).toThrow(TypeError);
  });
});
