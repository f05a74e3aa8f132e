/**
 * What code sees of its caller is bounded as the runner's invoke line is
 * (`CallerView`): nothing a token holds can make the line fail its schema.
 */
import { describe, expect, it } from 'vitest';
import { CallerView } from '../../../src/protocol/index.js';
import { callerView } from '../../../control-plane/invocation/caller-view.js';
import { allowedClaims } from '../../../control-plane/identity/index.js';

describe('callerView', () => {
  it('keeps an OAuth caller within the bounds of the invoke line', () => {
    const view = callerView(
      {
        kind: 'oauth',
        subject: 's'.repeat(1025),
        clientId: 'client',
        scopes: [...Array.from({ length: 300 }, (_, index) => `scope-${index}`), 'x'.repeat(2000)],
        claims: { sub: 'user', email: 'a@example.com', secret: 'not listed' },
      },
      ['sub', 'email', 'missing'],
    );
    expect(view).not.toHaveProperty('subject');
    expect(view.clientId).toBe('client');
    expect(view.scopes).toHaveLength(256);
    expect(view.claims).toEqual({ sub: 'user', email: 'a@example.com' });
    expect(CallerView.safeParse(view).success).toBe(true);
  });

  it('shows an API key by id and a bounded label, and nothing of an admin or nobody', () => {
    const key = callerView({ kind: 'apikey', keyId: 'k1', label: 'l'.repeat(400) }, ['sub']);
    expect(key.key).toEqual({ id: 'k1', label: 'l'.repeat(256) });
    expect(CallerView.safeParse(key).success).toBe(true);
    expect(callerView({ kind: 'admin', actor: 'owner@example.com' }, ['sub'])).toEqual({
      kind: 'admin',
      scopes: [],
      claims: {},
    });
    expect(callerView({ kind: 'anonymous' }, ['sub'])).toEqual({
      kind: 'anonymous',
      scopes: [],
      claims: {},
    });
  });
});

describe('allowedClaims', () => {
  it('keeps listed own claims within 4 KiB of JSON, as own properties whatever their names', () => {
    const claims = JSON.parse(
      `{"roles":["a"],"big":"${'x'.repeat(5000)}","constructor":"c","nested":{"deep":[1,2]}}`,
    ) as Record<string, unknown>;
    const kept = allowedClaims(claims, ['roles', 'big', 'constructor', 'nested', 'toString']);
    expect(kept).toEqual({ roles: ['a'], constructor: 'c', nested: { deep: [1, 2] } });
    expect(Object.getPrototypeOf(kept)).toBe(Object.prototype);
  });
});
