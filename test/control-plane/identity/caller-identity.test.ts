/** Session owner and quota keys: structural, so no two callers share one. */
import { describe, expect, it } from 'vitest';
import { callerKeyOf, quotaKeyOf } from '../../../control-plane/mcp/caller-identity.js';

describe('callerKeyOf', () => {
  it('keeps subject and client apart whatever they contain', () => {
    // With `oauth:${sub}:${client}` both were "oauth:x:y:z".
    const first = callerKeyOf({ kind: 'oauth', subject: 'x:y', clientId: 'z' });
    const second = callerKeyOf({ kind: 'oauth', subject: 'x', clientId: 'y:z' });
    expect(first).not.toBe(second);
  });

  it('tells a missing subject or client from an empty one', () => {
    const keys = new Set([
      callerKeyOf({ kind: 'oauth' }),
      callerKeyOf({ kind: 'oauth', subject: '' }),
      callerKeyOf({ kind: 'oauth', clientId: '' }),
      callerKeyOf({ kind: 'oauth', subject: '', clientId: '' }),
      callerKeyOf({ kind: 'anonymous' }),
      callerKeyOf({ kind: 'admin' }),
    ]);
    expect(keys.size).toBe(6);
  });

  it('is the same for the same caller', () => {
    expect(callerKeyOf({ kind: 'oauth', subject: 'alice', clientId: 'c1' })).toBe(
      callerKeyOf({ kind: 'oauth', subject: 'alice', clientId: 'c1' }),
    );
  });
});

describe('quotaKeyOf', () => {
  it('counts an OAuth caller by subject, then by client; others by address', () => {
    expect(quotaKeyOf({ kind: 'oauth', subject: 'alice', clientId: 'c1' }, '10.0.0.1')).toBe(
      quotaKeyOf({ kind: 'oauth', subject: 'alice', clientId: 'c2' }, '10.0.0.2'),
    );
    expect(quotaKeyOf({ kind: 'oauth', clientId: 'c1' }, '10.0.0.1')).not.toBe(
      quotaKeyOf({ kind: 'oauth', subject: 'c1' }, '10.0.0.1'),
    );
    expect(quotaKeyOf({ kind: 'anonymous' }, '127.0.0.1')).not.toBe(
      quotaKeyOf({ kind: 'anonymous' }, '127.0.0.2'),
    );
    // A subject that looks like an address is still not that address.
    expect(quotaKeyOf({ kind: 'oauth', subject: '127.0.0.1' }, '::1')).not.toBe(
      quotaKeyOf({ kind: 'anonymous' }, '127.0.0.1'),
    );
  });
});

describe('quotaKeyOf for anonymous callers', () => {
  const anonymous = { kind: 'anonymous' } as const;

  it('counts a whole IPv6 /64 as one caller, so a host cannot mint budgets', () => {
    expect(quotaKeyOf(anonymous, '2001:db8:1:2::1')).toBe(
      quotaKeyOf(anonymous, '2001:db8:1:2:ffff:ffff:ffff:ffff'),
    );
    expect(quotaKeyOf(anonymous, '2001:db8:1:2::1')).not.toBe(
      quotaKeyOf(anonymous, '2001:db8:1:3::1'),
    );
  });

  it('counts an IPv4-mapped address as its IPv4 address', () => {
    expect(quotaKeyOf(anonymous, '::ffff:192.0.2.7')).toBe(quotaKeyOf(anonymous, '192.0.2.7'));
    expect(quotaKeyOf(anonymous, '192.0.2.7')).not.toBe(quotaKeyOf(anonymous, '192.0.2.8'));
  });
});
