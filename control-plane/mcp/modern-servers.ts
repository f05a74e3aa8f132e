/**
 * The modern-era SDK server of each hosted server, built on its first modern
 * request and kept: one instance and one connection (modern-transport.ts)
 * serve every modern request to that server. It is built again when what it
 * announces may have changed — the server's settings (a new record in the
 * configuration cache), or its prompt and resource lists (the capabilities
 * follow what the server has) — and an instance left behind finishes the
 * requests it is serving, then is collected.
 */
import type { Implementation, Server, ServerCapabilities } from '@modelcontextprotocol/server';
import type { ServerRecord } from '../store/index.js';
import type { ChangeListener } from './listen-streams.js';
import { ModernTransport } from './modern-transport.js';
import { MODERN_PROTOCOL_VERSION } from './hosted-mcp-server.js';

/** A hosted server's modern instance. */
export interface ModernInstance {
  readonly server: Server;
  readonly transport: ModernTransport;
  readonly info: Implementation;
  readonly capabilities: ServerCapabilities;
}

export interface ModernServersOptions {
  /** The server's settings now (the configuration cache); undefined: no such server. */
  record(subdomain: string): ServerRecord | undefined;
  /** Builds a server's modern SDK server, with its identity and capabilities. */
  build(subdomain: string): {
    server: Server;
    info: Implementation;
    capabilities: ServerCapabilities;
  };
  /** Silence on an open response before it becomes a stream with keep-alive comments, in ms. */
  keepAliveMs: number;
}

export class ModernServers {
  readonly #options: ModernServersOptions;
  readonly #instances = new Map<string, { record: ServerRecord; instance: ModernInstance }>();

  constructor(options: ModernServersOptions) {
    this.#options = options;
  }

  /** The instance serving `subdomain`'s modern requests; undefined for an unknown server. */
  async get(subdomain: string): Promise<ModernInstance | undefined> {
    const record = this.#options.record(subdomain);
    if (record === undefined) {
      this.#instances.delete(subdomain);
      return undefined;
    }
    const held = this.#instances.get(subdomain);
    if (held?.record === record) return held.instance;
    const { server, info, capabilities } = this.#options.build(subdomain);
    const transport = new ModernTransport({
      classification: { era: 'modern', revision: MODERN_PROTOCOL_VERSION },
      keepAliveMs: this.#options.keepAliveMs,
    });
    await server.connect(transport);
    const instance: ModernInstance = { server, transport, info, capabilities };
    this.#instances.set(subdomain, { record, instance });
    return instance;
  }

  /** Instances held now (for metrics and tests). */
  get size(): number {
    return this.#instances.size;
  }

  /** What hears a server's changes: any list change rebuilds its instance on the next request. */
  forSubdomain(subdomain: string): ChangeListener[] {
    const forget = () => this.#instances.delete(subdomain);
    return [
      {
        notifyToolsChanged: () => undefined,
        notifyPromptsChanged: forget,
        notifyResourcesChanged: forget,
        notifyResourcesUpdated: () => undefined,
      },
    ];
  }

  /** The server went away or its security changed: its instance is not used again. */
  closeSubdomain(subdomain: string): void {
    this.#instances.delete(subdomain);
  }
}
