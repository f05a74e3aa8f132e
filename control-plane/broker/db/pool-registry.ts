/**
 * One connection pool per server and set of connection parameters. Pools are
 * keyed by a hash of the server (tenant) and every connection parameter,
 * password included (never logged): a connection never crosses servers, nor
 * credentials. The number of pools is bounded so that pools × connections per
 * pool stays within the overall connection budget, and one server may hold at
 * most `maxPoolsPerServer` of them so that it cannot take the whole budget.
 * A new pool evicts the least recently used idle one (of the same server when
 * that server is at its share); pools idle for `idleMs` are closed.
 */
import { createHash } from 'node:crypto';
import { McphostError } from '../../errors.js';
import type { DbConnection } from '../../../src/protocol/index.js';
import type { DatabasePool } from './database-pool.js';

/** Options of PoolRegistry. */
export interface PoolRegistryOptions {
  /** Pools open at once; each holds up to its own connection limit. */
  maxPools: number;
  /** Pools one server may hold at once (≤ maxPools). */
  maxPoolsPerServer: number;
  /** An unused pool is closed after this many milliseconds. */
  idleMs: number;
  /** Opens the pool for a key the first time it is used (resolves and checks the host). */
  open: (type: 'pg' | 'mysql', connection: DbConnection) => Promise<DatabasePool>;
  /** Clock in milliseconds; injectable for tests. Default Date.now. */
  now?: () => number;
}

/** A pool held open for its user: it is not evicted until `release` is called (once). */
export interface PoolLease {
  pool: DatabasePool;
  release(): void;
}

type Entry = { server: string; pool: Promise<DatabasePool>; active: number; lastUsed: number };

/** Keyed, bounded, idle-closing collection of database pools. */
export class PoolRegistry {
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly options: PoolRegistryOptions) {
    if (!Number.isInteger(options.maxPools) || options.maxPools < 1)
      throw new TypeError('maxPools must be a positive integer');
    if (
      !Number.isInteger(options.maxPoolsPerServer) ||
      options.maxPoolsPerServer < 1 ||
      options.maxPoolsPerServer > options.maxPools
    )
      throw new TypeError('maxPoolsPerServer must be a positive integer ≤ maxPools');
    this.now = options.now ?? Date.now;
    this.sweeper = setInterval(
      () => void this.closeIdle(),
      Math.max(250, Math.min(options.idleMs, 5_000)),
    );
    this.sweeper.unref();
  }

  /** The pool of `server` for these parameters, created if needed, held until released. */
  async lease(server: string, type: 'pg' | 'mysql', connection: DbConnection): Promise<PoolLease> {
    if (this.closed)
      throw new McphostError('ERR_DB_FAILED', 'the database broker is shutting down');
    const key = poolKey(server, type, connection);
    // The lease is taken synchronously with the lookup so a concurrent eviction cannot close it.
    let entry = this.entries.get(key);
    if (entry === undefined) entry = await this.openEntry(key, server, type, connection);
    else entry.active += 1;
    entry.lastUsed = this.now();
    const held = entry;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      held.active -= 1;
      held.lastUsed = this.now();
    };
    try {
      return { pool: await held.pool, release };
    } catch (error) {
      release();
      throw error;
    }
  }

  /** Number of open pools, for tests and metrics. */
  get size(): number {
    return this.entries.size;
  }

  /** Open connections across every pool, for tests and metrics. */
  async openConnections(): Promise<number> {
    const pools = await Promise.allSettled([...this.entries.values()].map((entry) => entry.pool));
    return pools.reduce(
      (sum, settled) =>
        sum + (settled.status === 'fulfilled' ? settled.value.openConnections() : 0),
      0,
    );
  }

  /** Closes pools unused for `idleMs`. Runs on a timer; callable directly. */
  async closeIdle(): Promise<void> {
    const cutoff = this.now() - this.options.idleMs;
    const idle = [...this.entries].filter(
      ([, entry]) => entry.active === 0 && entry.lastUsed <= cutoff,
    );
    await Promise.all(idle.map(([key]) => this.evict(key)));
  }

  /** Closes every pool; later `lease` calls fail. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    await Promise.all([...this.entries.keys()].map((key) => this.evict(key)));
  }

  private async openEntry(
    key: string,
    server: string,
    type: 'pg' | 'mysql',
    connection: DbConnection,
  ): Promise<Entry> {
    // Evicting waits for a pool to close, and other callers run meanwhile: check
    // again after every wait (each round evicts one pool or throws).
    for (;;) {
      // Another caller may have opened it while we evicted.
      const existing = this.entries.get(key);
      if (existing !== undefined) {
        existing.active += 1;
        return existing;
      }
      const { maxPools, maxPoolsPerServer } = this.options;
      const own = [...this.entries.values()].filter((entry) => entry.server === server).length;
      const everyPoolBusy = `too many databases in use at once: all ${maxPools} connection pools are busy; try again shortly`;
      if (own >= maxPoolsPerServer) {
        await this.evictLeastRecentlyUsedIdle(
          server,
          maxPoolsPerServer === maxPools
            ? everyPoolBusy
            : `this server uses too many databases at once: all ${maxPoolsPerServer} of its connection pools are busy; try again shortly`,
        );
      } else if (this.entries.size >= maxPools) {
        await this.evictLeastRecentlyUsedIdle(undefined, everyPoolBusy);
      } else break;
    }
    const entry: Entry = {
      server,
      pool: this.options.open(type, connection),
      active: 1,
      lastUsed: this.now(),
    };
    this.entries.set(key, entry);
    entry.pool.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return entry;
  }

  /** Evicts the least recently used idle pool (of `server` when given), or throws `busy`. */
  private async evictLeastRecentlyUsedIdle(
    server: string | undefined,
    busy: string,
  ): Promise<void> {
    const idle = [...this.entries].filter(
      ([, entry]) => entry.active === 0 && (server === undefined || entry.server === server),
    );
    idle.sort(([, a], [, b]) => a.lastUsed - b.lastUsed);
    const oldest = idle[0];
    if (oldest === undefined) throw new McphostError('ERR_DB_FAILED', busy);
    await this.evict(oldest[0]);
  }

  private async evict(key: string): Promise<void> {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    const pool = await entry.pool.catch(() => undefined);
    await pool?.close().catch(() => undefined);
  }
}

/** Hash of the server and every connection parameter, the password included; never logged or returned. */
export function poolKey(server: string, type: 'pg' | 'mysql', connection: DbConnection): string {
  const parts = [
    server,
    type,
    connection.host.toLowerCase(),
    connection.port ?? null,
    connection.database,
    connection.user,
    connection.password ?? null,
  ];
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}
