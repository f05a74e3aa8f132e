/**
 * The store's side of issue 28 findings 3 and 5, on SQLite and PostgreSQL:
 * a new MCP session is stored within its caller's and its server's quotas,
 * counted over every stored session (on PostgreSQL, over two stores standing
 * for two replicas, however their admissions race); the sessions replaced are
 * deleted with their events and signalled `evicted`. Stream events go with
 * their stream (`deleteMcpStream`), and answered streams are pruned at the
 * resume window.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpStreamEventRow, SessionSignal, Store } from '../../control-plane/store/index.js';
import { postgresTarget, sqliteTarget, type StoreTarget } from './store-targets.js';

const SECOND = 1000;

for (const makeTarget of [sqliteTarget, postgresTarget]) {
  const target: StoreTarget = makeTarget();
  const replicated = target.dialect === 'postgres';

  describe(`MCP session quotas in the store on ${target.dialect}`, () => {
    let clockMs = Date.UTC(2031, 0, 1);
    const now = () => new Date(clockMs);
    let store: Store;
    let other: Store;
    let counter = 0;

    const row = (subdomain: string, quotaKey: string, id = `s-${++counter}`) => ({
      id,
      subdomain,
      callerKey: `caller-${quotaKey}`,
      quotaKey,
      state: '{}',
    });
    const quotas = { perCaller: 3, perServer: 5, inUseMs: 30 * SECOND };

    async function idsOf(subdomain: string, quotaKey?: string): Promise<string[]> {
      const rows = await target.raw(
        quotaKey === undefined
          ? 'SELECT id FROM mcp_sessions WHERE subdomain = ? ORDER BY id'
          : 'SELECT id FROM mcp_sessions WHERE subdomain = ? AND quota_key = ? ORDER BY id',
        quotaKey === undefined ? [subdomain] : [subdomain, quotaKey],
      );
      return rows.map((each) => String(each.id));
    }

    function event(sessionId: string, streamId: string, seq: number, final = false) {
      return {
        sessionId,
        streamId,
        seq,
        message: seq === 0 ? '' : `{"seq":${seq}}`,
        final,
      } satisfies McpStreamEventRow;
    }

    beforeAll(async () => {
      await target.setup();
      store = await target.open({ now });
      other = replicated ? await target.open({ now }) : store;
    });
    afterAll(async () => {
      await store?.close();
      if (other !== store) await other?.close();
      await target.teardown();
    });

    it("replaces the caller's least recently used sessions past its quota, with their events", async () => {
      const made: string[] = [];
      for (let index = 0; index < 3; index += 1) {
        clockMs += SECOND;
        const each = row('alpha', 'a');
        made.push(each.id);
        expect(await store.admitMcpSession(each, quotas)).toEqual([]);
      }
      await store.appendMcpStreamEvents([event(made[1]!, 'x', 0)], false);
      // The first is used again: the second is now the least recently used.
      clockMs += SECOND;
      await store.touchMcpSessions([made[0]!]);
      clockMs += SECOND;
      const fourth = row('alpha', 'a');
      expect(await store.admitMcpSession(fourth, quotas)).toEqual([made[1]]);
      expect(await idsOf('alpha', 'a')).toEqual([made[0], made[2], fourth.id].sort());
      expect(await store.readMcpStreamEvents(made[1]!, 'x', -1, 10)).toEqual([]);
      // Another caller of the server is untouched.
      expect(await store.admitMcpSession(row('alpha', 'b'), quotas)).toEqual([]);
      expect(await idsOf('alpha')).toHaveLength(4);
    });

    it("at the server's quota, replaces the caller's own first, then others' not in use, else refuses", async () => {
      const server = 'beta';
      const first = row(server, 'old');
      await store.admitMcpSession(first, quotas);
      clockMs += 60 * SECOND;
      const recent = [row(server, 'b'), row(server, 'c'), row(server, 'd'), row(server, 'e')];
      for (const each of recent) await store.admitMcpSession(each, quotas);
      // Full (5): a newcomer replaces the one session not used for longer than inUseMs.
      clockMs += SECOND;
      const newcomer = row(server, 'f');
      expect(await store.admitMcpSession(newcomer, quotas)).toEqual([first.id]);
      // Full of sessions in use: a second newcomer is refused and changes nothing.
      const before = await idsOf(server);
      await expect(store.admitMcpSession(row(server, 'g'), quotas)).rejects.toMatchObject({
        code: 'ERR_SESSION_QUOTA',
      });
      expect(await idsOf(server)).toEqual(before);
      // A caller holding sessions there makes room with its own, however recent.
      const again = row(server, 'f');
      expect(await store.admitMcpSession(again, quotas)).toEqual([newcomer.id]);
    });

    it('holds both quotas however admissions race over the replicas', async () => {
      const server = 'gamma';
      const results = await Promise.allSettled(
        Array.from({ length: 40 }, (_, index) =>
          (index % 2 === 0 ? store : other).admitMcpSession(
            row(server, index < 30 ? 'flood' : `other-${index}`),
            quotas,
          ),
        ),
      );
      expect(results.filter((result) => result.status === 'fulfilled').length).toBeGreaterThan(0);
      for (const result of results) {
        if (result.status === 'rejected') {
          expect(result.reason).toMatchObject({ code: 'ERR_SESSION_QUOTA' });
        }
      }
      expect((await idsOf(server, 'flood')).length).toBeLessThanOrEqual(quotas.perCaller);
      expect((await idsOf(server)).length).toBeLessThanOrEqual(quotas.perServer);
    });

    it.runIf(replicated)('tells the other replicas which sessions were replaced', async () => {
      const signals: SessionSignal[] = [];
      const unsubscribe = other.onSessionSignal((signal) => signals.push(signal));
      try {
        const made = [row('delta', 'a'), row('delta', 'a'), row('delta', 'a')];
        for (const each of made) {
          clockMs += SECOND;
          await store.admitMcpSession(each, quotas);
        }
        clockMs += SECOND;
        await store.admitMcpSession(row('delta', 'a'), quotas);
        await expect.poll(() => signals).toContainEqual({ kind: 'evicted', session: made[0]!.id });
      } finally {
        unsubscribe();
      }
    });

    it('deletes one stream whole, and prunes answered streams at the window', async () => {
      const session = row('epsilon', 'a');
      await store.admitMcpSession(session, quotas);
      const id = session.id;
      await store.appendMcpStreamEvents(
        [event(id, 'gone', 0), event(id, 'gone', 1), event(id, 'kept', 0)],
        false,
      );
      expect(await store.deleteMcpStream(id, 'gone')).toBe(2);
      expect(await store.readMcpStreamEvents(id, 'gone', -1, 10)).toEqual([]);
      expect(await store.readMcpStreamEvents(id, 'kept', -1, 10)).toHaveLength(1);

      await store.appendMcpStreamEvents(
        [event(id, 'answered', 0), event(id, 'answered', 1, true)],
        false,
      );
      await store.appendMcpStreamEvents([event(id, 'running', 0)], false);
      clockMs += 61 * SECOND;
      // Past the window for answered streams; a running one waits for its call's longest time.
      expect(await store.pruneMcpStreamEvents(3600 * SECOND, 60 * SECOND)).toBe(2);
      expect(await store.readMcpStreamEvents(id, 'answered', -1, 10)).toEqual([]);
      expect(await store.readMcpStreamEvents(id, 'running', -1, 10)).toHaveLength(1);
      expect(await store.readMcpStreamEvents(id, 'kept', -1, 10)).toHaveLength(1);
      await expect(store.pruneMcpStreamEvents(0, -1)).rejects.toBeInstanceOf(TypeError);
    });
  });
}
