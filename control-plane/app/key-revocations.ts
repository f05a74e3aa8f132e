/**
 * Ends the streams of an API key that no longer admits anyone — revoked,
 * past its `expiresAt`, or deleted — on every replica: listen streams and
 * legacy sessions authenticate once, when they open, so nothing else would
 * end them (docs/accounts-and-keys.md, "Streams and sessions").
 *
 * The signal is the store's change feed, as for every other change: a key
 * created or revoked is announced (`api-keys`, here at once after the commit,
 * on the other replicas by NOTIFY), without naming the key. Then the server's
 * keys are read once and every stream or session of the server held here
 * whose key is not among the active ones is ended. A server no stream here
 * holds a key of costs nothing. After a lost change listener (`resync`),
 * every server is checked. A read that fails is tried again a while later;
 * changes arriving during a read make one more read after it.
 */
import { credentialStatus } from '../identity/index.js';
import type { ChangeAudience } from '../mcp/index.js';
import type { CredentialRecord, StoreChange } from '../store/index.js';

/** What KeyRevocations needs of the store. */
export interface KeyDirectory {
  onChange(listener: (change: StoreChange) => void): () => void;
  listCredentials(owner: { kind: 'apikey'; subdomain: string }): Promise<CredentialRecord[]>;
}

export interface KeyRevocationsOptions {
  /** Where keys are read and their changes heard (the store). */
  keys: KeyDirectory;
  /** What holds streams and sessions (the legacy sessions, the listen streams). */
  audiences: readonly ChangeAudience[];
  /** The servers configured now, for a `resync`. */
  subdomains(): Iterable<string>;
  /** Told of a read that failed (it is retried). */
  onError(error: unknown, what: string): void;
  /** Wait before a failed read is tried again, in ms; default 5000. */
  retryMs?: number;
  /** Milliseconds since the epoch (judges `expiresAt`); default Date.now. */
  now?: () => number;
}

export class KeyRevocations {
  readonly #options: KeyRevocationsOptions;
  readonly #retryMs: number;
  readonly #now: () => number;
  /** Servers being read now; a server in `#again` is read once more after. */
  readonly #reading = new Set<string>();
  readonly #again = new Set<string>();
  readonly #retries = new Map<string, NodeJS.Timeout>();
  #stop: (() => void) | undefined;

  constructor(options: KeyRevocationsOptions) {
    this.#options = options;
    this.#retryMs = options.retryMs ?? 5_000;
    this.#now = options.now ?? Date.now;
  }

  /** Starts following the store's changes. */
  start(): void {
    this.#stop = this.#options.keys.onChange((change) => this.#changed(change));
  }

  /** Stops following them (shutdown). */
  stop(): void {
    this.#stop?.();
    for (const timer of this.#retries.values()) clearTimeout(timer);
    this.#retries.clear();
  }

  #changed(change: StoreChange): void {
    if (change.kind === 'resync' || change.subdomain === null) {
      for (const subdomain of this.#options.subdomains()) this.#check(subdomain);
    } else if (change.kind === 'api-keys') {
      this.#check(change.subdomain);
    }
  }

  /** Streams and sessions of a server held here that were opened with an API key, with its id. */
  #holders(subdomain: string) {
    const holders = [];
    for (const audience of this.#options.audiences) {
      for (const listener of audience.forSubdomain(subdomain)) {
        const keyId = listener.credential?.keyId;
        if (keyId !== undefined) holders.push({ keyId, listener });
      }
    }
    return holders;
  }

  #check(subdomain: string): void {
    if (this.#reading.has(subdomain)) {
      // The read under way may predate this change.
      this.#again.add(subdomain);
      return;
    }
    if (this.#holders(subdomain).length === 0) return;
    clearTimeout(this.#retries.get(subdomain));
    this.#retries.delete(subdomain);
    this.#reading.add(subdomain);
    void this.#endRevoked(subdomain).finally(() => {
      this.#reading.delete(subdomain);
      if (this.#again.delete(subdomain)) this.#check(subdomain);
    });
  }

  async #endRevoked(subdomain: string): Promise<void> {
    let keys: CredentialRecord[];
    try {
      keys = await this.#options.keys.listCredentials({ kind: 'apikey', subdomain });
    } catch (error) {
      this.#options.onError(error, `checking the API keys of open streams of "${subdomain}"`);
      const timer = setTimeout(() => {
        this.#retries.delete(subdomain);
        this.#check(subdomain);
      }, this.#retryMs);
      timer.unref();
      this.#retries.set(subdomain, timer);
      return;
    }
    const now = new Date(this.#now());
    const active = new Set(
      keys.filter((key) => credentialStatus(key, now) === 'active').map((key) => key.id),
    );
    // Held now, not when the read began: a stream opened meanwhile is judged too.
    for (const { keyId, listener } of this.#holders(subdomain)) {
      if (!active.has(keyId)) listener.credentialRevoked?.();
    }
  }
}
