import { describe, expect, it } from 'vitest';
import type { DatabasePool } from '../../control-plane/broker/db/database-pool.js';
import { PoolRegistry, type PoolLease } from '../../control-plane/broker/db/pool-registry.js';

/** A stand-in pool that records its lifecycle; the registry's logic is what is under test. */
function recordingOpener(): {
  opened: string[];
  closed: string[];
  open: (type: 'pg' | 'mysql', connection: { host: string }) => Promise<DatabasePool>;
} {
  const opened: string[] = [];
  const closed: string[] = [];
  return {
    opened,
    closed,
    open: async (_type, connection) => {
      opened.push(connection.host);
      if (connection.host === 'broken') throw new Error('cannot open');
      return {
        acquire: async () => {
          throw new Error('not used by these tests');
        },
        openConnections: () => 1,
        close: async () => void closed.push(connection.host),
      };
    },
  };
}

const connection = (
  host: string,
  password = 'pw',
): { host: string; database: string; user: string; password: string } => ({
  host,
  database: 'd',
  user: 'u',
  password,
});

/** Leases and releases at once: the pool is used and then idle. */
async function touch(
  registry: PoolRegistry,
  host: string,
  server = 'tenant-a',
  password?: string,
): Promise<void> {
  (await registry.lease(server, 'pg', connection(host, password))).release();
}

const options = (overrides: Partial<ConstructorParameters<typeof PoolRegistry>[0]> = {}) => {
  const opener = recordingOpener();
  return {
    opener,
    registry: new PoolRegistry({
      maxPools: 10,
      maxPoolsPerServer: overrides.maxPools ?? 10,
      idleMs: 60_000,
      open: opener.open,
      ...overrides,
    }),
  };
};

describe('PoolRegistry', () => {
  it('shares one pool per server and set of parameters, the password included', async () => {
    const { opener, registry } = options();
    await touch(registry, 'a');
    await touch(registry, 'a');
    await touch(registry, 'a', 'tenant-a', 'other');
    (await registry.lease('tenant-a', 'mysql', connection('a'))).release();
    // Same database and credentials, another server: never the same pool.
    await touch(registry, 'a', 'tenant-b');
    expect(opener.opened).toEqual(['a', 'a', 'a', 'a']);
    expect(registry.size).toBe(4);
    await registry.close();
    expect(opener.closed).toHaveLength(4);
  });

  it('evicts the least recently used idle pool when full, never a leased one', async () => {
    let clock = 0;
    const { opener, registry } = options({ maxPools: 2, maxPoolsPerServer: 2, now: () => clock });
    await touch(registry, 'a');
    clock = 1;
    await touch(registry, 'b');
    clock = 2;
    await touch(registry, 'a');
    clock = 3;
    await touch(registry, 'c');
    expect(opener.closed).toEqual(['b']);

    const leaseA = await registry.lease('tenant-a', 'pg', connection('a'));
    const leaseC = await registry.lease('tenant-a', 'pg', connection('c'));
    await expect(registry.lease('tenant-a', 'pg', connection('d'))).rejects.toMatchObject({
      code: 'ERR_DB_FAILED',
      message:
        'too many databases in use at once: all 2 connection pools are busy; try again shortly',
    });
    leaseC.release();
    leaseC.release(); // releasing twice counts once
    await touch(registry, 'd');
    expect(opener.closed).toEqual(['b', 'c']);
    leaseA.release();
    await registry.close();
  });

  it('keeps one server within its share, evicting its own idle pools first', async () => {
    let clock = 0;
    const { opener, registry } = options({ maxPools: 4, maxPoolsPerServer: 2, now: () => clock });
    await touch(registry, 'b1', 'tenant-b');
    const held: PoolLease[] = [];
    held.push(await registry.lease('tenant-a', 'pg', connection('a1')));
    held.push(await registry.lease('tenant-a', 'pg', connection('a2')));
    // Busy with its two pools, tenant-a gets no third one, though the budget has room.
    await expect(registry.lease('tenant-a', 'pg', connection('a3'))).rejects.toMatchObject({
      code: 'ERR_DB_FAILED',
      message:
        'this server uses too many databases at once: all 2 of its connection pools are busy; try again shortly',
    });
    // The other server still opens pools.
    await touch(registry, 'b2', 'tenant-b');
    clock = 1;
    held.shift()!.release();
    // At its share, tenant-a's new pool replaces its own idle one, not tenant-b's.
    held.push(await registry.lease('tenant-a', 'pg', connection('a3')));
    expect(opener.closed).toEqual(['a1']);
    for (const lease of held) lease.release();
    await registry.close();
  });

  it('closes pools idle for idleMs, keeps recent and leased ones', async () => {
    let clock = 0;
    const { opener, registry } = options({ maxPools: 5, idleMs: 1_000, now: () => clock });
    await touch(registry, 'old');
    clock = 900;
    await touch(registry, 'recent');
    const busy = await registry.lease('tenant-a', 'pg', connection('busy'));
    clock = 1_500;
    await registry.closeIdle();
    expect(opener.closed).toEqual(['old']);
    clock = 5_000;
    await registry.closeIdle();
    expect(opener.closed).toEqual(['old', 'recent']);
    busy.release();
    await registry.close();
  });

  it('forgets a pool that failed to open, so the next call tries again', async () => {
    const { opener, registry } = options({ maxPools: 5, maxPoolsPerServer: 5, idleMs: 1_000 });
    await expect(touch(registry, 'broken')).rejects.toThrow('cannot open');
    await expect(touch(registry, 'broken')).rejects.toThrow('cannot open');
    expect(opener.opened).toEqual(['broken', 'broken']);
    expect(registry.size).toBe(0);
    await registry.close();
    await expect(touch(registry, 'a')).rejects.toMatchObject({ code: 'ERR_DB_FAILED' });
  });
});
