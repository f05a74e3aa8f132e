import { describe, expect, it } from 'vitest';
import type { DatabasePool } from '../../control-plane/broker/db/database-pool.js';
import { PoolRegistry } from '../../control-plane/broker/db/pool-registry.js';

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
        run: async () => ({ rows: [], rowCount: 0 }),
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

describe('PoolRegistry', () => {
  it('shares one pool per set of parameters, the password included', async () => {
    const opener = recordingOpener();
    const registry = new PoolRegistry({ maxPools: 10, idleMs: 60_000, open: opener.open });
    await registry.use('pg', connection('a'), async () => undefined);
    await registry.use('pg', connection('a'), async () => undefined);
    await registry.use('pg', connection('a', 'other'), async () => undefined);
    await registry.use('mysql', connection('a'), async () => undefined);
    expect(opener.opened).toEqual(['a', 'a', 'a']);
    expect(registry.size).toBe(3);
    await registry.close();
    expect(opener.closed).toHaveLength(3);
  });

  it('evicts the least recently used idle pool when full, never a busy one', async () => {
    let clock = 0;
    const opener = recordingOpener();
    const registry = new PoolRegistry({
      maxPools: 2,
      idleMs: 60_000,
      open: opener.open,
      now: () => clock,
    });
    await registry.use('pg', connection('a'), async () => undefined);
    clock = 1;
    await registry.use('pg', connection('b'), async () => undefined);
    clock = 2;
    await registry.use('pg', connection('a'), async () => undefined);
    clock = 3;
    await registry.use('pg', connection('c'), async () => undefined);
    expect(opener.closed).toEqual(['b']);

    let release: () => void = () => undefined;
    const busyA = registry.use(
      'pg',
      connection('a'),
      () => new Promise<void>((resolve) => (release = resolve)),
    );
    const busyC = registry.use(
      'pg',
      connection('c'),
      () => new Promise<void>((resolve) => setTimeout(resolve, 50)),
    );
    await expect(registry.use('pg', connection('d'), async () => undefined)).rejects.toMatchObject({
      code: 'ERR_DB_FAILED',
      message:
        'too many databases in use at once: all 2 connection pools are busy; try again shortly',
    });
    await busyC;
    await registry.use('pg', connection('d'), async () => undefined);
    expect(opener.closed).toEqual(['b', 'c']);
    release();
    await busyA;
    await registry.close();
  });

  it('closes pools idle for idleMs, keeps recent and busy ones', async () => {
    let clock = 0;
    const opener = recordingOpener();
    const registry = new PoolRegistry({
      maxPools: 5,
      idleMs: 1_000,
      open: opener.open,
      now: () => clock,
    });
    await registry.use('pg', connection('old'), async () => undefined);
    clock = 900;
    await registry.use('pg', connection('recent'), async () => undefined);
    let release: () => void = () => undefined;
    const busy = registry.use(
      'pg',
      connection('busy'),
      () => new Promise<void>((resolve) => (release = resolve)),
    );
    clock = 1_500;
    await registry.closeIdle();
    expect(opener.closed).toEqual(['old']);
    clock = 5_000;
    await registry.closeIdle();
    expect(opener.closed).toEqual(['old', 'recent']);
    release();
    await busy;
    await registry.close();
  });

  it('forgets a pool that failed to open, so the next call tries again', async () => {
    const opener = recordingOpener();
    const registry = new PoolRegistry({ maxPools: 5, idleMs: 1_000, open: opener.open });
    await expect(registry.use('pg', connection('broken'), async () => undefined)).rejects.toThrow(
      'cannot open',
    );
    await expect(registry.use('pg', connection('broken'), async () => undefined)).rejects.toThrow(
      'cannot open',
    );
    expect(opener.opened).toEqual(['broken', 'broken']);
    expect(registry.size).toBe(0);
    await registry.close();
    await expect(registry.use('pg', connection('a'), async () => undefined)).rejects.toMatchObject({
      code: 'ERR_DB_FAILED',
    });
  });
});
