/**
 * The API-key core without HTTP: which header carries the key, what each kind
 * of bad key is called (another server's key reads like an unknown one),
 * expiry judged at each request against the cached record with a frozen
 * clock, and `lastUsedAt` written in batches, at most once a minute per key,
 * never on the request path.
 */
import { describe, expect, it } from 'vitest';
import { hashCredentialSecret } from '../../../control-plane/identity/index.js';
import { ApiKeyCache } from '../../../control-plane/identity/api-key-cache.js';
import {
  ApiKeyVerifier,
  presentedApiKey,
} from '../../../control-plane/identity/api-key-verifier.js';
import { CredentialUseRecorder } from '../../../control-plane/identity/credential-use-recorder.js';
import type { CredentialRecord } from '../../../control-plane/store/index.js';

describe('presentedApiKey', () => {
  it('takes the bearer value, else X-API-Key', () => {
    expect(presentedApiKey({ authorization: 'Bearer mcph_ak_a' })).toBe('mcph_ak_a');
    expect(presentedApiKey({ authorization: 'bearer   mcph_ak_a  ' })).toBe('mcph_ak_a');
    expect(presentedApiKey({ 'x-api-key': ' mcph_ak_b ' })).toBe('mcph_ak_b');
    expect(presentedApiKey({ authorization: 'Bearer mcph_ak_a', 'x-api-key': 'mcph_ak_b' })).toBe(
      'mcph_ak_a',
    );
  });

  it('counts another scheme, an empty bearer or an empty header as no key', () => {
    expect(presentedApiKey({})).toBeUndefined();
    expect(presentedApiKey({ authorization: 'Basic dXNlcjpwYXNz' })).toBeUndefined();
    expect(presentedApiKey({ authorization: 'Bearer ' })).toBeUndefined();
    expect(presentedApiKey({ 'x-api-key': '' })).toBeUndefined();
    expect(presentedApiKey({ authorization: 'Basic dXNlcjpwYXNz', 'x-api-key': 'mcph_ak_b' })).toBe(
      'mcph_ak_b',
    );
  });

  it('passes a non-key bearer on as presented (it is then simply invalid)', () => {
    expect(presentedApiKey({ authorization: 'Bearer eyJhbGciOi.x.y' })).toBe('eyJhbGciOi.x.y');
  });
});

const NOW = Date.parse('2025-06-01T12:00:00.000Z');

function record(id: string, overrides: Partial<CredentialRecord> = {}): CredentialRecord {
  return {
    id,
    kind: 'apikey',
    subdomain: 'alpha',
    accountId: null,
    label: `label ${id}`,
    prefix: 'mcph_ak_xxxx',
    createdBy: 'test',
    createdAt: '2025-01-01T00:00:00.000Z',
    expiresAt: null,
    revokedAt: null,
    lastUsedAt: null,
    ...overrides,
  };
}

/** A verifier over fixed records (by secret), with a settable clock and the touches it wrote. */
function verifierOver(secrets: Record<string, CredentialRecord>) {
  const byHash = new Map(
    Object.entries(secrets).map(([secret, value]) => [hashCredentialSecret(secret), value]),
  );
  const clock = { now: NOW };
  const touched: string[][] = [];
  const lookups: string[] = [];
  const cache = new ApiKeyCache(
    {
      findCredential: async (_kind, hash) => {
        lookups.push(hash);
        return byHash.get(hash);
      },
      onChange: () => () => undefined,
    },
    { now: () => clock.now },
  );
  const uses = new CredentialUseRecorder({
    touch: async (ids) => void touched.push([...ids]),
    onError: (error) => {
      throw error;
    },
    flushEveryMs: 3_600_000,
    now: () => clock.now,
  });
  const verifier = new ApiKeyVerifier(cache, uses, () => clock.now);
  return { verifier, uses, clock, touched, lookups };
}

describe('ApiKeyVerifier', () => {
  const secrets = {
    mcph_ak_good: record('good'),
    mcph_ak_beta: record('beta', { subdomain: 'beta' }),
    mcph_ak_revoked: record('revoked', { revokedAt: '2025-05-01T00:00:00.000Z' }),
    mcph_ak_expiring: record('expiring', { expiresAt: '2025-06-01T12:00:01.000Z' }),
    // Revoked wins over expired.
    mcph_ak_both: record('both', {
      revokedAt: '2025-05-01T00:00:00.000Z',
      expiresAt: '2025-05-02T00:00:00.000Z',
    }),
  };

  it('admits an active key of the server, as its id and label', async () => {
    const { verifier } = verifierOver(secrets);
    expect(await verifier.verify('alpha', { 'x-api-key': 'mcph_ak_good' })).toEqual({
      ok: true,
      key: { id: 'good', label: 'label good' },
    });
  });

  it('names each refusal, another server’s key as an unknown one', async () => {
    const { verifier, lookups } = verifierOver(secrets);
    const problem = async (headers: Record<string, string>) => {
      const verdict = await verifier.verify('alpha', headers);
      return verdict.ok ? 'admitted' : verdict.problem;
    };
    expect(await problem({})).toBe('missing');
    expect(await problem({ authorization: 'Bearer mcph_ak_unknown' })).toBe('invalid');
    expect(await problem({ authorization: 'Bearer mcph_ak_beta' })).toBe('invalid');
    expect(await problem({ authorization: 'Bearer mcph_ak_revoked' })).toBe('revoked');
    expect(await problem({ authorization: 'Bearer mcph_ak_both' })).toBe('revoked');
    expect(await problem({ authorization: 'Bearer mcph_pat_abc' })).toBe('invalid');
    expect(await problem({ authorization: `Bearer mcph_ak_${'x'.repeat(200)}` })).toBe('invalid');
    // A bearer that is not a key wins over a good X-API-Key, and is not looked up.
    const before = lookups.length;
    expect(await problem({ authorization: 'Bearer a.b.c', 'x-api-key': 'mcph_ak_good' })).toBe(
      'invalid',
    );
    expect(lookups.length).toBe(before);
  });

  it('judges expiry at each request against the cached record', async () => {
    const { verifier, clock, lookups } = verifierOver(secrets);
    const headers = { authorization: 'Bearer mcph_ak_expiring' };
    expect((await verifier.verify('alpha', headers)).ok).toBe(true);
    clock.now = NOW + 1_000;
    expect(await verifier.verify('alpha', headers)).toEqual({ ok: false, problem: 'expired' });
    expect(lookups).toHaveLength(1);
  });

  it('writes uses in batches, at most once a minute per key', async () => {
    const { verifier, uses, clock, touched } = verifierOver(secrets);
    const good = { authorization: 'Bearer mcph_ak_good' };
    for (let index = 0; index < 5; index += 1) await verifier.verify('alpha', good);
    await verifier.verify('alpha', { authorization: 'Bearer mcph_ak_expiring' });
    await verifier.verify('alpha', { authorization: 'Bearer mcph_ak_revoked' });
    expect(touched).toEqual([]); // nothing on the request path
    await uses.flush();
    expect(touched).toEqual([['good', 'expiring']]);
    clock.now = NOW + 59_999;
    await verifier.verify('alpha', good);
    await uses.flush();
    expect(touched).toHaveLength(1);
    clock.now = NOW + 60_000;
    await verifier.verify('alpha', good);
    await uses.close();
    expect(touched).toEqual([['good', 'expiring'], ['good']]);
  });
});

describe('CredentialUseRecorder', () => {
  it('skips a key whose record says another replica wrote it within the minute', async () => {
    const touched: string[][] = [];
    const uses = new CredentialUseRecorder({
      touch: async (ids) => void touched.push([...ids]),
      onError: () => undefined,
      now: () => NOW,
    });
    uses.record('recent', new Date(NOW - 30_000).toISOString());
    uses.record('stale', new Date(NOW - 61_000).toISOString());
    await uses.close();
    expect(touched).toEqual([['stale']]);
    uses.record('late', null); // after close: nothing more is noted
    await uses.flush();
    expect(touched).toHaveLength(1);
  });

  it('reports a failed write and notes the key again at its next use', async () => {
    const touched: string[][] = [];
    const failures: unknown[] = [];
    let failing = true;
    const uses = new CredentialUseRecorder({
      touch: async (ids) => {
        if (failing) throw new Error('store down');
        touched.push([...ids]);
      },
      onError: (error) => failures.push(error),
      now: () => NOW,
    });
    uses.record('k', null);
    await uses.flush();
    expect(failures).toHaveLength(1);
    failing = false;
    uses.record('k', null);
    await uses.close();
    expect(touched).toEqual([['k']]);
  });

  it('writes on its own every flushEveryMs', async () => {
    const touched: string[][] = [];
    const uses = new CredentialUseRecorder({
      touch: async (ids) => void touched.push([...ids]),
      onError: () => undefined,
      flushEveryMs: 20,
    });
    uses.record('k', null);
    await expect.poll(() => touched, { timeout: 2_000 }).toEqual([['k']]);
    await uses.close();
  });
});
