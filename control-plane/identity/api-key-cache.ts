/**
 * Hosted servers' API keys by the SHA-256 of their secret, so a request costs
 * a hash and a map read, not a store round trip. Keys found and hashes not
 * found are kept apart, each bounded: a flood of made-up keys can fill only
 * the second, never push real keys out, and it reaches the store through a
 * few lookup slots (identical lookups share one), so it can neither grow
 * memory nor hammer the database.
 *
 * Freshness: the store announces every key created or revoked (`api-keys`,
 * here at once after the commit, elsewhere by NOTIFY) and every server
 * deleted (`server`: its keys go with it); the server's entries are dropped
 * then, everything on `resync`. A time to live bounds what a lost
 * notification could leave. A lookup that was under way when something was
 * dropped is answered but not kept, nor joined by later requests: it may
 * have read the key before its revocation.
 */
import { McphostError } from '../errors.js';
import type { CredentialRecord, StoreChange } from '../store/index.js';
import { ConcurrencyLimit } from './concurrency-limit.js';
import { ExpiringLru } from './expiring-lru.js';

/** What the cache needs of the store. */
export interface ApiKeySource {
  findCredential(kind: 'apikey', secretHash: string): Promise<CredentialRecord | undefined>;
  onChange(listener: (change: StoreChange) => void): () => void;
}

/** Limits of an ApiKeyCache; every field has a default. */
export interface ApiKeyCacheOptions {
  /** Keys found that are held; default 10000. */
  maxKeys?: number;
  /** Hashes not found that are held; default 10000. */
  maxUnknown?: number;
  /** Age, in ms, after which an entry is read again from the store (a known key is served meanwhile, up to 5× as long); default 30000. */
  ttlMs?: number;
  /** Store lookups under way at once, per process; default 8. */
  maxConcurrentLookups?: number;
  /** Lookups that may wait for a slot; one more is refused (503 ERR_NO_CAPACITY); default 500. */
  maxWaitingLookups?: number;
  /** Milliseconds since the epoch; default Date.now. */
  now?: () => number;
}

/** How many times its time to live a known key is served while its refresh cannot be had. */
const STALE_FACTOR = 5;

/** A store lookup shared by every request for the same hash. */
interface Lookup {
  readonly promise: Promise<CredentialRecord | undefined>;
}

/** The API keys of every hosted server, cached by secret hash. */
export class ApiKeyCache {
  readonly #source: ApiKeySource;
  readonly #keys: ExpiringLru<CredentialRecord>;
  readonly #unknown: ExpiringLru<true>;
  readonly #inFlight = new Map<string, Lookup>();
  readonly #lookups: ConcurrencyLimit;
  /** Age, in ms, past which a known key is read again (while still being served). */
  readonly #refreshAfterMs: number;
  readonly #stopListening: () => void;
  /** Bumped whenever entries are dropped: a lookup begun under an older one is not kept. */
  #generation = 0;

  constructor(source: ApiKeySource, options: ApiKeyCacheOptions = {}) {
    const ttlMs = options.ttlMs ?? 30_000;
    const now = options.now ?? Date.now;
    this.#source = source;
    this.#refreshAfterMs = ttlMs;
    // A known key is served up to STALE_FACTOR × ttl while its refresh is under way or
    // refused: a flood of made-up keys filling the lookup queue must not lock real
    // keys out every time their entry ages. Revocations do not wait for it: they are
    // pushed (the change feed drops the server's keys at once).
    this.#keys = new ExpiringLru({
      maxEntries: options.maxKeys ?? 10_000,
      ttlMs: ttlMs * STALE_FACTOR,
      now,
    });
    this.#unknown = new ExpiringLru({ maxEntries: options.maxUnknown ?? 10_000, ttlMs, now });
    this.#lookups = new ConcurrencyLimit({
      maxRunning: options.maxConcurrentLookups ?? 8,
      maxWaiting: options.maxWaitingLookups ?? 500,
      refusal: () =>
        new McphostError(
          'ERR_NO_CAPACITY',
          'too many API keys are being checked at once; retry shortly',
        ),
    });
    this.#stopListening = source.onChange((change) => this.#changed(change));
  }

  /**
   * The API key whose secret has this SHA-256 (hex), of any server, or
   * undefined. Rejects with the store's error (not kept), or ERR_NO_CAPACITY
   * when too many lookups are waiting.
   */
  find(secretHash: string): Promise<CredentialRecord | undefined> {
    const known = this.#keys.getWithAge(secretHash);
    if (known !== undefined) {
      // Past its time to live: answered as known while it is read again in the background.
      if (known.ageMs >= this.#refreshAfterMs) {
        this.#lookup(secretHash).catch(() => undefined);
      }
      return Promise.resolve(known.value);
    }
    if (this.#unknown.has(secretHash)) return Promise.resolve(undefined);
    return this.#lookup(secretHash);
  }

  /** The store lookup of a hash, shared with any other request for it under way. */
  #lookup(secretHash: string): Promise<CredentialRecord | undefined> {
    const shared = this.#inFlight.get(secretHash);
    if (shared !== undefined) return shared.promise;
    const lookup: Lookup = { promise: this.#load(secretHash) };
    this.#inFlight.set(secretHash, lookup);
    const settle = () => {
      if (this.#inFlight.get(secretHash) === lookup) this.#inFlight.delete(secretHash);
    };
    lookup.promise.then(settle, settle);
    return lookup.promise;
  }

  /** Stops following the store's changes. */
  close(): void {
    this.#stopListening();
  }

  async #load(secretHash: string): Promise<CredentialRecord | undefined> {
    const generation = this.#generation;
    const record = await this.#lookups.run(() => this.#source.findCredential('apikey', secretHash));
    if (generation === this.#generation) {
      if (record === undefined) {
        // Gone without a notification reaching us (a refresh found no row): forgotten.
        this.#keys.delete(secretHash);
        this.#unknown.set(secretHash, true);
      } else this.#keys.set(secretHash, record);
    }
    return record;
  }

  #changed(change: StoreChange): void {
    if (change.kind === 'resync' || (change.subdomain === null && isAboutKeys(change))) {
      this.#forget(() => true);
      this.#unknown.clear();
    } else if (isAboutKeys(change)) {
      this.#forget((record) => record.subdomain === change.subdomain);
    }
  }

  #forget(test: (record: CredentialRecord) => boolean): void {
    this.#generation += 1;
    this.#keys.deleteWhere(test);
    // Lookups under way may predate the change: later requests start their own.
    this.#inFlight.clear();
  }
}

/** A change that can add, revoke or delete a server's keys. */
function isAboutKeys(change: StoreChange): boolean {
  return change.kind === 'api-keys' || change.kind === 'server';
}
