/**
 * Keeps the running parts in step with configuration changes, whichever
 * replica made them: a tool saved or deleted retires the containers that
 * serve only it; a server deleted or whose sandbox settings (isolation,
 * runtime, limits) changed retires all of its
 * containers; a server deleted, deactivated, or whose security settings changed closes its
 * MCP sessions (an anonymous session must not outlive a switch to OAuth 2.0);
 * a changed tool or prompt list, or resource list, is announced to open
 * sessions and listen streams, and a changed resource to those subscribed to its URIs;
 * an API key revoked or deleted ends the sessions and streams it opened
 * (key-revocations.ts: API keys are not part of the cached configuration);
 * a pool resized on any replica is resized here; an admin token rotated
 * through another replica (or `npm run admin-token`) replaces this one.
 */
import type { AdminToken } from '../identity/index.js';
import { isMcphostError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { CachedServer, ConfigCache, NamedRecords, Store } from '../store/index.js';
import { contentBytes, type ResourceRecord, type ServerRecord } from '../store/index.js';
import { findResourceChanges, type ChangeAudience } from '../mcp/index.js';
import { poolUnitOf, type PoolSize } from '../sandbox/index.js';
import { KeyRevocations } from './key-revocations.js';

interface Seen {
  security: string;
  sandbox: string;
  /**
   * What the cache held: it replaces only the parts and records that
   * changed, so comparing objects tells what a change touched, in time that
   * does not grow with what stayed.
   */
  cached: CachedServer;
}

/** What ConfigSync tells the warm pools. */
export interface PoolInvalidation {
  /** A tool was saved or deleted. */
  toolChanged(server: string, tool: string): void;
  /** A server's sandbox settings changed, or it was deleted. */
  serverChanged(server: string, deleted?: boolean): void;
  /** A server's container maximum, as its settings say now. */
  setServerMaxContainers(server: string, maxContainers: number | null): void;
  /** A pool's size as saved in the store (throws ERR_VALIDATION when it does not fit the caps). */
  configurePool(unit: string, settings: PoolSize): unknown;
}

/** What ConfigSync follows in the store, and where it tells what failed. */
export interface StoreFollowing {
  store: Store;
  /** The admin token in force, re-read when the store's meta changes. */
  adminToken: Pick<AdminToken, 'refresh'>;
  log: Logger;
  /** A failed read of the API keys (it is retried). */
  onError(error: unknown, what: string): void;
}

export class ConfigSync {
  readonly #cache: ConfigCache;
  readonly #pools: PoolInvalidation;
  readonly #audiences: readonly ChangeAudience[];
  readonly #seen = new Map<string, Seen>();
  readonly #revocations: KeyRevocations;
  readonly #following: StoreFollowing;
  readonly #stops: (() => void)[] = [];

  /**
   * `audiences`: what hears a server's changes — the legacy era's sessions,
   * the modern era's listen streams and server instances. `following`: the
   * store (API keys, pool sizes, the admin token and their changes), and
   * where what failed is told.
   */
  constructor(
    cache: ConfigCache,
    pools: PoolInvalidation,
    audiences: readonly ChangeAudience[],
    following: StoreFollowing,
  ) {
    this.#cache = cache;
    this.#pools = pools;
    this.#audiences = audiences;
    this.#following = following;
    this.#revocations = new KeyRevocations({
      keys: following.store,
      audiences,
      subdomains: () => cache.servers().map((server) => server.subdomain),
      onError: following.onError,
    });
  }

  /**
   * Applies the saved pool sizes, records the current state and starts
   * following changes. Rejects when the pool sizes cannot be read.
   */
  async start(): Promise<void> {
    const { store, adminToken, log } = this.#following;
    this.#stops.push(
      store.onChange((change) => {
        if (change.kind !== 'meta' && change.kind !== 'resync') return;
        adminToken
          .refresh(store)
          .catch((error: unknown) => log.warn({ err: error }, 'admin token not re-read'));
      }),
    );
    // A rotation made while this replica was starting (a runner image build can take minutes).
    await adminToken
      .refresh(store)
      .catch((error: unknown) => log.warn({ err: error }, 'admin token not re-read'));
    await this.#applyPoolSettings();
    // A pool resized on any replica (PostgreSQL carries the change) is resized here too.
    this.#stops.push(
      store.onChange((change) => {
        if (change.kind !== 'pool' && change.kind !== 'resync') return;
        this.#applyPoolSettings().catch((error: unknown) =>
          log.warn({ err: error }, 'pool settings not applied'),
        );
      }),
    );
    this.#revocations.start();
    this.#stops.push(() => this.#revocations.stop());
    for (const server of this.#cache.servers()) {
      const cached = this.#cache.cached(server.subdomain);
      if (cached) this.#seen.set(server.subdomain, seen(cached));
      this.#pools.setServerMaxContainers(server.subdomain, server.maxContainers);
    }
    this.#cache.onInvalidate((subdomain) => this.#changed(subdomain));
  }

  /** Stops following the store. */
  stop(): void {
    for (const stop of this.#stops.splice(0)) stop();
  }

  /**
   * A size saved under other caps (another replica's derived POOL_MAX_TOTAL, a
   * lowered POOL_MAX_SIZE_CAP) must not stop the start or the other units:
   * that unit keeps its size.
   */
  async #applyPoolSettings(): Promise<void> {
    for (const settings of await this.#following.store.getPoolSettings()) {
      const unit = poolUnitOf(settings.subdomain, settings.tool);
      try {
        this.#pools.configurePool(unit, settings);
      } catch (error) {
        if (!isMcphostError(error) || error.code !== 'ERR_VALIDATION') throw error;
        this.#following.log.warn(
          { unit, reason: error.message },
          'saved pool size does not fit this control plane; the pool keeps its current size',
        );
      }
    }
  }

  #changed(subdomain: string): void {
    const before = this.#seen.get(subdomain);
    const cached = this.#cache.cached(subdomain);
    const after = cached ? seen(cached) : undefined;
    if (after) this.#seen.set(subdomain, after);
    else this.#seen.delete(subdomain);
    const server = cached?.server;

    if (before && (!after || before.sandbox !== after.sandbox)) {
      this.#pools.serverChanged(subdomain, !after);
    }
    if (server) this.#pools.setServerMaxContainers(subdomain, server.maxContainers);
    const tools = changedNames(before?.cached.tools, after?.cached.tools);
    for (const name of tools) {
      if (before?.cached.tools.byName.has(name)) this.#pools.toolChanged(subdomain, name);
    }
    if (!after || !server?.active || before?.security !== after.security) {
      for (const audience of this.#audiences) void audience.closeSubdomain(subdomain);
      return;
    }
    const sessions = this.#audiences.flatMap((audience) => [...audience.forSubdomain(subdomain)]);
    if (!before || tools.length > 0) {
      for (const session of sessions) session.notifyToolsChanged();
    }
    if (!before || changedNames(before.cached.prompts, after.cached.prompts).length > 0) {
      for (const session of sessions) session.notifyPromptsChanged();
    }
    const beforeResources = before?.cached.resources;
    const afterResources = after.cached.resources;
    if (beforeResources === afterResources) return;
    const resources = changedNames(beforeResources, afterResources);
    if (
      !beforeResources ||
      resources.some(
        (name) =>
          listedFields(beforeResources.byName.get(name)) !==
          listedFields(afterResources.byName.get(name)),
      )
    ) {
      for (const session of sessions) session.notifyResourcesChanged();
    }
    const changes = findResourceChanges(
      beforeResources?.byName ?? new Map(),
      afterResources.byName,
    );
    if (changes) for (const session of sessions) session.notifyResourcesUpdated(changes);
  }
}

function seen(cached: CachedServer): Seen {
  return {
    security: securityFingerprint(cached.server),
    sandbox: sandboxFingerprint(cached.server),
    cached,
  };
}

/** Names whose record is another object (saved, added or deleted); none when the kind is the same object. */
function changedNames<T extends { readonly name: string }>(
  before: NamedRecords<T> | undefined,
  after: NamedRecords<T> | undefined,
): string[] {
  if (before === after) return [];
  const names = new Set([...(before?.byName.keys() ?? []), ...(after?.byName.keys() ?? [])]);
  return [...names].filter((name) => before?.byName.get(name) !== after?.byName.get(name));
}

function securityFingerprint(server: ServerRecord): string {
  return JSON.stringify([
    server.active,
    server.securityMode,
    server.oauthMetadata?.issuer,
    server.oauthMetadata?.jwks_uri,
    server.oauthAudience,
    server.oauthRequiredScopes,
  ]);
}

function sandboxFingerprint(server: ServerRecord): string {
  return JSON.stringify([server.isolation, server.runtime, server.limits]);
}

/** The fields `resources/list` and `resources/templates/list` show: a change of these is a list change. */
function listedFields(r: ResourceRecord | undefined): string {
  return r === undefined
    ? ''
    : JSON.stringify([
        r.uri,
        r.uriTemplate,
        r.title,
        r.description,
        r.mimeType,
        r.annotations,
        contentBytes(r),
      ]);
}
