import { describe, expect, it } from 'vitest';
import { parseOidcFlowState, sanitizeReturnTo } from '../../control-plane/identity/index.js';

describe('sanitizeReturnTo', () => {
  it('keeps paths on this origin', () => {
    for (const path of ['/', '/#/servers', '/#/servers/demo?tab=tools', '/api/x']) {
      expect(sanitizeReturnTo(path)).toBe(path);
    }
  });

  it('turns anything that could leave the origin into /', () => {
    const unsafe = [
      'https://evil.example/',
      '//evil.example/',
      '/\\evil.example',
      '/ok\\..\\evil',
      'javascript:alert(1)',
      '#/servers',
      '/line\nbreak',
      '',
      '/'.padEnd(3000, 'a'),
      undefined,
      42,
    ];
    for (const value of unsafe) expect(sanitizeReturnTo(value)).toBe('/');
  });
});

describe('parseOidcFlowState', () => {
  it('accepts a complete flow and refuses partial or odd ones', () => {
    const flow = {
      state: 's'.repeat(43),
      nonce: 'n'.repeat(43),
      codeVerifier: 'v'.repeat(43),
      returnTo: '/',
      redirectUri: 'http://127.0.0.1/cb',
    };
    expect(parseOidcFlowState(flow)).toEqual(flow);
    expect(parseOidcFlowState({ ...flow, state: '' })).toBeUndefined();
    expect(parseOidcFlowState({ ...flow, nonce: undefined })).toBeUndefined();
    expect(parseOidcFlowState('flow')).toBeUndefined();
    expect(parseOidcFlowState(undefined)).toBeUndefined();
  });
});
