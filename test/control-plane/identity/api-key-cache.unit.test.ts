/**
 * The API-key cache's logic, against a scripted key source whose lookups a
 * test can hold open: hits and misses cost no lookup, misses cannot push
 * keys out, identical lookups share one, lookups are bounded, a change drops
 * exactly the entries it concerns (and a lookup begun before it is not
 * kept), and the time to live is a safety net. The real store's side is in
 * api-key-mode.test.ts and api-key-replicas.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { hashCredentialSecret } from '../../../control-plane/identity/index.js';
import { ApiKeyCache, type ApiKeySource } from '../../../control-plane/identity/api-key-cache.js';
import { ExpiringLru } from '../../../control-plane/identity/expiring-lru.js';
import type { CredentialRecord, StoreChange } from '../../../control-plane/store/index.js';

/** A key source whose records a test sets, counting lookups; `hold` keeps lookups open. */
class ScriptedSource implements ApiKeySource {
  readonly records = new Map<string, CredentialRecord>();
  readonly lookups: string[] = [];
  readonly open: { hash: string; release: () => void }[] = [];
  hold = false;
  failWith: Error | undefined;
  readonly #listeners = new Set<(change: StoreChange) => void>();

  async findCredential(_kind: 'apikey', hash: string): Promise<CredentialRecord | undefined> {
    this.lookups.push(hash);
    // Read at once, answered when released: a held lookup says what the row said then.
    const record = this.records.get(hash);
    const read = record && { ...record };
    if (this.hold) await new Promise<void>((release) => this.open.push({ hash, release }));
    if (this.failWith) throw this.failWith;
    return read;
  }

  onChange(listener: (change: StoreChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  emit(change: StoreChange): void {
    for (const listener of this.#listeners) listener(change);
  }

  releaseAll(): void {
    for (const lookup of this.open.splice(0)) lookup.release();
  }
}

function keyRecord(id: string, subdomain: string): CredentialRecord {
  return {
    id,
    kind: 'apikey',
    subdomain,
    accountId: null,
    label: id,
    prefix: 'mcph_ak_xxxx',
    createdBy: 'test',
    createdAt: '2025-01-01T00:00:00.000Z',
    expiresAt: null,
    revokedAt: null,
    lastUsedAt: null,
  };
}

/** A source holding key `id` of `subdomain` under the hash of `mcph_ak_<id>`; returns the hash. */
function plant(source: ScriptedSource, id: string, subdomain: string): string {
  const hash = hashCredentialSecret(`mcph_ak_${id}`);
  source.records.set(hash, keyRecord(id, subdomain));
  return hash;
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('ExpiringLru', () => {
  it('drops the least recently read entry when full', () => {
    const lru = new ExpiringLru<number>({ maxEntries: 2, ttlMs: 1000 });
    lru.set('a', 1);
    lru.set('b', 2);
    expect(lru.get('a')).toBe(1); // a is now the most recent
    lru.set('c', 3);
    expect([lru.get('a'), lru.get('b'), lru.get('c')]).toEqual([1, undefined, 3]);
    expect(lru.size).toBe(2);
  });

  it('reads an entry older than its time to live as absent', () => {
    let now = 0;
    const lru = new ExpiringLru<number>({ maxEntries: 10, ttlMs: 100, now: () => now });
    lru.set('a', 1);
    now = 99;
    expect(lru.get('a')).toBe(1);
    now = 100;
    expect(lru.has('a')).toBe(false);
    expect(lru.size).toBe(0);
  });

  it('refuses limits that cannot work', () => {
    expect(() => new ExpiringLru({ maxEntries: 0, ttlMs: 1 })).toThrow(TypeError);
    expect(() => new ExpiringLru({ maxEntries: 1, ttlMs: 0 })).toThrow(TypeError);
  });
});

describe('ApiKeyCache', () => {
  it('asks the store once for a key and once for an unknown hash', async () => {
    const source = new ScriptedSource();
    const cache = new ApiKeyCache(source);
    const hash = plant(source, 'k1', 'alpha');
    const unknown = hashCredentialSecret('mcph_ak_nobody');
    for (let round = 0; round < 3; round += 1) {
      expect((await cache.find(hash))?.id).toBe('k1');
      expect(await cache.find(unknown)).toBeUndefined();
    }
    expect(source.lookups).toEqual([hash, unknown]);
  });

  it('keeps known keys however many unknown hashes arrive', async () => {
    const source = new ScriptedSource();
    const cache = new ApiKeyCache(source, { maxKeys: 4, maxUnknown: 4 });
    const hash = plant(source, 'k1', 'alpha');
    await cache.find(hash);
    for (let index = 0; index < 50; index += 1) {
      expect(await cache.find(hashCredentialSecret(`mcph_ak_random${index}`))).toBeUndefined();
    }
    const before = source.lookups.length;
    expect((await cache.find(hash))?.id).toBe('k1');
    expect(source.lookups.length).toBe(before);
  });

  it('shares one lookup among requests for the same hash', async () => {
    const source = new ScriptedSource();
    const cache = new ApiKeyCache(source);
    const hash = plant(source, 'k1', 'alpha');
    source.hold = true;
    const finds = [cache.find(hash), cache.find(hash), cache.find(hash)];
    await settle();
    expect(source.lookups).toEqual([hash]);
    source.releaseAll();
    expect((await Promise.all(finds)).map((record) => record?.id)).toEqual(['k1', 'k1', 'k1']);
  });

  it('runs at most maxConcurrentLookups lookups and refuses past maxWaitingLookups', async () => {
    const source = new ScriptedSource();
    const cache = new ApiKeyCache(source, { maxConcurrentLookups: 2, maxWaitingLookups: 3 });
    source.hold = true;
    const finds = Array.from({ length: 6 }, (_, index) =>
      cache.find(hashCredentialSecret(`mcph_ak_flood${index}`)).then(
        (record) => ({ ok: true as const, record }),
        (error: unknown) => ({ ok: false as const, error }),
      ),
    );
    await settle();
    // Two at the store, three waiting, the sixth refused at once.
    expect(source.lookups).toHaveLength(2);
    const refused = await finds[5]!;
    expect(refused.ok).toBe(false);
    expect(!refused.ok && (refused.error as { code?: string }).code).toBe('ERR_NO_CAPACITY');
    // As slots free up, the waiting lookups run, never more than two at once.
    while (source.open.length > 0) {
      expect(source.open.length).toBeLessThanOrEqual(2);
      source.open.shift()!.release();
      await settle();
    }
    expect(source.lookups).toHaveLength(5);
    const results = await Promise.all(finds.slice(0, 5));
    expect(results.every((result) => result.ok && result.record === undefined)).toBe(true);
  });

  it('drops the keys of a server whose keys changed, and only those', async () => {
    const source = new ScriptedSource();
    const cache = new ApiKeyCache(source);
    const alpha = plant(source, 'a1', 'alpha');
    const beta = plant(source, 'b1', 'beta');
    await cache.find(alpha);
    await cache.find(beta);
    source.records.get(alpha)!.revokedAt = '2025-02-01T00:00:00.000Z';
    source.emit({ subdomain: 'alpha', kind: 'api-keys' });
    expect((await cache.find(alpha))?.revokedAt).toBe('2025-02-01T00:00:00.000Z');
    await cache.find(beta);
    expect(source.lookups).toEqual([alpha, beta, alpha]);
  });

  it('drops the keys of a deleted server, and everything on resync', async () => {
    const source = new ScriptedSource();
    const cache = new ApiKeyCache(source);
    const alpha = plant(source, 'a1', 'alpha');
    const beta = plant(source, 'b1', 'beta');
    const unknown = hashCredentialSecret('mcph_ak_nobody');
    await Promise.all([cache.find(alpha), cache.find(beta), cache.find(unknown)]);
    source.records.delete(alpha);
    source.emit({ subdomain: 'alpha', kind: 'server' });
    expect(await cache.find(alpha)).toBeUndefined();
    source.emit({ subdomain: null, kind: 'resync' });
    await Promise.all([cache.find(beta), cache.find(unknown)]);
    expect(source.lookups.slice(3)).toEqual([alpha, beta, unknown]);
  });

  it('ignores changes that cannot touch keys', async () => {
    const source = new ScriptedSource();
    const cache = new ApiKeyCache(source);
    const alpha = plant(source, 'a1', 'alpha');
    await cache.find(alpha);
    source.emit({ subdomain: 'alpha', kind: 'tools' });
    source.emit({ subdomain: 'alpha', kind: 'secrets' });
    await cache.find(alpha);
    expect(source.lookups).toEqual([alpha]);
  });

  it('neither keeps nor shares a lookup that was under way when keys changed', async () => {
    const source = new ScriptedSource();
    const cache = new ApiKeyCache(source);
    const alpha = plant(source, 'a1', 'alpha');
    source.hold = true;
    // This lookup reads the key before its revocation commits, and answers after.
    const early = cache.find(alpha);
    await settle();
    source.records.get(alpha)!.revokedAt = '2025-02-01T00:00:00.000Z';
    source.emit({ subdomain: 'alpha', kind: 'api-keys' });
    const late = cache.find(alpha);
    await settle();
    expect(source.lookups).toEqual([alpha, alpha]);
    // The late lookup answers first, the early one last: were it kept, it would win.
    source.open[1]!.release();
    expect((await late)?.revokedAt).not.toBeNull();
    source.open[0]!.release();
    expect((await early)?.revokedAt).toBeNull();
    source.hold = false;
    expect((await cache.find(alpha))?.revokedAt).not.toBeNull();
    expect(source.lookups).toHaveLength(2);
  });

  it('reads a key again once its time to live has passed, serving it meanwhile', async () => {
    let now = 0;
    const source = new ScriptedSource();
    const cache = new ApiKeyCache(source, { ttlMs: 30_000, now: () => now });
    const alpha = plant(source, 'a1', 'alpha');
    await cache.find(alpha);
    now = 29_999;
    await cache.find(alpha);
    expect(source.lookups).toHaveLength(1);
    now = 30_000;
    source.hold = true;
    // Revoked meanwhile with no notification reaching this cache (the TTL's case).
    source.records.get(alpha)!.revokedAt = '2025-06-01T00:00:00.000Z';
    // Answered at once from the cache while the store is asked again in the background.
    expect((await cache.find(alpha))?.revokedAt).toBeNull();
    expect(source.lookups).toHaveLength(2);
    source.releaseAll();
    await settle();
    expect((await cache.find(alpha))?.revokedAt).not.toBeNull();
  });

  it('keeps serving a known key while its refresh is refused, but not past 5× its time to live', async () => {
    let now = 0;
    const source = new ScriptedSource();
    const cache = new ApiKeyCache(source, { ttlMs: 30_000, now: () => now });
    const alpha = plant(source, 'a1', 'alpha');
    await cache.find(alpha);
    source.failWith = new Error('store swamped');
    now = 100_000;
    expect((await cache.find(alpha))?.id).toBe('a1');
    await settle();
    now = 150_000;
    await expect(cache.find(alpha)).rejects.toThrow('store swamped');
  });

  it('forgets a known key that a refresh no longer finds', async () => {
    let now = 0;
    const source = new ScriptedSource();
    const cache = new ApiKeyCache(source, { ttlMs: 30_000, now: () => now });
    const alpha = plant(source, 'a1', 'alpha');
    await cache.find(alpha);
    source.records.delete(alpha);
    now = 30_000;
    await cache.find(alpha);
    await settle();
    expect(await cache.find(alpha)).toBeUndefined();
  });

  it('keeps no failure: the next request asks again', async () => {
    const source = new ScriptedSource();
    const cache = new ApiKeyCache(source);
    const alpha = plant(source, 'a1', 'alpha');
    source.failWith = new Error('store down');
    await expect(cache.find(alpha)).rejects.toThrow('store down');
    source.failWith = undefined;
    expect((await cache.find(alpha))?.id).toBe('a1');
  });

  it('stops following changes when closed', async () => {
    const source = new ScriptedSource();
    const cache = new ApiKeyCache(source);
    const alpha = plant(source, 'a1', 'alpha');
    await cache.find(alpha);
    cache.close();
    source.emit({ subdomain: null, kind: 'resync' });
    await cache.find(alpha);
    expect(source.lookups).toHaveLength(1);
  });
});
