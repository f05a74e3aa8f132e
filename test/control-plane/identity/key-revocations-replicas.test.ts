/**
 * A revoked API key's streams end on every replica, on a real PostgreSQL
 * database: two stores stand for two control planes, and replica B's
 * KeyRevocations follows its store's change feed. A key revoked through
 * replica A ends B's streams and sessions of that key (heard by NOTIFY),
 * and nothing of another key or server; a key created ends nothing; a key
 * past its `expiresAt` is not active either. The streams here are stand-ins
 * that record being ended (the real ones: stream-credentials.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyRevocations } from '../../../control-plane/app/key-revocations.js';
import { mintCredentialSecret } from '../../../control-plane/identity/index.js';
import type { ChangeAudience } from '../../../control-plane/mcp/index.js';
import type { Store } from '../../../control-plane/store/index.js';
import { postgresTarget, type StoreTarget } from '../../store/store-targets.js';

const target: StoreTarget = postgresTarget();
let replicaA: Store;
let replicaB: Store;

beforeAll(async () => {
  await target.setup();
  [replicaA, replicaB] = await Promise.all([target.open(), target.open()]);
  await replicaA.createServer({ subdomain: 'alpha' });
  await replicaA.createServer({ subdomain: 'beta' });
});

afterAll(async () => {
  await Promise.all([replicaA?.close(), replicaB?.close()]);
  await target.teardown();
});

async function mintKey(subdomain: string, expiresAt: string | null = null) {
  const minted = mintCredentialSecret('apikey');
  return replicaA.createCredential({
    owner: { kind: 'apikey', subdomain },
    label: 'stream',
    prefix: minted.prefix,
    secretHash: minted.secretHash,
    createdBy: 'test',
    expiresAt,
  });
}

/** A stand-in stream of `subdomain` opened with key `keyId`: it records being ended. */
function streamOf(subdomain: string, keyId: string) {
  const stream = {
    subdomain,
    ended: false,
    credential: { keyId },
    credentialRevoked: () => {
      stream.ended = true;
    },
    notifyToolsChanged: () => undefined,
    notifyPromptsChanged: () => undefined,
    notifyResourcesChanged: () => undefined,
    notifyResourcesUpdated: () => undefined,
  };
  return stream;
}

/** Replica B's streams, held as the listen streams and sessions hold theirs. */
function audienceOf(streams: ReturnType<typeof streamOf>[]): ChangeAudience {
  return {
    forSubdomain: (subdomain) => streams.filter((stream) => stream.subdomain === subdomain),
    closeSubdomain: () => undefined,
  };
}

/** Resolves at the next `api-keys` change `store` hears of. */
function nextKeyChange(store: Store): Promise<void> {
  return new Promise((resolve) => {
    const stop = store.onChange((change) => {
      if (change.kind !== 'api-keys') return;
      stop();
      resolve();
    });
  });
}

describe('KeyRevocations on two replicas', () => {
  it('ends the streams of a key revoked on the other replica, and nothing else', async () => {
    const [revoked, kept, other] = await Promise.all([
      mintKey('alpha'),
      mintKey('alpha'),
      mintKey('beta'),
    ]);
    const streams = [
      streamOf('alpha', revoked.id),
      streamOf('alpha', revoked.id),
      streamOf('alpha', kept.id),
      streamOf('beta', other.id),
    ];
    const errors: unknown[] = [];
    const revocations = new KeyRevocations({
      keys: replicaB,
      audiences: [audienceOf(streams)],
      subdomains: () => ['alpha', 'beta'],
      onError: (error) => errors.push(error),
    });
    revocations.start();
    try {
      // A key created through A is announced to B too: it ends nothing.
      const created = nextKeyChange(replicaB);
      await mintKey('alpha');
      await created;
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(streams.map((stream) => stream.ended)).toEqual([false, false, false, false]);

      await replicaA.revokeCredential({ kind: 'apikey', subdomain: 'alpha' }, revoked.id);
      await expect
        .poll(() => streams.map((stream) => stream.ended))
        .toEqual([true, true, false, false]);
      expect(errors).toEqual([]);
    } finally {
      revocations.stop();
    }
  });

  it('ends the streams of a key past its expiresAt at the next change of the server’s keys', async () => {
    const expiring = await mintKey('beta', new Date(Date.now() + 500).toISOString());
    const streams = [streamOf('beta', expiring.id)];
    let now = Date.now();
    const revocations = new KeyRevocations({
      keys: replicaB,
      audiences: [audienceOf(streams)],
      subdomains: () => ['beta'],
      onError: () => undefined,
      now: () => now,
    });
    revocations.start();
    try {
      now += 1_000;
      await mintKey('beta');
      await expect.poll(() => streams[0]!.ended).toBe(true);
    } finally {
      revocations.stop();
    }
  });
});
