/**
 * Keeps the running parts in step with configuration changes, whichever
 * replica made them: a tool saved or deleted retires the containers that
 * serve only it; a server deleted or whose sandbox settings (isolation,
 * runtime, limits) changed retires all of its
 * containers; a server deleted, deactivated, or whose security settings changed closes its
 * MCP sessions (an anonymous session must not outlive a switch to OAuth 2.0);
 * a changed tool or prompt list, or resource list, is announced to open
 * sessions, and a changed resource to the sessions subscribed to its URIs.
 */
import type { ConfigCache } from '../store/index.js';
import { contentBytes, type ResourceRecord, type ServerRecord } from '../store/index.js';
import { findResourceChanges, type SessionRegistry } from '../mcp/index.js';

interface Seen {
  security: string;
  sandbox: string;
  tools: Map<string, number>;
  prompts: Map<string, number>;
  /** Resources as they were (to tell which subscribed URIs a change touched). */
  resources: ReadonlyMap<string, ResourceRecord>;
  /** What `resources/list` and `resources/templates/list` showed. */
  resourceList: string;
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
  readonly #sessions: SessionRegistry;
  readonly #seen = new Map<string, Seen>();

  constructor(cache: ConfigCache, pools: PoolInvalidation, sessions: SessionRegistry) {
    this.#cache = cache;
    this.#pools = pools;
    this.#sessions = sessions;
  }

  /** Records the current state and starts following changes. */
  start(): void {
    for (const server of this.#cache.servers()) {
      this.#seen.set(server.subdomain, this.#snapshot(server));
      this.#pools.setServerMaxContainers(server.subdomain, server.maxContainers);
    }
    this.#cache.onInvalidate((subdomain) => this.#changed(subdomain));
  }

  #snapshot(server: ServerRecord): Seen {
    const tools = new Map<string, number>();
    for (const tool of this.#cache.tools(server.subdomain)) tools.set(tool.name, tool.version);
    const prompts = new Map<string, number>();
    for (const prompt of this.#cache.prompts(server.subdomain)) {
      prompts.set(prompt.name, prompt.version);
    }
    const resourceRecords = this.#cache.resources(server.subdomain);
    return {
      security: securityFingerprint(server),
      sandbox: sandboxFingerprint(server),
      tools,
      prompts,
      resources: new Map(resourceRecords.map((resource) => [resource.name, resource])),
      resourceList: resourceListFingerprint(resourceRecords),
    };
  }

  #changed(subdomain: string): void {
    const before = this.#seen.get(subdomain);
    const server = this.#cache.server(subdomain);
    const after = server ? this.#snapshot(server) : undefined;
    if (after) this.#seen.set(subdomain, after);
    else this.#seen.delete(subdomain);

    if (before && (!after || before.sandbox !== after.sandbox)) {
      this.#pools.serverChanged(subdomain, !after);
    }
    if (server) this.#pools.setServerMaxContainers(subdomain, server.maxContainers);
    for (const [name, version] of before?.tools ?? []) {
      if (after?.tools.get(name) !== version) this.#pools.toolChanged(subdomain, name);
    }
    if (!after || !server?.active || before?.security !== after.security) {
      void this.#sessions.closeSubdomain(subdomain);
      return;
    }
    const sessions = this.#sessions.forSubdomain(subdomain);
    if (!sameVersions(before?.tools, after.tools)) {
      for (const session of sessions) session.notifyToolsChanged();
    }
    if (!sameVersions(before?.prompts, after.prompts)) {
      for (const session of sessions) session.notifyPromptsChanged();
    }
    if (before?.resourceList !== after.resourceList) {
      for (const session of sessions) session.notifyResourcesChanged();
    }
    const changes = findResourceChanges(before?.resources ?? new Map(), after.resources);
    if (changes) for (const session of sessions) session.notifyResourcesUpdated(changes);
  }
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

/** The listed fields of every resource and template: a change of these is a list change. */
function resourceListFingerprint(resources: readonly ResourceRecord[]): string {
  return JSON.stringify(
    resources.map((r) => [
      r.name,
      r.uri,
      r.uriTemplate,
      r.title,
      r.description,
      r.mimeType,
      r.annotations,
      contentBytes(r),
    ]),
  );
}

function sameVersions(a: Map<string, number> | undefined, b: Map<string, number>): boolean {
  if (!a || a.size !== b.size) return false;
  for (const [name, version] of a) if (b.get(name) !== version) return false;
  return true;
}
