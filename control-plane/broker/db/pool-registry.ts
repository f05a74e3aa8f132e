/**
 * One connection pool per set of connection parameters, shared by every
 * invocation that names the same database. Pools are keyed by a hash that
 * includes the password (two credentials never share connections) and that is
 * never logged. The number of pools is bounded so that pools × connections per
 * pool stays within the overall connection budget: a new pool evicts the least
 * recently used idle one, and pools idle for `idleMs` are closed.
 */
import { createHash } from 'node:crypto';
import { McphostError } from '../../errors.js';
import type { DbConnection } from '../../../src/protocol/index.js';
import type { DatabasePool } from './database-pool.js';

/** Options of PoolRegistry. */
export interface PoolRegistryOptions {
  /** Pools open at once; each holds up to its own connection limit. */
  maxPools: number;
  /** An unused pool is closed after this many milliseconds. */
  idleMs: number;
  /** Opens the pool for a key the first time it is used (resolves and checks the host). */
  open: (type: 'pg' | 'mysql', connection: DbConnection) => Promise<DatabasePool>;
  /** Clock in milliseconds; injectable for tests. Default Date.now. */
  now?: () => number;
}

type Entry = { pool: Promise<DatabasePool>; active: number; lastUsed: number };

/** Keyed, bounded, idle-closing collection of database pools. */
export class PoolRegistry {
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly options: PoolRegistryOptions) {
    if (!Number.isInteger(options.maxPools) || options.maxPools < 1)
      throw new TypeError('maxPools must be a positive integer');
    this.now = options.now ?? Date.now;
    this.sweeper = setInterval(
      () => void this.closeIdle(),
      Math.max(250, Math.min(options.idleMs, 5_000)),
    );
    this.sweeper.unref();
  }

  /** Runs `work` with the pool for these parameters, creating it if needed. */
  async use<T>(
    type: 'pg' | 'mysql',
    connection: DbConnection,
    work: (pool: DatabasePool) => Promise<T>,
  ): Promise<T> {
    if (this.closed)
      throw new McphostError('ERR_DB_FAILED', 'the database broker is shutting down');
    const key = poolKey(type, connection);
    // The lease is taken synchronously with the lookup so a concurrent eviction cannot close it.
    let entry = this.entries.get(key);
    if (entry === undefined) entry = await this.openEntry(key, type, connection);
    else entry.active += 1;
    entry.lastUsed = this.now();
    try {
      return await work(await entry.pool);
    } finally {
      entry.active -= 1;
      entry.lastUsed = this.now();
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

  /** Closes every pool; later `use` calls fail. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    await Promise.all([...this.entries.keys()].map((key) => this.evict(key)));
  }

  private async openEntry(
    key: string,
    type: 'pg' | 'mysql',
    connection: DbConnection,
  ): Promise<Entry> {
    // Evicting waits for a pool to close, and other callers run meanwhile: check
    // again after every wait, so concurrent new keys cannot overshoot maxPools.
    while (this.entries.size >= this.options.maxPools) {
      const before = this.entries.size;
      await this.evictLeastRecentlyUsedIdle();
      if (this.entries.size >= before && this.entries.size >= this.options.maxPools) break;
    }
    // Another caller may have opened it while we evicted.
    const existing = this.entries.get(key);
    if (existing !== undefined) {
      existing.active += 1;
      return existing;
    }
    const entry: Entry = {
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

  private async evictLeastRecentlyUsedIdle(): Promise<void> {
    const idle = [...this.entries].filter(([, entry]) => entry.active === 0);
    idle.sort(([, a], [, b]) => a.lastUsed - b.lastUsed);
    const oldest = idle[0];
    if (oldest === undefined) {
      throw new McphostError(
        'ERR_DB_FAILED',
        `too many databases in use at once: all ${this.options.maxPools} connection pools are busy; try again shortly`,
      );
    }
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

/** Hash of every connection parameter, the password included; never logged or returned. */
function poolKey(type: 'pg' | 'mysql', connection: DbConnection): string {
  const parts = [
    type,
    connection.host.toLowerCase(),
    connection.port ?? null,
    connection.database,
    connection.user,
    connection.password ?? null,
  ];
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}
