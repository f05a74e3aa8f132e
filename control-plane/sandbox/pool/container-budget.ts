/**
 * The container budget every pool shares, divided fairly between servers. It
 * counts what containers commit (`commitment.ts`): their number (at most
 * `maxTotal`) and the sum of their memory limits (at most `maxMemoryMb`), so
 * a tenant whose tools ask for large containers gets fewer of them, and no
 * tenant can commit more memory than the host has.
 * - a server never holds more than its ceiling: a share of the budget, the
 *   admin's `maxContainers ÷ maxTotal`, else `serverShare`, of its containers
 *   and of its memory alike (but always one container, whatever its size); the
 *   ceiling is a cap, never a claim on more than an even share;
 * - a server's use of the budget is its dominant share (the larger of its
 *   share of the containers and its share of the memory), and its fair share
 *   is the budget divided by the servers holding containers, at most its
 *   ceiling;
 * - background refills use free budget only and never evict;
 * - a lease that finds the budget full may evict the least recently used idle
 *   containers of servers holding more than their fair share, or of the
 *   generic pool, until its container fits, and only when the requesting
 *   server is itself within its share — so one tenant's load cannot take
 *   another's last warm container.
 * It also keeps each server's recent starts and evictions for operators.
 */
import { commitmentOf, minus, NOTHING, plus, type Commitment } from './commitment.js';
import { EventWindow } from './event-window.js';
import type { ContainerShape } from './pool-key.js';
import type { PoolCaps } from './pool-settings.js';
import type { StartPurpose } from './start-queue.js';
import type { WarmPool } from './warm-pool.js';

/** One server's share of the budget and what it holds, as `serverStats()` reports it. */
export interface ServerPoolStats {
  server: string;
  containers: { warm: number; busy: number; warming: number; total: number };
  /** What its containers commit: memory limits in MiB, CPU shares in cores. */
  committed: { memoryMb: number; cpus: number };
  queued: number;
  pools: number;
  starts: { lastMinute: number; lastHour: number };
  evictions: { lastMinute: number; lastHour: number };
  /**
   * What the server keeps against evictions now (`fair`, in containers of the
   * budget; `fairMemoryMb`), the most it may hold (`ceiling`, `ceilingMemoryMb`),
   * and the admin's maximum (null: none).
   */
  share: {
    fair: number;
    ceiling: number;
    maxContainers: number | null;
    fairMemoryMb: number;
    ceilingMemoryMb: number;
  };
}

interface ServerAccount {
  maxContainers: number | null;
  starts: EventWindow;
  evictions: EventWindow;
}

/** One pass over the pools: what all of them commit, and each server. */
interface Tally {
  total: Commitment;
  of(server: string): Commitment;
  /** Servers holding containers or waiting for one. */
  active: Set<string>;
}

/** The budget; `pools` lists every pool, the generic one included, whenever asked. */
export class ContainerBudget {
  readonly maxTotal: number;
  readonly maxMemoryMb: number;
  readonly serverShare: number;
  readonly #pools: () => Iterable<WarmPool>;
  readonly #now: () => number;
  readonly #servers = new Map<string, ServerAccount>();

  constructor(caps: PoolCaps, pools: () => Iterable<WarmPool>, now: () => number) {
    this.maxTotal = caps.maxTotal;
    this.maxMemoryMb = caps.maxMemoryMb;
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

  /** What all pools' containers (starting, idle, busy) commit. */
  committed(): Commitment {
    return this.#tally().total;
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

  /** Most memory a server's containers may commit at once, in MiB (one container may exceed it). */
  memoryCeilingMb(server: string): number {
    return this.#ceilingShare(server) * this.maxMemoryMb;
  }

  /** True when `server` may hold one more container of `shape` (its ceiling; not the budget). */
  fitsCeiling(server: string, shape: ContainerShape): boolean {
    return this.#withinCeiling(server, this.#tally().of(server), commitmentOf(shape));
  }

  /** True when one more container may be created for `requester` (a demand may evict elsewhere). */
  reserve(requester: WarmPool, purpose: StartPurpose): boolean {
    const server = requester.server;
    const adding = commitmentOf(requester.shape);
    const tally = this.#tally();
    const fits = (freed: Commitment) => this.#fits(minus(tally.total, freed), adding);
    // At its ceiling a server may only trade its own idle containers (another shape or tool).
    if (server !== undefined && !this.#withinCeiling(server, tally.of(server), adding)) {
      if (purpose !== 'demand') return false;
      const held = tally.of(server);
      return this.#makeRoom(
        requester,
        (pool) => pool.server === server,
        (freed) => this.#withinCeiling(server, minus(held, freed), adding) && fits(freed),
      );
    }
    if (fits(NOTHING)) return true;
    // The budget is full. Refills wait for free budget; only a caller's lease may make room.
    if (purpose === 'refill' || server === undefined) return false;
    const held = tally.of(server);
    // A server already at its fair share takes from itself, never from others.
    if (
      held.containers > 0 &&
      this.#dominant(plus(held, adding)) > this.#fairShare(server, tally.active)
    ) {
      return this.#makeRoom(requester, (pool) => pool.server === server, fits);
    }
    return this.#makeRoom(
      requester,
      (pool, taken) =>
        pool.server === undefined ||
        this.#dominant(minus(tally.of(pool.server), taken)) >
          this.#fairShare(pool.server, tally.active),
      fits,
    );
  }

  /**
   * True when `pool` should give up a container it is about to re-lease to its
   * own queue: its server holds more than its fair share, and another server
   * within its share has callers no starting container covers and no room in
   * the budget for a container of its own.
   */
  shouldYield(pool: WarmPool): boolean {
    const server = pool.server;
    if (server === undefined) return false;
    const tally = this.#tally();
    if (this.#dominant(tally.of(server)) <= this.#fairShare(server, tally.active)) return false;
    for (const other of this.#pools()) {
      if (other.server === undefined || other.server === server) continue;
      // Yielding to a pool that would not start a container with the place only churns ours.
      if (!other.wouldGrow()) continue;
      const adding = commitmentOf(other.shape);
      if (this.#fits(tally.total, adding)) continue; // it has room without ours
      const held = tally.of(other.server);
      const withinShare =
        held.containers === 0 ||
        this.#dominant(plus(held, adding)) <= this.#fairShare(other.server, tally.active);
      if (withinShare && this.#withinCeiling(other.server, held, adding)) return true;
    }
    return false;
  }

  /** Orders pools so that those whose servers hold the least of their fair share come first. */
  mostDeprivedFirst(pools: WarmPool[]): WarmPool[] {
    const tally = this.#tally();
    const least = 1 / this.maxTotal;
    const used = (pool: WarmPool): number =>
      this.#dominant(tally.of(pool.server!)) /
      Math.max(least, this.#fairShare(pool.server!, tally.active));
    return pools
      .map((pool) => ({ pool, used: used(pool) }))
      .sort((a, b) => a.used - b.used)
      .map((entry) => entry.pool);
  }

  /**
   * Evicts the longest-idle containers among the pools `eligible` accepts
   * (other than `requester`'s) until `fits` holds; evicts nothing and answers
   * false when all of them would not be enough. `eligible` sees what this
   * round already takes from the pool's server.
   */
  #makeRoom(
    requester: WarmPool,
    eligible: (pool: WarmPool, taken: Commitment) => boolean,
    fits: (freed: Commitment) => boolean,
  ): boolean {
    const candidates: { pool: WarmPool; since: number }[] = [];
    for (const pool of this.#pools()) {
      if (pool === requester || pool.idle === 0) continue;
      for (const since of pool.idleSinceOldestFirst()) candidates.push({ pool, since });
    }
    candidates.sort((a, b) => a.since - b.since);
    const taken = new Map<string | undefined, Commitment>();
    const chosen: WarmPool[] = [];
    let freed = NOTHING;
    for (const { pool } of candidates) {
      if (fits(freed)) break;
      const before = taken.get(pool.server) ?? NOTHING;
      // Eligibility only shrinks as a server gives more: a pool's chosen are its oldest idle.
      if (!eligible(pool, before)) continue;
      const one = commitmentOf(pool.shape);
      taken.set(pool.server, plus(before, one));
      freed = plus(freed, one);
      chosen.push(pool);
    }
    if (!fits(freed)) return false;
    for (const pool of chosen) pool.evictOne();
    return true;
  }

  /** True when `adding` fits the budget beside `committed`. */
  #fits(committed: Commitment, adding: Commitment): boolean {
    return (
      committed.containers + adding.containers <= this.maxTotal &&
      committed.memoryMb + adding.memoryMb <= this.maxMemoryMb
    );
  }

  /** True when `server`, holding `held`, may hold `adding` more; a server holding nothing may always have one. */
  #withinCeiling(server: string, held: Commitment, adding: Commitment): boolean {
    const containers = held.containers + adding.containers;
    if (containers > this.ceiling(server)) return false;
    return held.containers === 0 || held.memoryMb + adding.memoryMb <= this.memoryCeilingMb(server);
  }

  /** The larger of the budget's shares that `commitment` takes: containers, or memory. */
  #dominant(commitment: Commitment): number {
    return Math.max(commitment.containers / this.maxTotal, commitment.memoryMb / this.maxMemoryMb);
  }

  /** The share of the budget a server's ceiling allows: its maximum's, else `serverShare`. */
  #ceilingShare(server: string): number {
    const maxContainers = this.#servers.get(server)?.maxContainers;
    return maxContainers != null ? Math.min(1, maxContainers / this.maxTotal) : this.serverShare;
  }

  /**
   * The budget divided between active servers, as a share of it, at most the
   * server's ceiling: an admin's `maxContainers` caps a server, it never
   * guarantees it more than others.
   */
  #fairShare(server: string, active: Set<string>): number {
    const even = 1 / (active.size + (active.has(server) ? 0 : 1));
    return Math.min(even, this.#ceilingShare(server));
  }

  #tally(): Tally {
    let total = NOTHING;
    const held = new Map<string, Commitment>();
    const active = new Set<string>();
    for (const pool of this.#pools()) {
      const commitment = commitmentOf(pool.shape, pool.total);
      total = plus(total, commitment);
      if (pool.server === undefined) continue;
      held.set(pool.server, plus(held.get(pool.server) ?? NOTHING, commitment));
      if (pool.total > 0 || pool.queued > 0) active.add(pool.server);
    }
    return { total, of: (server) => held.get(server) ?? NOTHING, active };
  }

  /** Per-server figures: containers by state, what they commit, recent starts and evictions, share of the budget. */
  serverStats(): ServerPoolStats[] {
    const active = this.activeServers();
    const byServer = new Map<string, ServerPoolStats>();
    const entryOf = (server: string): ServerPoolStats => {
      let entry = byServer.get(server);
      if (!entry) {
        const account = this.#account(server);
        const fair = this.#fairShare(server, active);
        entry = {
          server,
          containers: { warm: 0, busy: 0, warming: 0, total: 0 },
          committed: { memoryMb: 0, cpus: 0 },
          queued: 0,
          pools: 0,
          starts: account.starts.summary(),
          evictions: account.evictions.summary(),
          share: {
            fair: Math.round(fair * this.maxTotal * 100) / 100,
            ceiling: this.ceiling(server),
            maxContainers: account.maxContainers,
            fairMemoryMb: Math.floor(fair * this.maxMemoryMb),
            ceilingMemoryMb: Math.floor(this.memoryCeilingMb(server)),
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
      const commitment = commitmentOf(pool.shape, pool.total);
      entry.containers.warm += counts.warm;
      entry.containers.busy += counts.busy;
      entry.containers.warming += counts.warming;
      entry.containers.total += pool.total;
      entry.committed.memoryMb += commitment.memoryMb;
      entry.committed.cpus = Math.round((entry.committed.cpus + commitment.cpus) * 100) / 100;
      entry.queued += pool.queued;
      entry.pools += 1;
    }
    return [...byServer.values()].sort((a, b) => a.server.localeCompare(b.server));
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
