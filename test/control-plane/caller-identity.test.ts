/** Session owner and quota keys: structural, so no two callers share one. */
import { describe, expect, it } from 'vitest';
import { callerKeyOf, quotaKeyOf } from '../../control-plane/mcp/caller-identity.js';

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
