/**
 * The container budget every pool shares, divided fairly between servers:
 * - a server never holds more than its ceiling (an admin's `maxContainers`,
 *   else `serverShare` of the budget), so no tenant takes all of it; the
 *   ceiling is a cap, never a claim on more than an even share;
 * - background refills use free budget only and never evict;
 * - a lease that finds the budget full may evict the least recently used idle
 *   container of a server holding more than its fair share (the budget divided
 *   by the servers holding containers), or of the generic pool, and only when
 *   the requesting server is itself below its share — so one tenant's load
 *   cannot take another's last warm container.
 * It also keeps each server's recent starts and evictions for operators.
 */
import { EventWindow } from './event-window.js';
import type { PoolCaps } from './pool-settings.js';
import type { StartPurpose } from './start-queue.js';
import type { WarmPool } from './warm-pool.js';

/** One server's share of the budget and what it holds, as `serverStats()` reports it. */
export interface ServerPoolStats {
  server: string;
  containers: { warm: number; busy: number; warming: number; total: number };
  queued: number;
  pools: number;
  starts: { lastMinute: number; lastHour: number };
  evictions: { lastMinute: number; lastHour: number };
  /** What the server keeps against evictions now (at most its ceiling), its ceiling, and the admin's maximum (null: none). */
  share: { fair: number; ceiling: number; maxContainers: number | null };
}

interface ServerAccount {
  maxContainers: number | null;
  starts: EventWindow;
  evictions: EventWindow;
}

/** The budget; `pools` lists every pool, the generic one included, whenever asked. */
export class ContainerBudget {
  readonly maxTotal: number;
  readonly serverShare: number;
  readonly #pools: () => Iterable<WarmPool>;
  readonly #now: () => number;
  readonly #servers = new Map<string, ServerAccount>();

  constructor(caps: PoolCaps, pools: () => Iterable<WarmPool>, now: () => number) {
    this.maxTotal = caps.maxTotal;
    this.serverShare = caps.serverShare;
    if (!(this.serverShare > 0 && this.serverShare <= 1)) {
      throw new TypeError('SandboxManager: caps.serverShare must be in (0, 1]');
    }
    this.#pools = pools;
    this.#now = now;
  }

  /** Records the server's container maximum (null: none), as its settings say now. */
  setMaxContainers(server: string, maxContainers: number | null): void {
    this.#account(server).maxContainers = maxContainers;
  }

  /** Forgets a deleted server's figures. */
  forget(server: string): void {
    this.#servers.delete(server);
  }

  /** Counts a container start or eviction against its server (undefined: the generic pool). */
  record(server: string | undefined, event: 'start' | 'eviction'): void {
    if (server === undefined) return;
    const account = this.#account(server);
    (event === 'start' ? account.starts : account.evictions).add();
  }

  /** Containers in all pools (starting, idle, busy). */
  used(): number {
    let total = 0;
    for (const pool of this.#pools()) total += pool.total;
    return total;
  }

  /** Containers of one server, in all its pools. */
  held(server: string): number {
    let total = 0;
    for (const pool of this.#pools()) if (pool.server === server) total += pool.total;
    return total;
  }

  /** Servers holding containers or waiting for one. */
  activeServers(): Set<string> {
    return this.#tally().active;
  }

  /** Most containers a server may hold at once. */
  ceiling(server: string): number {
    const maxContainers = this.#servers.get(server)?.maxContainers;
    if (maxContainers != null) return Math.min(maxContainers, this.maxTotal);
    return Math.max(1, Math.floor(this.maxTotal * this.serverShare));
  }

  /** True when one more container may be created for `requester` (a demand may evict elsewhere). */
  reserve(requester: WarmPool, purpose: StartPurpose): boolean {
    const server = requester.server;
    const tally = this.#tally();
    const held = server === undefined ? 0 : tally.heldBy(server);
    // At its ceiling a server may only trade one of its own idle containers (another shape or tool).
    if (server !== undefined && held >= this.ceiling(server)) {
      return (
        purpose === 'demand' && this.#evictLeastRecent(requester, (pool) => pool.server === server)
      );
    }
    if (tally.used < this.maxTotal) return true;
    // The budget is full. Refills wait for free budget; only a caller's lease may make room.
    if (purpose === 'refill' || server === undefined) return false;
    // A server already at its fair share takes from itself, never from others.
    if (held + 1 > Math.max(1, this.#fairShare(server, tally.active))) {
      return this.#evictLeastRecent(requester, (pool) => pool.server === server);
    }
    return this.#evictLeastRecent(
      requester,
      (pool) =>
        pool.server === undefined ||
        tally.heldBy(pool.server) > this.#fairShare(pool.server, tally.active),
    );
  }

  /**
   * True when `pool` should give up a container it is about to re-lease to its
   * own queue: the budget is full, its server holds more than its fair share,
   * and another server within its share has callers no starting container covers.
   */
  shouldYield(pool: WarmPool): boolean {
    const server = pool.server;
    if (server === undefined) return false;
    const tally = this.#tally();
    if (tally.used < this.maxTotal) return false;
    if (tally.heldBy(server) <= this.#fairShare(server, tally.active)) return false;
    for (const other of this.#pools()) {
      if (other.server === undefined || other.server === server) continue;
      // Yielding to a pool that would not start a container with the place only churns ours.
      if (!other.wouldGrow()) continue;
      const share = Math.max(1, this.#fairShare(other.server, tally.active));
      if (tally.heldBy(other.server) + 1 <= share) return true;
    }
    return false;
  }

  /** Orders pools so that those whose servers hold the least of their fair share come first. */
  mostDeprivedFirst(pools: WarmPool[]): WarmPool[] {
    const tally = this.#tally();
    const used = (pool: WarmPool): number =>
      tally.heldBy(pool.server!) / Math.max(1, this.#fairShare(pool.server!, tally.active));
    return pools
      .map((pool) => ({ pool, used: used(pool) }))
      .sort((a, b) => a.used - b.used)
      .map((entry) => entry.pool);
  }

  /** Evicts the longest-idle container among the pools `eligible` accepts, other than `requester`'s. */
  #evictLeastRecent(requester: WarmPool, eligible: (pool: WarmPool) => boolean): boolean {
    let victim: WarmPool | undefined;
    let oldest = Infinity;
    for (const pool of this.#pools()) {
      if (pool === requester || pool.idle === 0 || !eligible(pool)) continue;
      const since = pool.oldestIdleSince();
      if (since !== undefined && since < oldest) [victim, oldest] = [pool, since];
    }
    return victim?.evictOne() ?? false;
  }

  /** One pass over the pools: containers in all, per server, and the active servers. */
  #tally(): { used: number; heldBy(server: string): number; active: Set<string> } {
    let used = 0;
    const held = new Map<string, number>();
    const active = new Set<string>();
    for (const pool of this.#pools()) {
      used += pool.total;
      if (pool.server === undefined) continue;
      held.set(pool.server, (held.get(pool.server) ?? 0) + pool.total);
      if (pool.total > 0 || pool.queued > 0) active.add(pool.server);
    }
    return { used, heldBy: (server) => held.get(server) ?? 0, active };
  }

  /** Per-server figures: containers by state, recent starts and evictions, share of the budget. */
  serverStats(): ServerPoolStats[] {
    const active = this.activeServers();
    const byServer = new Map<string, ServerPoolStats>();
    const entryOf = (server: string): ServerPoolStats => {
      let entry = byServer.get(server);
      if (!entry) {
        const account = this.#account(server);
        const ceiling = this.ceiling(server);
        entry = {
          server,
          containers: { warm: 0, busy: 0, warming: 0, total: 0 },
          queued: 0,
          pools: 0,
          starts: account.starts.summary(),
          evictions: account.evictions.summary(),
          share: {
            fair: Math.round(this.#fairShare(server, active) * 100) / 100,
            ceiling,
            maxContainers: account.maxContainers,
          },
        };
        byServer.set(server, entry);
      }
      return entry;
    };
    for (const server of this.#servers.keys()) entryOf(server);
    for (const pool of this.#pools()) {
      if (pool.server === undefined) continue;
      const entry = entryOf(pool.server);
      const counts = pool.counts();
      entry.containers.warm += counts.warm;
      entry.containers.busy += counts.busy;
      entry.containers.warming += counts.warming;
      entry.containers.total += pool.total;
      entry.queued += pool.queued;
      entry.pools += 1;
    }
    return [...byServer.values()].sort((a, b) => a.server.localeCompare(b.server));
  }

  /**
   * The budget divided between active servers, fractional, at most the
   * server's ceiling: an admin's `maxContainers` caps a server, it never
   * guarantees it more than others.
   */
  #fairShare(server: string, active: Set<string>): number {
    const even = this.maxTotal / (active.size + (active.has(server) ? 0 : 1));
    return Math.min(even, this.ceiling(server));
  }

  #account(server: string): ServerAccount {
    let account = this.#servers.get(server);
    if (!account) {
      account = {
        maxContainers: null,
        starts: new EventWindow(this.#now),
        evictions: new EventWindow(this.#now),
      };
      this.#servers.set(server, account);
    }
    return account;
  }
}
