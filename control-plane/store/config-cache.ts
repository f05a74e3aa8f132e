/**
 * The hot path's view of configuration: every server with its tools and
 * decrypted secrets, loaded into memory at `start()` and read synchronously.
 * Store changes (this process, or other replicas on PostgreSQL) reload the
 * affected server in the background — one reload at a time, coalescing
 * changes that arrive meanwhile — and then `onInvalidate` listeners hear of
 * every server whose configuration actually changed, so pools can retire
 * containers of changed tools. Reads never reach the store.
 */
import { isDeepStrictEqual } from 'node:util';
import type { StoreChange } from './change-feed.js';
import type { PromptRecord, ResourceRecord } from './entry-records.js';
import type { ServerRecord, ToolRecord } from './records.js';
import type { Store } from './store.js';
import { McphostError } from '../errors.js';
import { messageOf } from './store-dialect.js';

/** Everything cached about one server. */
export interface CachedServer {
  readonly server: ServerRecord;
  /** Tools by name. */
  readonly tools: ReadonlyMap<string, ToolRecord>;
  /** Prompts by name. */
  readonly prompts: ReadonlyMap<string, PromptRecord>;
  /** Resources (static and templates) by name. */
  readonly resources: ReadonlyMap<string, ResourceRecord>;
  readonly secrets: Readonly<Record<string, string>>;
}

/** Options of ConfigCache. */
export interface ConfigCacheOptions {
  /** Receives reload failures; default: none. */
  log?: (message: string) => void;
  /** Wait before retrying a failed reload, in milliseconds; default 1000. */
  retryDelayMs?: number;
}

/** Some servers of a reload failed; the others were applied. */
class PartialReload extends Error {
  constructor(
    readonly failed: string[],
    override readonly cause: unknown,
  ) {
    super(`${failed.length} server(s) could not be reloaded`);
  }
}

const EMPTY_SECRETS: Readonly<Record<string, string>> = Object.freeze(Object.create(null));

/** In-memory configuration of every server, kept current through `store.onChange`. */
export class ConfigCache {
  readonly #store: Store;
  readonly #log: (message: string) => void;
  readonly #retryDelayMs: number;
  #servers = new Map<string, CachedServer>();
  readonly #listeners = new Set<(subdomain: string) => void>();
  /** Subdomains waiting for a reload; `null` in it means all of them. */
  readonly #pending = new Set<string | null>();
  #reloading: Promise<void> | undefined;
  #unsubscribe: (() => void) | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #stopped = false;
  /** Why the last reload failed; cleared by the next success. */
  #lastFailure: unknown = undefined;
  #loaded = false;

  constructor(store: Store, options: ConfigCacheOptions = {}) {
    if (typeof store?.onChange !== 'function') throw new TypeError('ConfigCache needs a Store');
    const retryDelayMs = options.retryDelayMs ?? 1000;
    if (!Number.isFinite(retryDelayMs) || retryDelayMs < 0) {
      throw new TypeError('ConfigCache: retryDelayMs must be a non-negative number');
    }
    this.#store = store;
    this.#log = options.log ?? (() => undefined);
    this.#retryDelayMs = retryDelayMs;
  }

  /** Subscribes to changes, then loads everything; rejects (e.g. wrong MASTER_KEY) if the load fails. */
  async start(): Promise<void> {
    if (this.#unsubscribe !== undefined)
      throw new TypeError('ConfigCache.start() was already called');
    // Subscribe first so a change landing during the initial load is not missed.
    this.#unsubscribe = this.#store.onChange((change) => this.#onChange(change));
    this.#servers = await this.#loadAll();
    this.#loaded = true;
    // Changes that arrived during the load may or may not be in it: apply them again.
    if (this.#pending.size > 0) this.#reloading ??= this.#drain();
  }

  /** Stops following changes; cached values stay readable. */
  stop(): void {
    this.#stopped = true;
    this.#unsubscribe?.();
    clearTimeout(this.#retryTimer);
  }

  /** A server's record, or undefined. */
  server(subdomain: string): ServerRecord | undefined {
    return this.#servers.get(subdomain)?.server;
  }

  /** Every cached server. */
  servers(): ServerRecord[] {
    return [...this.#servers.values()]
      .map((entry) => entry.server)
      .sort((a, b) => (a.subdomain < b.subdomain ? -1 : 1));
  }

  /** One tool, or undefined. */
  tool(subdomain: string, name: string): ToolRecord | undefined {
    return this.#servers.get(subdomain)?.tools.get(name);
  }

  /** A server's tools ordered by name (empty for an unknown server). */
  tools(subdomain: string): ToolRecord[] {
    const entry = this.#servers.get(subdomain);
    return entry === undefined ? [] : [...entry.tools.values()];
  }

  /** A server's prompts ordered by name (empty for an unknown server). */
  prompts(subdomain: string): PromptRecord[] {
    const entry = this.#servers.get(subdomain);
    return entry === undefined ? [] : [...entry.prompts.values()];
  }

  /** One prompt, or undefined. */
  prompt(subdomain: string, name: string): PromptRecord | undefined {
    return this.#servers.get(subdomain)?.prompts.get(name);
  }

  /** A server's resources, static and templates, ordered by name (empty for an unknown server). */
  resources(subdomain: string): ResourceRecord[] {
    const entry = this.#servers.get(subdomain);
    return entry === undefined ? [] : [...entry.resources.values()];
  }

  /** One resource, or undefined. */
  resource(subdomain: string, name: string): ResourceRecord | undefined {
    return this.#servers.get(subdomain)?.resources.get(name);
  }

  /** A server's decrypted secrets (empty for an unknown server); frozen. */
  secrets(subdomain: string): Readonly<Record<string, string>> {
    return this.#servers.get(subdomain)?.secrets ?? EMPTY_SECRETS;
  }

  /** Calls `listener(subdomain)` after a server's cached configuration changed or went away. */
  onInvalidate(listener: (subdomain: string) => void): () => void {
    if (typeof listener !== 'function')
      throw new TypeError('onInvalidate needs a listener function');
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Resolves once every change received so far is applied; rejects with
   * ERR_NOT_YET_SERVED when a reload failed (it is retried), so a writer can
   * say the change is saved but not yet served (the cause, which may name the
   * database's host, stays in the log).
   */
  async settled(): Promise<void> {
    while (this.#reloading !== undefined) await this.#reloading;
    if (this.#pending.size > 0 && this.#lastFailure !== undefined) {
      throw new McphostError(
        'ERR_NOT_YET_SERVED',
        'saved, but this process could not load the new configuration yet (retrying; see the control plane log)',
        { cause: this.#lastFailure },
      );
    }
  }

  /**
   * Why the configuration cannot be loaded now (a reload failed and is being
   * retried: a secret that will not decrypt with this MASTER_KEY, a store that
   * does not answer), or undefined while what is served is current.
   */
  loadFailure(): unknown {
    // Cleared by a successful reload only: a retry in flight is still failing.
    return this.#lastFailure;
  }

  #onChange(change: StoreChange): void {
    // Pool sizes, meta entries and API keys are not part of what a server's cache holds.
    if (
      this.#stopped ||
      change.kind === 'pool' ||
      change.kind === 'meta' ||
      change.kind === 'api-keys'
    )
      return;
    this.#pending.add(change.subdomain);
    if (this.#loaded) this.#reloading ??= this.#drain();
  }

  async #drain(): Promise<void> {
    try {
      while (this.#pending.size > 0 && !this.#stopped) {
        const everything = this.#pending.has(null);
        const batch = everything ? null : [...this.#pending];
        this.#pending.clear();
        try {
          await (batch === null ? this.#reloadAll() : this.#reloadSome(batch as string[]));
          this.#lastFailure = undefined;
        } catch (error) {
          const failed = error instanceof PartialReload ? error.failed : (batch ?? [null]);
          const cause = error instanceof PartialReload ? error.cause : error;
          this.#lastFailure = cause;
          this.#log(`config cache: reload failed, retrying: ${messageOf(cause)}`);
          for (const subdomain of failed) this.#pending.add(subdomain);
          this.#retryLater();
          return;
        }
      }
    } finally {
      this.#reloading = undefined;
    }
  }

  #retryLater(): void {
    clearTimeout(this.#retryTimer);
    this.#retryTimer = setTimeout(() => {
      if (this.#pending.size > 0 && !this.#stopped) this.#reloading ??= this.#drain();
    }, this.#retryDelayMs);
    this.#retryTimer.unref();
  }

  async #reloadAll(): Promise<void> {
    const next = await this.#loadAll();
    const affected = new Set([...this.#servers.keys(), ...next.keys()]);
    const changed = [...affected].filter(
      (subdomain) => !sameEntry(this.#servers.get(subdomain), next.get(subdomain)),
    );
    this.#servers = next;
    this.#announce(changed);
  }

  async #reloadSome(subdomains: string[]): Promise<void> {
    // Each server on its own: one that cannot load (a secret that will not
    // decrypt) must not hold the others back.
    const results = await Promise.allSettled(
      subdomains.map((subdomain) => this.#loadServer(subdomain)),
    );
    const changed: string[] = [];
    const failed: string[] = [];
    let firstFailure: unknown;
    // Replace the map rather than mutate it, so a reader never sees half of a reload.
    const next = new Map(this.#servers);
    subdomains.forEach((subdomain, index) => {
      const result = results[index]!;
      if (result.status === 'rejected') {
        failed.push(subdomain);
        firstFailure ??= result.reason;
        return;
      }
      const entry = result.value;
      if (sameEntry(next.get(subdomain), entry)) return;
      if (entry === undefined) next.delete(subdomain);
      else next.set(subdomain, entry);
      changed.push(subdomain);
    });
    this.#servers = next;
    this.#announce(changed);
    if (failed.length > 0) throw new PartialReload(failed, firstFailure);
  }

  #announce(subdomains: string[]): void {
    for (const subdomain of subdomains) {
      for (const listener of [...this.#listeners]) {
        try {
          listener(subdomain);
        } catch (error) {
          this.#log(`config cache: an invalidation listener failed: ${messageOf(error)}`);
        }
      }
    }
  }

  async #loadAll(): Promise<Map<string, CachedServer>> {
    const servers = await this.#store.listServers();
    const entries = await Promise.all(servers.map((server) => this.#loadEntry(server)));
    return new Map(entries.map((entry) => [entry.server.subdomain, entry]));
  }

  async #loadServer(subdomain: string): Promise<CachedServer | undefined> {
    const server = await this.#store.getServer(subdomain);
    if (server === undefined) return undefined;
    try {
      return await this.#loadEntry(server);
    } catch (error) {
      // Deleted between the two reads: treat as gone; the deletion's own change follows.
      if ((error as { code?: string }).code === 'ERR_NOT_FOUND') return undefined;
      throw error;
    }
  }

  async #loadEntry(server: ServerRecord): Promise<CachedServer> {
    const [tools, prompts, resources, secrets] = await Promise.all([
      this.#store.listTools(server.subdomain),
      this.#store.listEntries('prompt', server.subdomain),
      this.#store.listEntries('resource', server.subdomain),
      this.#store.readSecrets(server.subdomain),
    ]);
    return deepFreeze({
      server,
      tools: byName(tools),
      prompts: byName(prompts),
      resources: byName(resources),
      secrets: Object.freeze(secrets),
    });
  }
}

/**
 * Records by name, in code-unit order: the database's `ORDER BY` follows its
 * collation (ICU puts `a1` before `B1`, SQLite and "C" do not), and list
 * cursors and "the first template by name" must mean the same everywhere.
 */
function byName<T extends { name: string }>(records: T[]): Map<string, T> {
  const sorted = [...records].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return new Map(sorted.map((record) => [record.name, deepFreeze(record)]));
}

function sameEntry(a: CachedServer | undefined, b: CachedServer | undefined): boolean {
  return isDeepStrictEqual(a, b);
}

// Cached records are shared by every request: freezing turns an accidental mutation into an error.
function deepFreeze<T>(value: T): T {
  if (
    value !== null &&
    typeof value === 'object' &&
    !(value instanceof Map) &&
    !Object.isFrozen(value)
  ) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
