/**
 * API keys across replicas, on a real PostgreSQL database: two stores stand
 * for two control planes. Replica B checks keys from its cache (one lookup
 * for many requests); a key revoked through replica A is refused by B once
 * A's NOTIFY arrives; B's batched `lastUsedAt` is written on close, where A
 * can read it. Also the caller identities an API key gives (pure logic).
 */
import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintCredentialSecret } from '../../../control-plane/identity/index.js';
import { ApiKeyGate } from '../../../control-plane/http/api-key-gate.js';
import { callerKeyOf, quotaKeyOf } from '../../../control-plane/mcp/caller-identity.js';
import type { ServerRecord, Store } from '../../../control-plane/store/index.js';
import { postgresTarget, type StoreTarget } from '../../store/store-targets.js';

const target: StoreTarget = postgresTarget();
let replicaA: Store;
let replicaB: Store;

beforeAll(async () => {
  await target.setup();
  [replicaA, replicaB] = await Promise.all([target.open(), target.open()]);
  await replicaA.createServer({ subdomain: 'alpha' });
});

afterAll(async () => {
  await Promise.all([replicaA?.close(), replicaB?.close()]);
  await target.teardown();
});

/** A request presenting `key` as a bearer token: the gate reads its headers only. */
const requestWith = (key: string) =>
  ({ headers: { authorization: `Bearer ${key}` } }) as IncomingMessage;

/** Resolves at the next `api-keys` change of `subdomain` that `store` hears of. */
function nextKeyChange(store: Store, subdomain: string): Promise<void> {
  return new Promise((resolve) => {
    const stop = store.onChange((change) => {
      if (change.kind !== 'api-keys' || change.subdomain !== subdomain) return;
      stop();
      resolve();
    });
  });
}

async function mintKey(store: Store, subdomain: string, label: string) {
  const minted = mintCredentialSecret('apikey');
  const record = await store.createCredential({
    owner: { kind: 'apikey', subdomain },
    label,
    prefix: minted.prefix,
    secretHash: minted.secretHash,
    createdBy: 'test',
    expiresAt: null,
  });
  return { secret: minted.secret, record };
}

describe('API keys on two replicas', () => {
  it('checks from the cache, and follows a revocation made on the other replica', async () => {
    const server = (await replicaB.getServer('alpha')) as ServerRecord;
    let lookups = 0;
    const errors: unknown[] = [];
    const gate = new ApiKeyGate({
      store: {
        findCredential: (kind, hash) => {
          lookups += 1;
          return replicaB.findCredential(kind, hash);
        },
        onChange: (listener) => replicaB.onChange(listener),
        touchCredentials: (ids) => replicaB.touchCredentials(ids),
      },
      onError: (error) => errors.push(error),
    });
    try {
      // The creation's own notification reaches B later: counted from after it arrived.
      const announced = nextKeyChange(replicaB, 'alpha');
      const { secret, record } = await mintKey(replicaA, 'alpha', 'shared');
      await announced;
      for (let index = 0; index < 5; index += 1) {
        expect(await gate.authenticate(server, requestWith(secret))).toEqual({
          ok: true,
          caller: { kind: 'apikey', keyId: record.id, label: 'shared' },
        });
      }
      expect(lookups).toBe(1);

      await replicaA.revokeCredential({ kind: 'apikey', subdomain: 'alpha' }, record.id);
      await expect
        .poll(async () => {
          const outcome = await gate.authenticate(server, requestWith(secret));
          return outcome.ok ? 'admitted' : outcome.headers['www-authenticate'];
        })
        .toMatch(/error="invalid_token", error_description="this API key has been revoked"/);
    } finally {
      await gate.close();
    }
    expect(errors).toEqual([]);
    const [listed] = await replicaA.listCredentials({ kind: 'apikey', subdomain: 'alpha' });
    expect(listed?.lastUsedAt).toMatch(/^\d{4}-/);
  });

  it('refuses a key of a server deleted and created again under the same name', async () => {
    await replicaA.createServer({ subdomain: 'beta' });
    const gate = new ApiKeyGate({ store: replicaB, onError: () => undefined });
    try {
      const { secret } = await mintKey(replicaA, 'beta', 'old');
      const before = (await replicaB.getServer('beta')) as ServerRecord;
      expect((await gate.authenticate(before, requestWith(secret))).ok).toBe(true);
      await replicaA.deleteServer('beta');
      await replicaA.createServer({ subdomain: 'beta' });
      const after = (await replicaB.getServer('beta')) as ServerRecord;
      await expect
        .poll(async () => (await gate.authenticate(after, requestWith(secret))).ok)
        .toBe(false);
    } finally {
      await gate.close();
    }
  });
});

describe('the caller identity of an API key', () => {
  const first = { kind: 'apikey', keyId: 'k1', label: 'same label' } as const;
  const second = { kind: 'apikey', keyId: 'k2', label: 'same label' } as const;

  it('binds sessions and counts quotas per key, wherever the client is', () => {
    expect(callerKeyOf(first)).not.toBe(callerKeyOf(second));
    expect(quotaKeyOf(first, '10.0.0.1')).not.toBe(quotaKeyOf(second, '10.0.0.1'));
    expect(quotaKeyOf(first, '10.0.0.1')).toBe(quotaKeyOf(first, '10.0.0.2'));
    // A relabelled key is the same caller.
    expect(callerKeyOf({ ...first, label: 'renamed' })).toBe(callerKeyOf(first));
  });

  it('never equals another kind of caller’s identity', () => {
    const keys = new Set([
      callerKeyOf(first),
      callerKeyOf({ kind: 'oauth', subject: 'k1' }),
      callerKeyOf({ kind: 'oauth', clientId: 'k1' }),
      callerKeyOf({ kind: 'anonymous' }),
      callerKeyOf({ kind: 'admin' }),
    ]);
    expect(keys.size).toBe(5);
    const quotas = new Set([
      quotaKeyOf(first, 'k1'),
      quotaKeyOf({ kind: 'oauth', subject: 'k1' }, 'k1'),
      quotaKeyOf({ kind: 'oauth', clientId: 'k1' }, 'k1'),
      quotaKeyOf({ kind: 'anonymous' }, 'k1'),
    ]);
    expect(quotas.size).toBe(4);
  });
});
