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
 * (key-revocations.ts: API keys are not part of the cached configuration).
 */
import type { CachedServer, ConfigCache, NamedRecords } from '../store/index.js';
import { contentBytes, type ResourceRecord, type ServerRecord } from '../store/index.js';
import { findResourceChanges, type ChangeAudience } from '../mcp/index.js';
import { KeyRevocations, type KeyDirectory } from './key-revocations.js';

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
}

export class ConfigSync {
  readonly #cache: ConfigCache;
  readonly #pools: PoolInvalidation;
  readonly #audiences: readonly ChangeAudience[];
  readonly #seen = new Map<string, Seen>();
  readonly #revocations: KeyRevocations;

  /**
   * `audiences`: what hears a server's changes — the legacy era's sessions,
   * the modern era's listen streams and server instances. `keys`: where API
   * keys and their changes are read (the store), and where a failed read is
   * told.
   */
  constructor(
    cache: ConfigCache,
    pools: PoolInvalidation,
    audiences: readonly ChangeAudience[],
    keys: { store: KeyDirectory; onError(error: unknown, what: string): void },
  ) {
    this.#cache = cache;
    this.#pools = pools;
    this.#audiences = audiences;
    this.#revocations = new KeyRevocations({
      keys: keys.store,
      audiences,
      subdomains: () => cache.servers().map((server) => server.subdomain),
      onError: keys.onError,
    });
  }

  /** Records the current state and starts following changes. */
  start(): void {
    this.#revocations.start();
    for (const server of this.#cache.servers()) {
      const cached = this.#cache.cached(server.subdomain);
      if (cached) this.#seen.set(server.subdomain, seen(cached));
      this.#pools.setServerMaxContainers(server.subdomain, server.maxContainers);
    }
    this.#cache.onInvalidate((subdomain) => this.#changed(subdomain));
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
