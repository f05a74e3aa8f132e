/**
 * One guarded undici Agent per hosted server (tenant), so connection slots to
 * an upstream are partitioned by server: a tool holding every slot of its own
 * agent to a slow origin makes only its own server's next request wait. Each
 * agent also carries that server's egress policy (EGRESS_ALLOW plus the
 * server's `egressAllow`). Agents are created on first use and closed once
 * idle, so the number open follows the servers making requests, not the
 * number of servers.
 */
import type { Agent } from 'undici';
import type { EgressPolicy } from '../egress/egress-policy.js';
import type { HostLookup } from '../egress/checked-resolver.js';
import { createGuardedAgent } from './guarded-agent.js';

/** Options of ServerAgents. */
export interface ServerAgentsOptions {
  /** The service-wide policy; each server's entries are added on top. */
  policy: EgressPolicy;
  lookup: HostLookup;
  /** Resolve + TCP/TLS handshake limit per connection, in ms. */
  connectTimeoutMs: number;
  /** Connections one server may hold open to one origin. */
  connectionsPerOrigin: number;
  /** An agent with no request in flight for this long is closed, in ms. */
  idleMs: number;
}

type Entry = { agent: Agent; inFlight: number; idleTimer: NodeJS.Timeout | undefined };

/** The per-server agents of one broker. */
export class ServerAgents {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly options: ServerAgentsOptions) {}

  /**
   * Runs `work` with `server`'s agent. A changed `egressAllow` gets a fresh
   * agent (its connections were checked under the old policy); the old one
   * closes when idle.
   */
  async use<T>(
    server: string,
    egressAllow: readonly string[],
    work: (agent: Agent) => Promise<T>,
  ): Promise<T> {
    const key = JSON.stringify([server, egressAllow]);
    let entry = this.entries.get(key);
    if (entry === undefined) {
      const agent = createGuardedAgent({
        policy: this.options.policy.forServer(server, egressAllow),
        lookup: this.options.lookup,
        connectTimeoutMs: this.options.connectTimeoutMs,
        connectionsPerOrigin: this.options.connectionsPerOrigin,
      });
      entry = { agent, inFlight: 0, idleTimer: undefined };
      this.entries.set(key, entry);
    }
    const current = entry;
    clearTimeout(current.idleTimer);
    current.inFlight++;
    try {
      return await work(current.agent);
    } finally {
      current.inFlight--;
      if (current.inFlight === 0) {
        current.idleTimer = setTimeout(() => this.retire(key, current), this.options.idleMs);
        current.idleTimer.unref();
      }
    }
  }

  /** Agents currently open, for tests and metrics. */
  get size(): number {
    return this.entries.size;
  }

  /** Closes every agent. */
  async close(): Promise<void> {
    const entries = [...this.entries.values()];
    this.entries.clear();
    for (const entry of entries) clearTimeout(entry.idleTimer);
    await Promise.all(entries.map((entry) => entry.agent.close()));
  }

  private retire(key: string, entry: Entry): void {
    if (entry.inFlight > 0 || this.entries.get(key) !== entry) return;
    this.entries.delete(key);
    entry.agent.close().catch(() => undefined);
  }
}
