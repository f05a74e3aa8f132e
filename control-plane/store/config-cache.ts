/**
 * The hot path's view of configuration: every server with its tools,
 * prompts, resources and decrypted secrets, loaded into memory at `start()`
 * and read synchronously. Store changes (this process, or other replicas on
 * PostgreSQL) are applied in the background — one reload at a time,
 * coalescing changes that arrive meanwhile — and read again only what they
 * name: a saved tool is one row, whatever the size of its server's catalogue;
 * a server's settings, its secrets, or (after a lost change listener or a
 * restore) everything. A record that did not change stays the object it was,
 * so whatever was derived from it (a tool's listing) stays valid. Then
 * `onInvalidate` listeners hear of every server whose configuration actually
 * changed, so pools can retire containers of changed tools. Reads never reach
 * the store.
 */
import { isDeepStrictEqual } from 'node:util';
import type { StoreChange } from './change-feed.js';
import type { PromptRecord, ResourceRecord } from './entry-records.js';
import type { ServerRecord, ToolRecord } from './records.js';
import type { Store } from './store.js';
import { McphostError } from '../errors.js';
import { messageOf } from './store-dialect.js';

/** A server's definitions of one kind: by name, and in code-unit order of their names. */
export interface NamedRecords<T extends { readonly name: string }> {
  readonly byName: ReadonlyMap<string, T>;
  /**
   * Code-unit order, not the database's collation (ICU puts `a1` before `B1`,
   * SQLite and "C" do not): list cursors and "the first template by name"
   * must mean the same on every replica.
   */
  readonly ordered: readonly T[];
}

/** Everything cached about one server; replaced, never changed, when the server changes. */
export interface CachedServer {
  readonly server: ServerRecord;
  readonly tools: NamedRecords<ToolRecord>;
  readonly prompts: NamedRecords<PromptRecord>;
  /** Static resources and templates. */
  readonly resources: NamedRecords<ResourceRecord>;
  readonly secrets: Readonly<Record<string, string>>;
}

/** Options of ConfigCache. */
export interface ConfigCacheOptions {
  /** Receives reload failures; default: none. */
  log?: (message: string) => void;
  /** Wait before retrying a failed reload, in milliseconds; default 1000. */
  retryDelayMs?: number;
}

/** What must be read again of one server. */
interface ServerWork {
  /** Everything (a new server, a change that names nothing, a failed partial reload). */
  whole: boolean;
  settings: boolean;
  secrets: boolean;
  tools: Set<string>;
  prompts: Set<string>;
  resources: Set<string>;
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
  /** Servers waiting for a reload, with what to read again. */
  #pending = new Map<string, ServerWork>();
  /** Every server waits for a whole reload. */
  #pendingEverything = false;
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
    if (this.#hasPending()) this.#reloading ??= this.#drain();
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

  /** Everything cached about a server (the same object until it changes), or undefined. */
  cached(subdomain: string): CachedServer | undefined {
    return this.#servers.get(subdomain);
  }

  /** One tool, or undefined. */
  tool(subdomain: string, name: string): ToolRecord | undefined {
    return this.#servers.get(subdomain)?.tools.byName.get(name);
  }

  /** A server's tools ordered by name (empty for an unknown server); frozen, shared. */
  tools(subdomain: string): readonly ToolRecord[] {
    return this.#servers.get(subdomain)?.tools.ordered ?? [];
  }

  /** A server's prompts ordered by name (empty for an unknown server); frozen, shared. */
  prompts(subdomain: string): readonly PromptRecord[] {
    return this.#servers.get(subdomain)?.prompts.ordered ?? [];
  }

  /** One prompt, or undefined. */
  prompt(subdomain: string, name: string): PromptRecord | undefined {
    return this.#servers.get(subdomain)?.prompts.byName.get(name);
  }

  /** A server's resources, static and templates, ordered by name (empty for an unknown server). */
  resources(subdomain: string): ResourceRecord[] {
    return [...(this.#servers.get(subdomain)?.resources.ordered ?? [])];
  }

  /** One resource, or undefined. */
  resource(subdomain: string, name: string): ResourceRecord | undefined {
    return this.#servers.get(subdomain)?.resources.byName.get(name);
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
    if (this.#hasPending() && this.#lastFailure !== undefined) {
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
    if (change.subdomain === null) this.#pendingEverything = true;
    else recordChange(workOf(this.#pending, change.subdomain), change);
    if (this.#loaded) this.#reloading ??= this.#drain();
  }

  #hasPending(): boolean {
    return this.#pendingEverything || this.#pending.size > 0;
  }

  async #drain(): Promise<void> {
    try {
      while (this.#hasPending() && !this.#stopped) {
        const everything = this.#pendingEverything;
        const work = this.#pending;
        this.#pendingEverything = false;
        this.#pending = new Map();
        try {
          await (everything ? this.#reloadAll() : this.#reloadSome(work));
          this.#lastFailure = undefined;
        } catch (error) {
          const cause = error instanceof PartialReload ? error.cause : error;
          this.#lastFailure = cause;
          this.#log(`config cache: reload failed, retrying: ${messageOf(cause)}`);
          if (everything) this.#pendingEverything = true;
          else {
            const failed = error instanceof PartialReload ? error.failed : [...work.keys()];
            for (const subdomain of failed)
              mergeWork(this.#pending, subdomain, work.get(subdomain)!);
          }
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
      if (this.#hasPending() && !this.#stopped) this.#reloading ??= this.#drain();
    }, this.#retryDelayMs);
    this.#retryTimer.unref();
  }

  async #reloadAll(): Promise<void> {
    const loaded = await this.#loadAll();
    const next = new Map<string, CachedServer>();
    for (const [subdomain, entry] of loaded) {
      const current = this.#servers.get(subdomain);
      next.set(subdomain, current === undefined ? entry : keepUnchanged(current, entry));
    }
    const affected = new Set([...this.#servers.keys(), ...next.keys()]);
    const changed = [...affected].filter(
      (subdomain) => this.#servers.get(subdomain) !== next.get(subdomain),
    );
    this.#servers = next;
    this.#announce(changed);
  }

  async #reloadSome(work: ReadonlyMap<string, ServerWork>): Promise<void> {
    // Each server on its own: one that cannot load (a secret that will not
    // decrypt) must not hold the others back.
    const subdomains = [...work.keys()];
    const results = await Promise.allSettled(
      subdomains.map((subdomain) =>
        this.#refresh(subdomain, work.get(subdomain)!, this.#servers.get(subdomain)),
      ),
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
      if (next.get(subdomain) === entry) return;
      if (entry === undefined) next.delete(subdomain);
      else next.set(subdomain, entry);
      changed.push(subdomain);
    });
    this.#servers = next;
    this.#announce(changed);
    if (failed.length > 0) throw new PartialReload(failed, firstFailure);
  }

  /** The server after `work` is read again; `current` itself when nothing changed. */
  async #refresh(
    subdomain: string,
    work: ServerWork,
    current: CachedServer | undefined,
  ): Promise<CachedServer | undefined> {
    if (current === undefined || work.whole) return this.#reloadServer(subdomain, current);
    try {
      let server = current.server;
      if (work.settings) {
        const record = await this.#store.getServer(subdomain);
        if (record === undefined) return undefined;
        // Deleted and created again meanwhile: nothing of the old one may stay.
        if (record.id !== current.server.id) return this.#reloadServer(subdomain, undefined);
        server = isDeepStrictEqual(record, current.server) ? current.server : deepFreeze(record);
      }
      const [secrets, tools, prompts, resources] = await Promise.all([
        work.secrets ? this.#readSecrets(subdomain, current.secrets) : current.secrets,
        reloadNamed(current.tools, work.tools, (name) => this.#store.getTool(subdomain, name)),
        reloadNamed(current.prompts, work.prompts, (name) =>
          this.#store.getEntry('prompt', subdomain, name),
        ),
        reloadNamed(current.resources, work.resources, (name) =>
          this.#store.getEntry('resource', subdomain, name),
        ),
      ]);
      const next = { server, tools, prompts, resources, secrets };
      return (Object.keys(next) as (keyof CachedServer)[]).every(
        (key) => next[key] === current[key],
      )
        ? current
        : Object.freeze(next);
    } catch (error) {
      // The server went away between two reads: read what is there now (its deletion's own change follows).
      if ((error as { code?: string }).code === 'ERR_NOT_FOUND') {
        return this.#reloadServer(subdomain, current);
      }
      throw error;
    }
  }

  async #readSecrets(
    subdomain: string,
    current: Readonly<Record<string, string>>,
  ): Promise<Readonly<Record<string, string>>> {
    const secrets = await this.#store.readSecrets(subdomain);
    return isDeepStrictEqual(secrets, current) ? current : Object.freeze(secrets);
  }

  async #reloadServer(
    subdomain: string,
    current: CachedServer | undefined,
  ): Promise<CachedServer | undefined> {
    const loaded = await this.#loadServer(subdomain);
    return loaded === undefined || current === undefined ? loaded : keepUnchanged(current, loaded);
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
    return Object.freeze({
      server: deepFreeze(server),
      tools: named(new Map(tools.map((tool) => [tool.name, deepFreeze(tool)]))),
      prompts: named(new Map(prompts.map((prompt) => [prompt.name, deepFreeze(prompt)]))),
      resources: named(new Map(resources.map((resource) => [resource.name, deepFreeze(resource)]))),
      secrets: Object.freeze(secrets),
    });
  }
}

function workOf(pending: Map<string, ServerWork>, subdomain: string): ServerWork {
  let work = pending.get(subdomain);
  if (work === undefined) {
    work = {
      whole: false,
      settings: false,
      secrets: false,
      tools: new Set(),
      prompts: new Set(),
      resources: new Set(),
    };
    pending.set(subdomain, work);
  }
  return work;
}

function recordChange(work: ServerWork, change: StoreChange): void {
  switch (change.kind) {
    case 'server':
      work.settings = true;
      return;
    case 'secrets':
      work.secrets = true;
      return;
    case 'tools':
    case 'prompts':
    case 'resources':
      if (change.name === undefined) work.whole = true;
      else work[change.kind].add(change.name);
      return;
    default:
      work.whole = true;
  }
}

function mergeWork(pending: Map<string, ServerWork>, subdomain: string, failed: ServerWork): void {
  const work = workOf(pending, subdomain);
  work.whole ||= failed.whole;
  work.settings ||= failed.settings;
  work.secrets ||= failed.secrets;
  for (const kind of ['tools', 'prompts', 'resources'] as const) {
    for (const name of failed[kind]) work[kind].add(name);
  }
}

/** Records of one kind by name, frozen, with their code-unit order. */
function named<T extends { readonly name: string }>(byName: Map<string, T>): NamedRecords<T> {
  const ordered = [...byName.values()].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  return Object.freeze({ byName, ordered: Object.freeze(ordered) });
}

/** `current` with the records of `names` read again; `current` itself when none changed. */
async function reloadNamed<T extends { readonly name: string }>(
  current: NamedRecords<T>,
  names: ReadonlySet<string>,
  read: (name: string) => Promise<T | undefined>,
): Promise<NamedRecords<T>> {
  if (names.size === 0) return current;
  const reads = await Promise.all(
    [...names].map(async (name) => [name, await read(name)] as const),
  );
  let byName: Map<string, T> | undefined;
  for (const [name, record] of reads) {
    const old = current.byName.get(name);
    if (record === undefined ? old === undefined : isDeepStrictEqual(old, record)) continue;
    byName ??= new Map(current.byName);
    if (record === undefined) byName.delete(name);
    else byName.set(name, deepFreeze(record));
  }
  return byName === undefined ? current : named(byName);
}

/**
 * `loaded` with every part (and record) that equals `current`'s replaced by
 * `current`'s own object; `current` itself when nothing changed.
 */
function keepUnchanged(current: CachedServer, loaded: CachedServer): CachedServer {
  const kept = {
    server: isDeepStrictEqual(current.server, loaded.server) ? current.server : loaded.server,
    tools: keepRecords(current.tools, loaded.tools),
    prompts: keepRecords(current.prompts, loaded.prompts),
    resources: keepRecords(current.resources, loaded.resources),
    secrets: isDeepStrictEqual(current.secrets, loaded.secrets) ? current.secrets : loaded.secrets,
  };
  return (Object.keys(kept) as (keyof CachedServer)[]).every((key) => kept[key] === current[key])
    ? current
    : Object.freeze(kept);
}

function keepRecords<T extends { readonly name: string }>(
  current: NamedRecords<T>,
  loaded: NamedRecords<T>,
): NamedRecords<T> {
  let same = current.byName.size === loaded.byName.size;
  const byName = new Map<string, T>();
  for (const [name, record] of loaded.byName) {
    const old = current.byName.get(name);
    const keep = old !== undefined && isDeepStrictEqual(old, record);
    byName.set(name, keep ? old : record);
    same &&= keep;
  }
  return same ? current : named(byName);
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
